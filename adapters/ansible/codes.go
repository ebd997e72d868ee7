package ansible

import "github.com/hostforge/hostforge"

// Failures of Ansible tasks. A task that refers to an execution
// environment (ee) without a container runtime configured, or finds no
// ansible-playbook, fails with extensions.RunnerConfigInvalid; one that
// outlives its executionTimeout, with extensions.TaskTimeout.
var (
	// AssetUnavailable: the task's bundle could not be fetched.
	AssetUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_ANSIBLE_ASSET_UNAVAILABLE",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The Ansible task's bundle could not be fetched from the asset's url (the message gives the URL without its query and the error or HTTP status): check that the file exists and is reachable from this worker, then fire the event again.",
	})
	// AssetInvalid: the bundle is not what the definition says: its
	// digest differs from the asset's sha256, it is not a zip or tar.gz
	// archive (or a directory), it holds unsafe paths, or the task's
	// playbook is not in it.
	AssetInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_ANSIBLE_ASSET_INVALID",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The Ansible task's bundle is not usable (the message says why: its SHA-256 differs from the asset's sha256, it is not a zip or tar.gz archive, an entry escapes the bundle, or the playbook is missing from it). Publish a correct bundle, or fix the asset's url, sha256 or the task's playbook, then fire the event again.",
	})
	// AssetTooLarge: the bundle's download, or what its archive unpacks
	// to, is larger than the runner's cap.
	AssetTooLarge = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_ANSIBLE_ASSET_TOO_LARGE",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The Ansible task's bundle (its download, or the files its archive unpacks to) is larger than extensions.asset_max_bytes (the message gives the cap; default 512 MiB). Check that the asset's url names the bundle you mean; if the bundle really is that large, raise extensions.asset_max_bytes. Nothing was kept in the bundle cache. Then fire the event again.",
	})
	// PlaybookFailed: ansible-playbook exited with a non-zero status.
	PlaybookFailed = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_ANSIBLE_PLAYBOOK_FAILED",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "ansible-playbook exited with a non-zero status (the message gives it and the end of its output: 2 is a failed task, 4 an unreachable host, 1 an error such as a syntax error). Fix the playbook or what it acts on, then fire the event again; the delivery ID (hostforge_delivery_id) stays the same.",
	})
	// OutputsInvalid: the playbook wrote something other than a JSON
	// object at context_json_file_path.
	OutputsInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_ANSIBLE_OUTPUTS_INVALID",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The playbook succeeded but the file it wrote at context_json_file_path is not a JSON object of at most 1 MiB (the message says what it is). Fix the task that writes it (ansible.builtin.copy with content \"{{ outputs | to_json }}\"), then fire the event again. The stored outputs were left as they were.",
	})
)
