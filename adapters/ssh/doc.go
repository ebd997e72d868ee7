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
// by default (Config). A deadline that expires is reported as a
// *dhcp.RemoteError of kind timeout naming which deadline it was, so the
// phase's DHCP_SSH_TIMEOUT says "the command deadline (2m0s) expired during
// run systemctl restart isc-dhcp-server". The caller's context is honoured
// as well and ends everything at once.
//
// # Commands
//
// Hash runs `sha256sum -- 'path'`; Upload writes a temporary file
// ".<name>.hostforge-<random>.tmp" in the target directory over SFTP, sets
// mode 0644 and renames it over the target with the posix-rename extension
// (OpenSSH's atomic rename); Run runs a one-line command through the login
// user's shell. The user needs write access to the DHCP-owned directory and
// the right to run the configured service commands (prefix them with sudo in
// the site's dhcp.Config when needed).
package ssh
