package extensions

import "github.com/hostforge/hostforge"

// Phase is the phase extension failures are raised in.
const Phase = "extensions"

// Failure codes of extensions.
var (
	// DefinitionInvalid: a definition does not parse or validate; the
	// message lists every problem with its JSON path.
	DefinitionInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_DEFINITION_INVALID",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Fix the extension definition at each JSON path the message lists (run 'hostforge extensions validate FILE' to see them all), then load it again. The definition was not loaded.",
	})
	// PayloadInvalid: an event payload is not a JSON object.
	PayloadInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_PAYLOAD_INVALID",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Fix the event payload the message names: it must be a JSON object whose key is the stage's object (server, networkDevice, ...). Nothing was run.",
	})
	// EventInvalid: an event lacks an ID or names an unknown stage.
	EventInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_EVENT_INVALID",
		Phase:     "extensions",
		Owner:     hostforge.OwnerSDK,
		Retryable: false,
		Action:    "The event handed to extension dispatch has no ID or an unknown stage (the message says which): fix the caller that built it. Nothing was run.",
	})
	// TemplateFailed: a task's template did not render against the payload.
	TemplateFailed = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_TEMPLATE_FAILED",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The task's template failed on this payload (the message gives the line, column and expression): fix the template or the payload, check it with 'hostforge extensions render', then fire the event again.",
	})
	// TemplateBudget: a task's template built more strings and arrays than
	// its render budget, or ran past its render deadline.
	TemplateBudget = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_TEMPLATE_BUDGET",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The task's template needed more memory or time than a render may take (the message gives the line and column where it was stopped, and which limit): fix the template (a macro that calls itself, a loop or filter that multiplies a string or array), check it with 'hostforge extensions render', then fire the event again. Raise extensions.render_budget or extensions.render_timeout only for a payload that is really that large.",
	})
	// TemplateInvalidJSON: a webhook whose body is JSON (its Content-Type
	// says so, or, unset, the body starts with { or [) rendered to text
	// that is not JSON — a value left undefined, an unquoted string.
	TemplateInvalidJSON = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_TEMPLATE_INVALID_JSON",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The webhook's requestTemplate rendered a body that is not valid JSON (the message names the task and the offset where it breaks, often a value the payload lacks or a string not passed through dump): fix the template, check it with 'hostforge extensions render', then fire the event again. Nothing was sent.",
	})
	// RunnerMissing: no runner is configured for a task type.
	RunnerMissing = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_RUNNER_MISSING",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "No runner for this task type is configured in this process (the message names the type): configure it, or remove the task from the definition, then fire the event again.",
	})
	// TaskFailed: a runner failed without a failure code of its own.
	TaskFailed = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_TASK_FAILED",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The extension task failed (the message gives the runner's reason): check the system the task talks to, then fire the event again; the delivery ID stays the same, so receivers can deduplicate.",
	})
	// TaskInterrupted: an SSH or Ansible task's delivery was started and
	// did not finish — its worker was lost or restarted, or its answer was
	// lost — so whether its effect happened is unknown. Such a delivery is
	// never run again.
	TaskInterrupted = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_TASK_INTERRUPTED",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The task's command or playbook was started and did not finish (its worker was lost or restarted, or its answer was lost; the message names the delivery): it may have run, in part or whole. Check the target the task acts on, then fire the event again with --redeliver TASK ('hostforge extensions fire --event-id EVENT --redeliver TASK ...') to run it once more under a new delivery ID; a plain re-fire does not run it again.",
	})
	// DefinitionChanged: the definition a planned task came from was
	// replaced or removed before the task ran.
	DefinitionChanged = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_DEFINITION_CHANGED",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The extension was reloaded, changed or removed while the event was being dispatched: fire the event again to run the current definition.",
	})
	// StageDeadline: the stage deadline passed before the task could start.
	StageDeadline = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_STAGE_DEADLINE",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The event's stage deadline passed before this task could start (earlier tasks took the time): raise the stage deadline or shorten the tasks' timeouts, then fire the event again.",
	})
	// RegistryUnreadable: the definitions directory cannot be read.
	RegistryUnreadable = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_REGISTRY_UNREADABLE",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The extension definitions directory cannot be read (the message names it): check the path and its permissions, then reload.",
	})
	// RecordInvalid: an execution record handed to the store is incomplete.
	RecordInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_RECORD_INVALID",
		Phase:     "extensions",
		Owner:     hostforge.OwnerSDK,
		Retryable: false,
		Action:    "An extension execution record without a delivery ID, extension or status reached the store: this is a defect in the caller; file a bug. Nothing was written.",
	})
	// SecretUnavailable: a vault item a task names (signingSecret,
	// privateKeySecret) is missing, unreadable or unusable.
	SecretUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_SECRET_UNAVAILABLE",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The vault item the task names (signingSecret or privateKeySecret; the message says which and why) is missing, unreadable or not usable: create or fix the item in the vault the runner reads (--vault, or vault.path in the config), then fire the event again.",
	})
	// TaskTimeout: a task did not finish within its own timeout or the
	// event's stage deadline.
	TaskTimeout = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_TASK_TIMEOUT",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The task did not finish within its timeout (or the event's stage deadline; the message says which): check the system it talks to, or raise the task's timeout (timeout, executionTimeout), then fire the event again; the delivery ID stays the same.",
	})
	// RunnerConfigInvalid: the site's runner configuration a task needs is
	// missing or wrong (known_hosts, CA bundle, container runtime).
	RunnerConfigInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_RUNNER_CONFIG_INVALID",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The site's configuration for this task type is missing or wrong (the message names the key: extensions.known_hosts, extensions.ca_file, extensions.container_runtime, or the matching 'extensions fire' flag): fix it, then fire the event again.",
	})
	// SourceMissing: NetBox has no such device, or Ironic no such node or
	// no inspection inventory for it. Rerunning at once reads the same
	// answer, so it is not retried.
	SourceMissing = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_EVENT_SOURCE_MISSING",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The event's payload could not be built: NetBox has no such device, or Ironic no such node or no inspection inventory for it (the message says which). Fix the record (or inspect the node again), then fire the event again; its delivery IDs stay the same.",
	})
	// SourceUnavailable: what a hostforge event maps (a device's NetBox
	// intent, a node's inspection inventory) could not be read.
	SourceUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_EVENT_SOURCE_UNAVAILABLE",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The event's payload could not be built: NetBox or Ironic did not return the device or the node's inspection inventory (the message says which). Check that system; the dispatch retries, and a rerun of the enrollment fires the same event again.",
	})
)
