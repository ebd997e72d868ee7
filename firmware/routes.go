package firmware

import (
	"context"
	"time"
)

// The systems the update manager and the update workflow talk to, as
// small interfaces declared here. Part of them are implemented by real
// adapters (Ironic for Hosts, Redfish for BMCClient, the on-host agent's server
// for Scout, a process runner for ScriptRunner); firmwarefake holds fakes
// that behave like them.

// HostState is a managed host's allocation state.
type HostState string

// Host states. Only Ready and Assigned hosts are ever selected.
const (
	// HostReady: unassigned and allocatable.
	HostReady HostState = "ready"
	// HostAssigned: running a tenant's instance.
	HostAssigned HostState = "assigned"
	// HostOther: anything else (being provisioned, cleaned, failed).
	HostOther HostState = "other"
)

// Host is one managed host as the update manager sees it.
type Host struct {
	MachineID  string    `json:"machine_id"`
	State      HostState `json:"state"`
	InstanceID string    `json:"instance_id,omitempty"`
	// InMaintenance: in maintenance or another update workflow for a
	// reason other than this firmware update (a DPU reprovisioning, an
	// operator's maintenance). It consumes the update budget.
	InMaintenance bool `json:"in_maintenance,omitempty"`
	// Unhealthy: a health alert other than the firmware update's own.
	Unhealthy bool `json:"unhealthy,omitempty"`
	// UpdateReport: the host carries the firmware update health report
	// (it blocks allocation and suppresses alerting).
	UpdateReport bool `json:"update_report,omitempty"`
	// MNNVL: multi-node NVLink capable (GB200): subject to the manual
	// upgrade gate (requires_manual_upgrade); MNNVLFrom says where the
	// host's data says so (the Ironic adapter: its trait, capability or
	// property).
	MNNVL     bool   `json:"mnnvl,omitempty"`
	MNNVLFrom string `json:"mnnvl_from,omitempty"`
	// DisableLockdown: the host profile keeps platform lockdown off, so
	// restore does not turn it back on.
	DisableLockdown bool `json:"disable_lockdown,omitempty"`
}

// Hosts lists managed hosts and sets their update health report.
type Hosts interface {
	List(ctx context.Context) ([]Host, error)
	Get(ctx context.Context, machine string) (Host, bool, error)
	// SetUpdateReport adds the firmware update health report (idempotent).
	SetUpdateReport(ctx context.Context, machine, reason string) error
	// ClearUpdateReport removes it (idempotent).
	ClearUpdateReport(ctx context.Context, machine string) error
}

// ResetKind is a power or BMC action of an activation or pre-update reset.
type ResetKind string

// Reset kinds.
const (
	ResetForceOff     ResetKind = "ForceOff"
	ResetOn           ResetKind = "On"
	ResetForceRestart ResetKind = "ForceRestart"
	// ResetACPowerCycle removes AC power (a power drain).
	ResetACPowerCycle ResetKind = "ACPowerCycle"
	// ResetBMC resets the BMC itself (Manager.Reset).
	ResetBMC ResetKind = "BMCReset"
)

// UploadRequest is one artifact to push to a BMC.
type UploadRequest struct {
	Component ComponentType `json:"component"`
	Version   string        `json:"version"`
	Artifact  Artifact      `json:"artifact"`
	// Index and Count place the artifact in its entry's list.
	Index int `json:"index"`
	Count int `json:"count"`
	// InstallOnlySpecified targets the component only: Targets then
	// lists the Ids of the inventory members the component's matcher
	// found (the BMC updates those only). Without it the BMC decides what
	// the image updates.
	InstallOnlySpecified bool     `json:"install_only_specified,omitempty"`
	Targets              []string `json:"targets,omitempty"`
	// Path is the artifact as a local file, when the executor resolved it
	// (see ArtifactResolver); empty leaves resolving to the client.
	Path string `json:"path,omitempty"`
	// PushID is the push's write-ahead record (Push.ID), recorded before
	// this request is sent: a client may log it; fakes keep it, so that a
	// test can tell which attempt a push the BMC took belongs to.
	PushID string `json:"push_id,omitempty"`
}

// ArtifactResolver makes an artifact available as a local file: a URL is
// downloaded into a cache and verified by its sha256, a filename is
// checked to exist (and verified when the catalog gives its sha256).
// A missing file, a URL the server does not have or a digest that does
// not match is FIRMWARE_ARTIFACT_MISSING; a server that does not answer
// is a retryable failure or a plain error (transient).
type ArtifactResolver interface {
	Resolve(ctx context.Context, a Artifact) (path string, err error)
}

// Redfish task states.
const (
	TaskNew         = "New"
	TaskStarting    = "Starting"
	TaskRunning     = "Running"
	TaskPending     = "Pending"
	TaskCompleted   = "Completed"
	TaskException   = "Exception"
	TaskInterrupted = "Interrupted"
	TaskKilled      = "Killed"
	TaskCancelled   = "Cancelled"
)

// Task is a BMC update task as polled.
type Task struct {
	State    string   `json:"state"`
	Messages []string `json:"messages,omitempty"`
	// Gone: the BMC no longer knows the task (HTTP 404).
	Gone bool `json:"gone,omitempty"`
}

// TaskInfo is one task of the BMC's TaskService as listed: what the BMC
// records of it, read to tell whether a push whose answer was lost
// reached the BMC (see PushTask).
type TaskInfo struct {
	// ID is what Task takes (the task's resource path, or its Id).
	ID    string `json:"id"`
	State string `json:"state"`
	Name  string `json:"name,omitempty"`
	// Messages are the task's messages (Message, then its MessageArgs).
	Messages []string `json:"messages,omitempty"`
	// Update: the BMC records the task as a firmware update (its payload
	// targets the UpdateService, or its name or OEM job type says so);
	// resets, configuration jobs and exports are not.
	Update bool `json:"update,omitempty"`
	// Image is the file name of the image the task installs, where the
	// BMC records it (SimpleUpdate's ImageURI in the payload); empty when
	// it does not.
	Image string `json:"image,omitempty"`
	// Targets are the inventory member Ids the task's payload targets.
	Targets []string `json:"targets,omitempty"`
	// Start and End are the task's StartTime and EndTime on the BMC's
	// clock; zero when it reports none.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
}

// TaskList is the BMC's tasks at one reading, and the BMC's clock then.
type TaskList struct {
	Tasks []TaskInfo `json:"tasks,omitempty"`
	// Now is the BMC's clock when it answered (its HTTP Date); zero when
	// unknown.
	Now time.Time `json:"now,omitzero"`
}

// Power states of ResetStatus.
const (
	PowerOn  = "On"
	PowerOff = "Off"
)

// ResetStatus is what a BMC shows of the resets it performed: read
// before a reset is sent and again when its answer was lost, it tells
// whether the reset happened (see ResetHappened).
type ResetStatus struct {
	// Power is the system's PowerState (PowerOn, PowerOff; another value
	// or empty is a transition or unknown).
	Power string `json:"power,omitempty"`
	// SystemLastReset and ManagerLastReset are the ComputerSystem's and
	// the Manager's LastResetTime as the BMC writes them, compared as
	// they are (empty when the BMC reports none).
	SystemLastReset  string `json:"system_last_reset,omitempty"`
	ManagerLastReset string `json:"manager_last_reset,omitempty"`
}

// BMCClient is what the workflow needs of a host's BMC. Errors are failures
// (their Retryable says whether a later attempt can succeed) or plain
// errors, which count as transient.
type BMCClient interface {
	// Inventory reads the host's identity and firmware inventory, fresh.
	Inventory(ctx context.Context, machine string) (Inventory, error)
	// Upload pushes one artifact and returns the BMC's task.
	Upload(ctx context.Context, machine string, u UploadRequest) (taskID string, err error)
	// Task polls an update task.
	Task(ctx context.Context, machine, taskID string) (Task, error)
	// Tasks lists the BMC's tasks (the TaskService's Tasks collection);
	// a BMC without a TaskService has none. An implementation may read
	// only the newest members of a long collection (MaxTasksListed).
	Tasks(ctx context.Context, machine string) (TaskList, error)
	// ResetStatus reads the system's power state and the system's and the
	// BMC's last reset times.
	ResetStatus(ctx context.Context, machine string) (ResetStatus, error)
	// Reset performs one power or BMC action.
	Reset(ctx context.Context, machine string, kind ResetKind) error
	// Lockdown reads platform lockdown: LockdownEnabled or
	// LockdownDisabled, LockdownNone where the vendor has none hostforge
	// knows.
	Lockdown(ctx context.Context, machine string) (LockdownState, error)
	// SetLockdown turns platform lockdown on or off where the vendor has it.
	SetLockdown(ctx context.Context, machine string, enabled bool) error
}

// LockdownState is a host's platform lockdown as its BMC reports it.
type LockdownState string

// Lockdown states.
const (
	LockdownEnabled  LockdownState = "Enabled"
	LockdownDisabled LockdownState = "Disabled"
	// LockdownNone: the BMC has no platform lockdown hostforge knows (it
	// is never changed).
	LockdownNone LockdownState = "None"
)

// ScoutScript is a packaged upgrade script the on-host agent runs, with
// its metadata.
type ScoutScript struct {
	Path             string        `json:"path"`
	SHA256           string        `json:"sha256"`
	ExecutionTimeout time.Duration `json:"execution_timeout"`
	DownloadTimeout  time.Duration `json:"download_timeout"`
}

// ScoutScripts finds the packaged script of a vendor, model and component.
type ScoutScripts interface {
	Lookup(ctx context.Context, vendor, model string, c ComponentType) (ScoutScript, bool, error)
}

// ScoutTask is one upgrade task offered to the on-host agent.
type ScoutTask struct {
	ID        string        `json:"id"`
	MachineID string        `json:"machine_id"`
	Component ComponentType `json:"component"`
	Version   string        `json:"version"`
	Script    ScoutScript   `json:"script"`
	Artifacts []Artifact    `json:"artifacts"`
	Deadline  time.Time     `json:"deadline"`
}

// Scout offers tasks to the agent on a host. The agent's report comes
// back through ReportScout, which persists it.
type Scout interface {
	// Offer makes the task available to the machine's agent (idempotent
	// by task ID).
	Offer(ctx context.Context, t ScoutTask) error
}

// ScriptJob is one run of an entry's local script.
type ScriptJob struct {
	ID        string        `json:"id"`
	MachineID string        `json:"machine_id"`
	Script    string        `json:"script"`
	Component ComponentType `json:"component"`
	Version   string        `json:"version"`
	Timeout   time.Duration `json:"timeout"`
}

// ScriptOutcome is how a script run ended.
type ScriptOutcome struct {
	OK       bool   `json:"ok"`
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output,omitempty"`
}

// ScriptRunner runs an entry's script to its end or its timeout. The
// runner gives the script the BMC's address and credentials in its
// environment, never in its arguments or in the outcome.
type ScriptRunner interface {
	Run(ctx context.Context, job ScriptJob) (ScriptOutcome, error)
}
