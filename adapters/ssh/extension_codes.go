package ssh

import "github.com/hostforge/hostforge"

// Failures of extension SSH tasks (ExtensionRunner). A task without a
// credential or whose privateKeySecret cannot be read fails with
// extensions.SecretUnavailable; one whose command outlives its timeout,
// with extensions.TaskTimeout.
var (
	// SSHHostKey: the task's host presented a key the site's known_hosts
	// does not list for it.
	SSHHostKey = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_SSH_HOST_KEY",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The SSH task's host presented a host key that the site's known_hosts (extensions.known_hosts) does not list for its host:port, or lists as changed or revoked (the message says which). Confirm the key out of band, add its line to known_hosts (ssh-keyscan -p PORT HOST, checked), then fire the event again. Nothing was run.",
	})
	// SSHAuth: the task's host refused the login.
	SSHAuth = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_SSH_AUTH",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The SSH task's host refused the login: check the task's username, and its password or the key in the vault item its privateKeySecret names (the host's authorized_keys must list it), then fire the event again. Nothing was run.",
	})
	// SSHUnreachable: the task's host could not be reached or logged in to
	// in time, or the session broke.
	SSHUnreachable = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_SSH_UNREACHABLE",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The SSH task's host did not accept the connection, did not finish the login in time, or dropped the session (the message says which): check that sshd runs on the task's host and port and that the network path from this worker is open, then fire the event again.",
	})
	// SSHCommandFailed: the task's command exited with a non-zero status.
	SSHCommandFailed = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_SSH_COMMAND_FAILED",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The SSH task's command exited with a non-zero status (the message gives it, the command and the end of its output): fix the command template or the host it runs on, check it with 'hostforge extensions render', then fire the event again.",
	})
)
