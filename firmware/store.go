package firmware

import (
	"context"
	"time"
)

// Store is the update manager's and the update workflow's state: what
// must survive a worker restart. It is declared here, by its consumer;
// firmware/firmwarefake.MemStore and adapters/sqlstore implement it and
// pass the same contract suite (firmware/firmwaretest).
//
// Errors: a refused operation is a FIRMWARE_REQUEST_REFUSED failure (a
// patch of a request that does not exist, a clear after the start), a
// lost compare-and-set is FIRMWARE_STATE_CONFLICT, and an engine that does
// not answer is STATE_STORE_UNAVAILABLE. Lists are sorted by machine ID.
type Store interface {
	RequestStore
	UpdateStore
	PolicyStore
	ObservationStore
	OverrideStore
	ResultStore
	PushStore
	ScoutTaskStore
	SlotStore
	HistoryStore
	PassStore
}

// RequestStore holds host reprovisioning requests, one per machine.
type RequestStore interface {
	// CreateRequest stores r unless the machine already has a request;
	// created says which happened (an existing request is not changed).
	CreateRequest(ctx context.Context, r Request) (created bool, err error)
	// CreateRequests stores, in one transaction, each request whose
	// machine has none, and returns the machines whose requests it
	// created, in the order given (the update manager's pass).
	CreateRequests(ctx context.Context, rs []Request) (created []string, err error)
	Request(ctx context.Context, machine string) (Request, bool, error)
	Requests(ctx context.Context) ([]Request, error)
	// PatchRequest sets the patch's non-zero times on the machine's request
	// where they are still unset (the first write wins) and returns the
	// stored request. A machine without a request is refused.
	PatchRequest(ctx context.Context, machine string, p RequestPatch) (Request, error)
	// DeleteRequest removes the machine's request. With unstartedOnly, a
	// request whose update has started is refused and kept. deleted is
	// false when there was none.
	DeleteRequest(ctx context.Context, machine string, unstartedOnly bool) (deleted bool, err error)
	// Complete ends a machine's update in one transaction: h, when not
	// nil, is kept in the history (HistoryStore) with the machine's
	// results as they are then (h.Results is filled by the store); its
	// request, its update record, its results, its pushes and its agent
	// task are removed.
	Complete(ctx context.Context, machine string, h *UpdateHistory) error
}

// UpdateStore holds each machine's update record (the workflow's state).
type UpdateStore interface {
	Update(ctx context.Context, machine string) (HostUpdate, bool, error)
	Updates(ctx context.Context) ([]HostUpdate, error)
	// PutUpdate writes u if the stored record's revision is u.Revision
	// (0: no record yet) and returns it with the next revision; otherwise
	// FIRMWARE_STATE_CONFLICT and nothing changes.
	PutUpdate(ctx context.Context, u HostUpdate) (HostUpdate, error)
}

// PolicyStore holds per-machine policy: the autoupdate override and the
// explicit-start firmware update window.
type PolicyStore interface {
	// SetAutoUpdate sets the machine's override (nil clears it: the site
	// default applies again).
	SetAutoUpdate(ctx context.Context, machine string, enabled *bool) error
	AutoUpdates(ctx context.Context) (map[string]bool, error)
	SetWindow(ctx context.Context, w Window) error
	// DeleteWindow removes the machine's window; deleted is false when it
	// had none.
	DeleteWindow(ctx context.Context, machine string) (deleted bool, err error)
	Windows(ctx context.Context) (map[string]Window, error)
}

// ObservationStore holds the last reported versions of each machine: what
// the update manager compares with the catalog.
type ObservationStore interface {
	PutObserved(ctx context.Context, o Observed) error
	Observed(ctx context.Context, machine string) (Observed, bool, error)
	// AllObserved lists every observation. It is the update manager's
	// read of the whole fleet on every pass, so an implementation may
	// hand out shared Reported maps: callers treat them as read-only.
	AllObserved(ctx context.Context) ([]Observed, error)
}

// OverrideStore holds runtime catalog overrides (the last merge stage).
// An override is keyed by vendor family, lower-cased model, component and
// version.
type OverrideStore interface {
	// PutOverride upserts by vendor family, model, component and version.
	PutOverride(ctx context.Context, o Override) error
	DeleteOverride(ctx context.Context, vendor, model string, c ComponentType, version string) (deleted bool, err error)
	Overrides(ctx context.Context) ([]Override, error)
	// SwapOverride is the compare-and-set of an override: it writes next
	// (nil: removes the override) if the stored override of its key is
	// old — compared by UpdatedAt to the nanosecond; old nil means none is
	// stored. old and next, when both given, have the same key. Otherwise
	// FIRMWARE_STATE_CONFLICT and nothing changes.
	SwapOverride(ctx context.Context, old, next *Override) error
}

// SameOverrideKey reports whether a and b are the same override slot:
// vendor family, lower-cased model, component and version.
func SameOverrideKey(a, b Override) bool {
	return keyOf(a.Vendor, a.Model) == keyOf(b.Vendor, b.Model) && a.Component == b.Component && a.Entry.Version == b.Entry.Version
}

// ResultStore persists the outcome of uploads, scripts and on-host agent
// runs, so a restart never loses one.
type ResultStore interface {
	// PutResult stores r unless a result with its machine and ID exists;
	// it returns the stored result (the first write wins).
	PutResult(ctx context.Context, r Result) (Result, error)
	Result(ctx context.Context, machine, id string) (Result, bool, error)
}

// PushStore is the write-ahead record of firmware pushes: a push is
// recorded before it is sent, so that an attempt that finds it without a
// result asks the BMC whether it happened instead of pushing again.
type PushStore interface {
	// PutPush stores p unless the machine has a push with its ID; it
	// returns the stored push (the first write wins).
	PutPush(ctx context.Context, p Push) (Push, error)
	// Pushes lists the machine's pushes, in the order they were recorded
	// (At, then ID).
	Pushes(ctx context.Context, machine string) ([]Push, error)
}

// ScoutTaskStore keeps the task offered to each machine's on-host agent,
// so that the agent fetches it from any worker, and after a restart.
// Complete removes it with the machine's other state.
type ScoutTaskStore interface {
	// PutScoutTask stores t as the machine's task, replacing an earlier one.
	PutScoutTask(ctx context.Context, t ScoutTask) error
	// ScoutTask returns the machine's task.
	ScoutTask(ctx context.Context, machine string) (ScoutTask, bool, error)
}

// SlotStore is the site's upload slots (max_uploads), shared by every
// worker on the store. A slot is held until its upload has finished.
type SlotStore interface {
	// AcquireUploadSlot takes a slot for holder if fewer than max are held
	// (a holder that has one keeps it and its lease is renewed). A slot
	// whose lease lapsed is free again: a crashed worker does not leak it.
	AcquireUploadSlot(ctx context.Context, holder string, max int, now time.Time, lease time.Duration) (bool, error)
	ReleaseUploadSlot(ctx context.Context, holder string) error
	// UploadSlots counts the slots held at now.
	UploadSlots(ctx context.Context, now time.Time) (int, error)
}

// InitiatorAutomated is the initiator of the update manager's requests.
const InitiatorAutomated = "automated"

// Request is a host reprovisioning request: the reason a machine's update
// workflow runs.
type Request struct {
	MachineID string `json:"machine_id"`
	// Initiator is InitiatorAutomated, or who asked (an operator).
	Initiator string `json:"initiator"`
	// Message is the operator's update message (a ticket reference).
	Message   string    `json:"update_message,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// StartedAt is when the workflow passed its start gate; zero before.
	StartedAt time.Time `json:"started_at,omitzero"`
	// ApprovedAt is when the tenant approved updates on reboot (assigned
	// hosts).
	ApprovedAt time.Time `json:"approved_at,omitzero"`
	// ManualUpgradeCompletedAt is when an operator marked the manual
	// platform procedure complete.
	ManualUpgradeCompletedAt time.Time `json:"manual_upgrade_completed_at,omitzero"`
}

// Started reports whether the workflow passed its start gate.
func (r Request) Started() bool { return !r.StartedAt.IsZero() }

// RequestPatch sets times of a request; zero fields are left alone.
type RequestPatch struct {
	StartedAt                time.Time
	ApprovedAt               time.Time
	ManualUpgradeCompletedAt time.Time
}

// Window is a machine's firmware update window, for models that need an
// explicit start.
type Window struct {
	MachineID string    `json:"machine_id"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
}

// Contains reports whether t is strictly inside the window.
func (w Window) Contains(t time.Time) bool { return t.After(w.Start) && t.Before(w.End) }

// Observed is the last inventory reading of a machine, reduced to the
// reported versions map of its catalog model.
type Observed struct {
	MachineID string    `json:"machine_id"`
	Identity  Identity  `json:"identity"`
	Reported  Reported  `json:"reported"`
	At        time.Time `json:"at"`
}

// Override is one runtime catalog override: a version of one component
// of one model, upserted by version.
type Override struct {
	Vendor    string        `json:"vendor"`
	Model     string        `json:"model"`
	Component ComponentType `json:"component"`
	// Matcher is the component's current_version_reported_as; empty takes
	// the built-in matcher of the vendor, model and component (see
	// BuiltinMatcher), and is refused when there is none for a component
	// the catalog lacks.
	Matcher   string    `json:"matcher,omitempty"`
	Entry     Entry     `json:"entry"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Push is the record of one firmware push, written before the push is
// sent: what was pushed (the image, its digest, its target) and what the
// BMC showed just before, so that a later attempt can tell the push's
// task from the ones that were there already.
type Push struct {
	MachineID string `json:"machine_id"`
	// ID names the push's attempt (HostUpdate.AttemptID of an upload);
	// its result, when one was written, has the same ID.
	ID string `json:"id"`
	// Try is the update's try (HostUpdate.Try) the push belongs to.
	Try int `json:"try"`
	// The target: the component, its version, the artifact's index in
	// its entry, and the inventory members the push targets (only for
	// install_only_specified entries).
	Component ComponentType `json:"component"`
	Version   string        `json:"version"`
	Artifact  int           `json:"artifact"`
	Targets   []string      `json:"targets,omitempty"`
	// Image is the artifact's file name or URL; Digest its sha256 as the
	// catalog declares it (empty when it declares none).
	Image  string    `json:"image"`
	Digest string    `json:"digest,omitempty"`
	At     time.Time `json:"at"`
	// Listed says the BMC's tasks were read just before the push; Seen
	// are the tasks it listed then.
	Listed bool       `json:"listed,omitempty"`
	Seen   []SeenTask `json:"seen,omitempty"`
}

// SeenTask is a task a BMC listed before a push: its ID and start time.
type SeenTask struct {
	ID    string    `json:"id"`
	Start time.Time `json:"start,omitzero"`
}

// Result kinds.
const (
	ResultUpload = "upload"
	ResultScript = "script"
	ResultScout  = "scout"
)

// What showed a push whose answer was lost (Result.Evidence).
const (
	EvidenceTask      = "task"
	EvidenceStaged    = "staged"
	EvidenceInstalled = "installed"
)

// MaxOutput is how much of a script's or agent's output a result keeps.
const MaxOutput = 1500

// Result is the persisted outcome of one upload, script or on-host agent
// run of a machine.
type Result struct {
	MachineID string `json:"machine_id"`
	// ID names the attempt (see HostUpdate.AttemptID; an agent task's
	// result is named by its TaskID); unique per machine.
	ID   string `json:"id"`
	Kind string `json:"kind"`
	OK   bool   `json:"ok"`
	// TaskID is the BMC's task of an upload.
	TaskID string `json:"task_id,omitempty"`
	// Evidence says how an upload whose answer was lost was found to have
	// happened: EvidenceTask (its task on the BMC, TaskID), EvidenceStaged
	// (the image staged on the BMC) or EvidenceInstalled (the inventory
	// already reports the target). Empty for an upload that answered.
	Evidence string `json:"evidence,omitempty"`
	// Code classifies a failure (a failure code); empty on success.
	Code string `json:"code,omitempty"`
	// Output is the capped output or error text, never a secret.
	Output string    `json:"output,omitempty"`
	At     time.Time `json:"at"`
}

// capOutput keeps the first MaxOutput bytes of s, on a rune boundary.
func capOutput(s string) string {
	if len(s) <= MaxOutput {
		return s
	}
	cut := MaxOutput
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
