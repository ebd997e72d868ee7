package ssh

import "github.com/hostforge/hostforge"

// Failures the adapter raises itself, before any connection is made.
var (
	CredentialsInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_SSH_CREDENTIALS_INVALID",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The vault item ssh-config-dhcp is missing, or a field named in the message is missing or unreadable (private_key must be a PEM private key, known_hosts OpenSSH known_hosts lines). Fix the vault item, then rerun.",
	})
	VaultUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "DHCP_SSH_VAULT_UNAVAILABLE",
		Phase:     "configure_dhcp",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The vault did not return the item ssh-config-dhcp (unavailable or refused): check the vault's health and the worker's access to the item, then rerun.",
	})
)
