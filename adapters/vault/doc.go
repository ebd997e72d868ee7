// Package vault is the file vault: secrets kept as items of named fields in
// one YAML file, the implementation of the vault interfaces the phases
// declare (enrollment.Vault, bmc.Vault, ironic.Vault, ssh.Vault) that needs
// nothing but a file system.
//
//	bmc-factory: {username: root, password: calvin}
//	bmc-admin-cpu-r1-u10: {username: root, password: ..., pending_password: ...}
//	ssh-config-dhcp: {private_key: "-----BEGIN OPENSSH PRIVATE KEY-----...", known_hosts: "..."}
//
// # Several writers, no lost item
//
// The BMC phase writes the vault while it rotates a BMC's password: it
// stores the new password as pending before it sets it, and promotes it
// after. A rotated password that is lost locks the BMC, so a write never
// drops an item another process wrote. [File.PutItem]:
//
//  1. takes an exclusive flock(2) on a lock file beside the vault
//     (<path>.lock), waiting for it under the caller's context;
//  2. re-reads the vault file, so items other processes wrote since this one
//     last read it are kept, and sets the one item;
//  3. writes the result to a temporary file in the same directory (mode
//     0600), fsyncs it, renames it over the vault file, and fsyncs the
//     directory, so a crash leaves the old file or the new one, never half
//     of one, and a completed write survives a power loss;
//  4. releases the lock.
//
// Writers in one process or in many (a worker and a CLI run on one host)
// serialise on the lock; readers need no lock, because the file is only
// ever replaced whole by a rename. [File.Item] re-reads the file when it
// changed since the last read, so a reader sees what other processes wrote.
// A temporary file a crashed writer left behind is removed by the next
// write (it holds the lock, so no other write is in flight).
//
// The lock is advisory and local: every writer must be this package (or
// honour the same lock file), and the file must live on a local file
// system — flock over NFS is not reliable.
//
// # Permissions
//
// A vault file, and a token file read with [ReadSecretFile] (the NetBox
// token), that group or others can read is refused, naming the file and its
// mode: chmod 600 it. Errors never quote the file's content.
package vault
