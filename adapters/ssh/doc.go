// Package ssh is the DHCP phase's adapter to a real DHCP server host: a
// dhcp.Dialer over golang.org/x/crypto/ssh with file transfers over
// github.com/pkg/sftp.
//
// # Credentials
//
// Each Dial reads the vault item "ssh-config-dhcp" (Config.Item overrides
// the name). Its fields:
//
//	private_key   the client's private key, PEM (OpenSSH, PKCS#1, PKCS#8 or SEC 1)
//	known_hosts   OpenSSH known_hosts lines that list the DHCP server's host key
//	passphrase    optional: the private key's passphrase
//	user          optional: the login user, overriding Config.User
//
// The parsed key lives in the Client only, from Dial to Close; Close drops
// it, and the adapter keeps no copy between calls. The host key is always
// verified against known_hosts (golang.org/x/crypto/ssh/knownhosts, hashed
// host names and @revoked markers included): a changed key, or a server
// known_hosts has no line for, is refused as a host-key failure. There is
// no option to skip the check.
//
// # Deadlines
//
// Connecting (TCP), logging in (SSH handshake and authentication), each
// remote command and each SFTP transfer have their own deadline, 120 s each
// by default (Config). Nothing runs outside one: a command's deadline covers
// opening its SSH session, waiting for the server's lock and the lock's
// release; a transfer's covers starting the SFTP subsystem. A deadline that
// expires is reported as a *dhcp.RemoteError of kind timeout naming which
// deadline it was, so the phase's DHCP_SSH_TIMEOUT says "the command
// deadline (2m0s) expired during run systemctl restart isc-dhcp-server".
// Such an error matches hostforge.ErrUnavailable and never
// context.DeadlineExceeded: it is the server being slow, not the caller
// giving up. The caller's context is honoured as well and ends any
// operation with its own error (the phase's CANCELLED).
//
// An operation stopped by its deadline or its context is aborted: its
// command is sent SIGKILL and its session closed, or its SFTP client closed.
// A server that does not let the abort finish within 2 s has its connection
// closed, which ends every operation on it; the Client then refuses further
// work with transport failures. That is the case of a server that stalls
// after login or on session open, and of an OpenSSH sshd that refuses the
// signal ("session signalling requires privilege separation", as when the
// login user is root) while the command still runs. So a stalled server
// costs at most the deadline plus 2 s, never the TCP timeout, and a step
// whose effect is unknown ends with its connection, leaving the dhcp phase's
// backup for the next run rather than a rollback racing the aborted step.
//
// # Commands
//
// Hash runs one `sha256sum -- 'path'... 2>/dev/null` for all its files and
// reads each file's hash by name (a file it cannot read hashes as "", so
// the phase uploads). Upload writes a temporary file
// ".<name>.hostforge-<random>.tmp" in the target directory over SFTP,
// flushes it to disk — with the fsync@openssh.com extension (OpenSSH 6.5 and
// later), or with `sync -- 'tmp'` (coreutils 8.24 and later) on a server
// without it — sets mode 0644 and renames it over the target with the
// posix-rename extension (OpenSSH's atomic rename). Read and Remove are SFTP
// operations. Lock runs
//
//	if [ -d 'p' ]; then exec 9<'p'; else exec 9>>'p'; fi && flock -x -w N 9 && echo locked && exec cat >/dev/null
//
// (N: the command deadline in seconds, plus 5, so the client's deadline
// expires first and an abandoned wait still ends on the server) in a
// session whose input the Client keeps open: the flock(2) is held
// until the Client closes that input (unlock), or the session or the
// connection ends, so a worker that dies never leaves the server locked.
// The server needs util-linux's flock(1). Run runs a one-line command
// through the login user's shell. The user needs write access to the
// DHCP-owned directory and the right to run the configured service commands
// (prefix them with sudo in the site's dhcp.Config when needed).
package ssh
