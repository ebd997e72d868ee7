package dhcp

import "github.com/hostforge/hostforge"

// PhaseName is the workflow phase the DHCP failures are recorded against.
const PhaseName = "configure_dhcp"

// Failure codes of phase 1. Owners: NetBox data is INFRA_ENG's; the DHCP
// service hosts, their SSH access and the DHCP service are NETWORK's.
var (
	EntryInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_ENTRY_INVALID",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Fix the NetBox field named in the message (device name, BMC interface MAC, or out-of-band IPv4 address), then rerun. Nothing was uploaded.",
	})
	SettingsInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_SETTINGS_INVALID",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Fix the site's DHCP settings field named in the message (flavour, dir, or a service command), then rerun. Nothing was uploaded.",
	})
	AuthFailed = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_SSH_AUTH_FAILED",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: false,
		Action:    "The DHCP server refused the SSH key from the vault item ssh-config-dhcp: check that its public key is in the deploy user's authorized_keys on the DHCP server (and that the vault item holds the intended key), then rerun.",
	})
	HostKeyRejected = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_SSH_HOST_KEY_REJECTED",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: false,
		Action:    "The DHCP server's SSH host key is not the one known_hosts in the vault item ssh-config-dhcp lists for it (changed, or no entry). Confirm the server's fingerprint out of band (a reinstalled server, or someone in the middle); only then update known_hosts in the vault item, and rerun.",
	})
	Unreachable = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_SSH_UNREACHABLE",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: true,
		Action:    "The DHCP server could not be reached over SSH: check that it is up, that sshd listens on the configured address and port, and the network path from the worker; rerun once it answers.",
	})
	Timeout = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_SSH_TIMEOUT",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: true,
		Action:    "One of the DHCP adapter's deadlines expired (the message names which: connect, login, command or transfer). Check the DHCP server's load and the named command by hand; raise that deadline only if the server is healthy but slow, then rerun.",
	})
	Transport = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_SSH_TRANSPORT",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: true,
		Action:    "The SSH session to the DHCP server broke while a command ran; the command's effect is unknown. Check sshd and the network on the DHCP server, then rerun (every step is idempotent).",
	})
	TransferFailed = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_TRANSFER_FAILED",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: true,
		Action:    "A file transfer to or from the DHCP server failed (the message names the file): check that the DHCP-owned directory exists and is writable by the deploy user, that the sftp subsystem is enabled, and the disk is not full; then rerun. Each file is replaced atomically, and a change that did not finish keeps a backup of the host's last accepted file beside it (.<name>.hostforge-backup) that the rerun restores or completes.",
	})
	ConfigRejected = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_CONFIG_REJECTED",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: false,
		Action:    "The DHCP service's config test refused the configuration with this host's new file (its output is in the message): the host's previous file was restored (or the new one removed, for a new host) and the service was not restarted, so it still runs on the configuration it had. Fix the cause the output names (this host's NetBox data, e.g. an address another host reserves, another host's file, or the main config), then rerun.",
	})
	RestartFailed = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_RESTART_FAILED",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: true,
		Action:    "The DHCP service restart command failed after its config test passed. The host's previous file was restored (or, when that failed, the new file kept) and the service restarted on it; the message says whether that restart worked — if not, DHCP may be down on this server. Check the service's journal on the DHCP server (and bring it up if it is down), then rerun: the rerun uploads the new file again.",
	})
	ServiceInactive = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_SERVICE_INACTIVE",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: true,
		Action:    "The DHCP service was not running after its restart on the new file. The host's previous file was restored (or, when that failed, the new file kept) and the service restarted on it; the message says whether that worked — if not, DHCP may be down on this server. Check the service's journal on the DHCP server (and bring it up if it is down), then rerun: the rerun uploads the new file again.",
	})
	LockFailed = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_LOCK_FAILED",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerNetwork,
		Retryable: false,
		Action:    "The DHCP server's configuration lock could not be taken (the message says why): install flock (util-linux) on the DHCP server, or make the lock path (the site's DHCP dir, or its lock setting) exist and be readable by the deploy user; then rerun. Nothing was changed.",
	})
)
