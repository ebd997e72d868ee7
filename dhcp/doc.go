// Package dhcp is enrollment phase 1: it renders a host's DHCP reservation,
// uploads it to the DHCP server's configuration directory only when its
// content changed, and restarts and validates the service.
//
// # What one Configure call does
//
//  1. Validates the [Entry] (host name, BMC MAC, out-of-band IPv4) and the
//     site's [Config]. Bad input is refused with DHCP_ENTRY_INVALID or
//     DHCP_SETTINGS_INVALID before any connection is made.
//  2. Renders the reservation for the site's flavour: an ISC dhcpd host
//     stanza (<dir>/<hostname>.conf, [RenderISC]) or a Kea DHCPv4 reservation
//     object (<dir>/<hostname>.json, [RenderKea]). Rendering is deterministic
//     byte for byte, so equal inputs give equal hashes.
//  3. Opens a [Remote] with the [Dialer] and asks it, with one remote
//     command, for the SHA-256 of the remote file and of its backup
//     ([BackupPath]). When the file's hash equals the rendered file's and
//     there is no backup, the call returns Changed=false: no transfer, no
//     restart, no lock, no write.
//  4. Otherwise (different, absent, the hash command exited non-zero, or a
//     backup left by a change that did not finish) it changes the file as
//     one transaction, described next, and returns Changed=true.
//
// # One change, and its rollback
//
// The directory is prepared first (mkdir -p; a non-zero exit is logged and
// ignored, as the next step reports the real problem). Then, holding the
// server's lock (below):
//
//  1. The file and its backup are hashed again: another worker may have
//     made the same change while this one waited for the lock.
//  2. Backup: the host's current file (or the fact that it has none) is
//     written beside it as .<name>.hostforge-backup — unless a backup is
//     already there, left by a change that did not finish: that one holds
//     the file the service last accepted, and is kept.
//  3. The new file is uploaded: a temporary file in the same directory,
//     fsynced, then renamed over the host file, so the file is never
//     partial, even after a crash of the DHCP server.
//  4. The service's config test, restart and status commands run.
//  5. Commit: the backup is removed.
//
// When the config test refuses the configuration, the restart fails, the
// service is not running afterwards, or a step fails in the SSH session, the
// change is rolled back: the backup is put back over the host file (or the
// new file removed, for a host that had none) and, when the service may
// have loaded the new file, the restored configuration is tested and the
// service restarted on it — never onto a configuration its own test
// refuses. When the host's previous state cannot be put back (the backup
// cannot be read, or the restoring write fails), the configuration left on
// the server is tested and the service restarted on it the same way, so a
// failed restart never leaves DHCP down unannounced. The failure's message
// says what the rollback did and whether the service runs. Only the changing host's file is ever restored or removed: a
// valid file is never moved aside because another host's file is broken.
// The rollback runs even after the caller's context ended (each remote call
// is bounded by the Remote's own deadline), because an untested file left
// live is worse than a late return. When the rollback itself cannot run (the
// connection is gone), the backup stays, and the next Configure of that host
// restores or completes the change rather than trusting the matching hash.
//
// # The server's lock
//
// Steps 1-5 and the rollback hold an exclusive flock(2) on the server, on
// [Config].Lock (default: the host-file directory itself), through
// [Remote].Lock. Every worker — goroutines of one process, several
// processes, several machines — that changes this server takes the same
// lock, so a config test never sees another worker's untested file and two
// restarts never overlap. The lock is released when the session ends, so a
// worker that dies mid-change never leaves the server locked (its backup
// tells the next run what to restore). Waiting for the lock is bounded by
// the Remote's command deadline and by ctx; a wait that expires is a
// DHCP_SSH_TIMEOUT naming the lock. Within one process the Phase also
// serialises its own change sequences before they contend on the server. A
// site's own scripts that touch the directory or restart the service can
// take the same lock: "flock /etc/dhcp/hostforge.d systemctl restart
// isc-dhcp-server".
//
// One Configure makes at most [MaxRemoteOperations] remote operations
// (connect, login, commands, transfers, lock), each under its own deadline:
// an attempt's bound is that many times the longest deadline.
//
// # Failures
//
// SSH authentication, host-key, connectivity, timeout (naming which of the
// Remote's deadlines expired), command-transport, transfer and lock failures
// stop the call with a classified [hostforge.Failure] whose owner and action say
// who fixes what; see the DHCP_* codes in docs/failure-codes.md. A Remote
// reports them as a [*RemoteError] of the matching [Kind] (or wraps
// [ErrHostKey], hostforge.ErrUnauthorized or hostforge.ErrUnavailable).
//
// # The remote side
//
// The service must include the files this package writes. For ISC dhcpd the
// main dhcpd.conf has one include line per host file (ISC has no directory
// include), typically regenerated by the site's config test command; for Kea
// the files are JSON objects for a "reservations" list, each included with
// <?include "path"?>. The integration test (adapters/ssh, build tag
// integration) checks every golden file with the real `dhcpd -t -cf` and
// `kea-dhcp4 -t`.
package dhcp
