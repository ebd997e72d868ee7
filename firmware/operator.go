package firmware

import (
	"context"
	"strings"
	"time"

	"github.com/hostforge/hostforge/clock"
)

// Operator is the operator's (and tenant's) side of the update manager:
// direct requests, their clear before the start, the manual upgrade gate,
// reset to checking, per-machine policy, windows and approval. Every
// refusal is FIRMWARE_REQUEST_REFUSED and changes nothing.
type Operator struct {
	Store Store
	Hosts Hosts
	Clock clock.Clock
	// Settings are the site's (for the retry budget in Status).
	Settings Settings
	// Catalog is the catalog of files, which runtime overrides are checked
	// against before they are written; CheckCatalog, when set, refuses an
	// effective catalog that cannot work on the site.
	Catalog      CatalogSource
	CheckCatalog func(*Catalog) error
}

func (o *Operator) known(ctx context.Context, machines ...string) error {
	for _, m := range machines {
		if strings.TrimSpace(m) == "" {
			return RequestRefused.New("a machine ID is empty")
		}
		_, ok, err := o.Hosts.Get(ctx, m)
		if err != nil {
			return err
		}
		if !ok {
			return RequestRefused.New("machine %s is not a managed host", m)
		}
	}
	return nil
}

// RequestUpdate creates a reprovisioning request for the machine directly:
// it bypasses drift selection and the ceiling, not the assigned host's
// approval. The workflow still compares the inventory with the catalog and
// hands the host back at once when nothing differs.
func (o *Operator) RequestUpdate(ctx context.Context, machine, initiator, message string) (Request, error) {
	if err := o.known(ctx, machine); err != nil {
		return Request{}, err
	}
	if strings.TrimSpace(initiator) == "" {
		initiator = "operator"
	}
	r := Request{MachineID: machine, Initiator: initiator, Message: message, CreatedAt: o.Clock.Now()}
	created, err := o.Store.CreateRequest(ctx, r)
	if err != nil {
		return Request{}, err
	}
	if !created {
		cur, _, _ := o.Store.Request(ctx, machine)
		return cur, RequestRefused.New("machine %s already has a reprovisioning request (by %s, created %s)", machine, cur.Initiator, cur.CreatedAt.Format(time.RFC3339))
	}
	return r, nil
}

// ClearRequest removes a request whose update has not started.
func (o *Operator) ClearRequest(ctx context.Context, machine string) error {
	deleted, err := o.Store.DeleteRequest(ctx, machine, true)
	if err != nil {
		return err
	}
	if !deleted {
		return RequestRefused.New("machine %s has no reprovisioning request", machine)
	}
	return nil
}

// MarkManualUpgradeComplete confirms the manual platform procedure of an
// MNNVL host; the workflow then checks the inventory again (it does not
// assume compliance).
func (o *Operator) MarkManualUpgradeComplete(ctx context.Context, machine string) (Request, error) {
	return o.Store.PatchRequest(ctx, machine, RequestPatch{ManualUpgradeCompletedAt: o.Clock.Now()})
}

// Approve is the tenant's "apply updates on reboot": the assigned host's
// pending request may start.
func (o *Operator) Approve(ctx context.Context, machine string) (Request, error) {
	return o.Store.PatchRequest(ctx, machine, RequestPatch{ApprovedAt: o.Clock.Now()})
}

// Reset sends a started update back to CheckingFirmwareRepeat with its
// retry count cleared (reset-host-reprovisioning). It neither repairs the
// platform nor changes the catalog. A workflow that ended exhausted must
// be started again by the caller (under Temporal, a new run of the same
// workflow ID).
func (o *Operator) Reset(ctx context.Context, machine string) (HostUpdate, error) {
	for range 5 {
		u, ok, err := o.Store.Update(ctx, machine)
		if err != nil {
			return HostUpdate{}, err
		}
		if !ok || u.Substate == Pending {
			return HostUpdate{}, RequestRefused.New("machine %s has no started update to reset", machine)
		}
		now := o.Clock.Now()
		u.moveTo(CheckingFirmwareRepeat, now, "reset by an operator")
		u.RetryCount, u.ResetRetries, u.UploadRetries, u.Artifact, u.Rounds = 0, 0, 0, 0, 0
		u.Try++
		u.Failure, u.TaskID = nil, ""
		saved, err := o.Store.PutUpdate(ctx, u)
		if StateConflict.Is(err) {
			continue
		}
		return saved, err
	}
	return HostUpdate{}, StateConflict.New("machine %s: the update record kept changing; try again", machine)
}

// SetAutoUpdate enables (true) or disables (false) automatic updates of
// one machine, or clears its override (nil: the site default applies).
func (o *Operator) SetAutoUpdate(ctx context.Context, machine string, enabled *bool) error {
	if err := o.known(ctx, machine); err != nil {
		return err
	}
	return o.Store.SetAutoUpdate(ctx, machine, enabled)
}

// StartUpdates opens the firmware update window of each machine (models
// with explicit_start_needed only start inside it). It opens a gate; it
// creates no request. Every machine is checked before any is changed.
func (o *Operator) StartUpdates(ctx context.Context, machines []string, start, end time.Time) error {
	if len(machines) == 0 {
		return RequestRefused.New("no machine given")
	}
	if !end.After(start) {
		return RequestRefused.New("the window ends (%s) before it starts (%s)", end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	if err := o.known(ctx, machines...); err != nil {
		return err
	}
	for _, m := range machines {
		if err := o.Store.SetWindow(ctx, Window{MachineID: m, Start: start, End: end}); err != nil {
			return err
		}
	}
	return nil
}

// CancelUpdates removes the machines' windows.
func (o *Operator) CancelUpdates(ctx context.Context, machines []string) error {
	if len(machines) == 0 {
		return RequestRefused.New("no machine given")
	}
	if err := o.known(ctx, machines...); err != nil {
		return err
	}
	for _, m := range machines {
		if _, err := o.Store.DeleteWindow(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// RequestStatus is a request and where its update is.
type RequestStatus struct {
	Request
	// Update is nil until the workflow picked the request up.
	Update *HostUpdate `json:"update,omitempty"`
	// Exhausted: failed with its retry budget spent.
	Exhausted bool `json:"exhausted"`
}

// List returns every pending or active request with its update's state.
func (o *Operator) List(ctx context.Context) ([]RequestStatus, error) {
	reqs, err := o.Store.Requests(ctx)
	if err != nil {
		return nil, err
	}
	ups, err := o.Store.Updates(ctx)
	if err != nil {
		return nil, err
	}
	byMachine := make(map[string]HostUpdate, len(ups))
	for _, u := range ups {
		byMachine[u.MachineID] = u
	}
	max := o.Settings.WithDefaults().MaxRetries
	out := make([]RequestStatus, 0, len(reqs))
	for _, r := range reqs {
		st := RequestStatus{Request: r}
		if u, ok := byMachine[r.MachineID]; ok {
			st.Update = &u
			st.Exhausted = u.Exhausted(max)
		}
		out = append(out, st)
	}
	return out, nil
}

// ReportScout is the agent's report of a task, as the server receives it:
// the task ID must be the one the machine's update waits for, and the
// output is capped at MaxOutput bytes. The result is persisted; the
// workflow picks it up at its next poll. A second report of the same task
// changes nothing.
func ReportScout(ctx context.Context, s Store, now time.Time, machine, taskID string, ok bool, output string) error {
	u, found, err := s.Update(ctx, machine)
	if err != nil {
		return err
	}
	if !found || u.Substate != WaitingForScoutUpgrade || u.TaskID != taskID {
		return RequestRefused.New("machine %s is not waiting for agent task %q", machine, taskID)
	}
	r := Result{MachineID: machine, ID: taskID, Kind: ResultScout, OK: ok, Output: capOutput(output), At: now}
	if !ok {
		r.Code = ScoutFailed.Code
	}
	_, err = s.PutResult(ctx, r)
	return err
}

// StoredScout is the Scout route of a worker: an offered task is kept in
// the store, where the on-host agent's server (adapters/scout) finds it
// with OfferedScoutTask and the agent's report comes back through
// ReportScout.
type StoredScout struct {
	Store ScoutTaskStore
}

// Offer stores the task for the machine's agent.
func (s StoredScout) Offer(ctx context.Context, t ScoutTask) error {
	return s.Store.PutScoutTask(ctx, t)
}

// OfferedScoutTask returns the task the machine's agent should run now:
// the stored task the machine's update waits for, before its deadline and
// before it was reported. ok is false when there is none.
func OfferedScoutTask(ctx context.Context, s Store, now time.Time, machine string) (ScoutTask, bool, error) {
	u, found, err := s.Update(ctx, machine)
	if err != nil || !found || u.Substate != WaitingForScoutUpgrade || !u.Started {
		return ScoutTask{}, false, err
	}
	t, found, err := s.ScoutTask(ctx, machine)
	if err != nil || !found || t.ID != u.TaskID || !now.Before(t.Deadline) {
		return ScoutTask{}, false, err
	}
	if _, reported, err := s.Result(ctx, machine, t.ID); err != nil || reported {
		return ScoutTask{}, false, err
	}
	return t, true, nil
}
