package bmc

import (
	"context"
	"maps"
	"time"
)

// Fields of the per-host admin vault item that carry what one attempt
// leaves for the next and the BMC cannot tell it. Each is absent while it
// has nothing to say, so a converged host's item is just its credential.
const (
	// FieldResetPending says a cold reset is owed: "rotation" (the password
	// was rotated; some BMCs apply it only on a reset) or "forced"
	// (force_restart). Written with the vault promote, so a crash between
	// the promote and the reset still resets on the rerun.
	FieldResetPending = "reset_pending"
	// FieldResetRequestedAt is when the BMC accepted the cold reset
	// (RFC 3339, UTC): the next attempts poll Redfish instead of resetting
	// again, and bound the wait by it.
	FieldResetRequestedAt = "reset_requested_at"
	// FieldForcedResetRun is the Target.RunID whose forced cold reset
	// completed: force_restart resets once per run, not once per attempt.
	FieldForcedResetRun = "forced_reset_run"
	// FieldJobID, FieldJobStep, FieldJobStagedAt and FieldJobHostResetAt
	// describe the iDRAC settings job in flight: its id, the step that
	// staged it (bios, boot_order), when it was staged or adopted, and when
	// the host was reset to apply it ("" before).
	FieldJobID          = "idrac_job_id"
	FieldJobStep        = "idrac_job_step"
	FieldJobStagedAt    = "idrac_job_staged_at"
	FieldJobHostResetAt = "idrac_job_host_reset_at"
	// FieldHostResetAt is when a host without a job queue (Lenovo) was
	// reset to apply staged settings; a later attempt of the same run does
	// not reset it again. Cleared when the run completes.
	FieldHostResetAt = "host_reset_at"
)

// Values of FieldResetPending.
const (
	resetForRotation = "rotation"
	resetForced      = "forced"
)

// admin is the attempt's copy of the per-host admin item. The phase is its
// only writer while an enrollment of the host runs, so each write puts the
// whole copy back.
type admin struct {
	fields map[string]string // nil: the item does not exist
}

func (a *admin) get(k string) string { return a.fields[k] }

func (a *admin) exists() bool { return a.fields != nil }

// time reads a persisted instant; an unreadable one counts as long ago, so
// the budgets that depend on it are spent and the phase starts over (a
// fresh reset, a deleted and restaged job) instead of waiting forever.
func (a *admin) time(k string) (time.Time, bool) {
	s := a.fields[k]
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Unix(0, 0).UTC(), true
	}
	return t, true
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// save applies set (an empty value deletes the field) to the copy and
// writes it back.
func (r *run) save(ctx context.Context, set map[string]string) error {
	next := maps.Clone(r.admin.fields)
	if next == nil {
		next = map[string]string{}
	}
	for k, v := range set {
		if v == "" {
			delete(next, k)
		} else {
			next[k] = v
		}
	}
	if err := r.c.Vault.PutItem(ctx, r.t.AdminItem, next); err != nil {
		return r.vaultErr(r.t.AdminItem, err)
	}
	r.admin.fields = next
	return nil
}

// jobMarker is the iDRAC job in flight, as persisted.
type jobMarker struct {
	ID, Step         string
	StagedAt, Reset  time.Time
	hasReset, exists bool
}

func (a *admin) job() jobMarker {
	m := jobMarker{ID: a.get(FieldJobID), Step: a.get(FieldJobStep)}
	if m.ID == "" {
		return jobMarker{}
	}
	m.exists = true
	m.StagedAt, _ = a.time(FieldJobStagedAt)
	m.Reset, m.hasReset = a.time(FieldJobHostResetAt)
	return m
}

var noJob = map[string]string{FieldJobID: "", FieldJobStep: "", FieldJobStagedAt: "", FieldJobHostResetAt: ""}
