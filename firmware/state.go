package firmware

import (
	"fmt"
	"time"
)

// Substate is where a machine's update workflow is. The names are NICo's
// host firmware substates, plus Pending (the request waits at the start
// gate) and Restore (the host is handed back).
type Substate string

// The substates; doc.go draws how they connect.
const (
	Pending                   Substate = "Pending"
	CheckingFirmware          Substate = "CheckingFirmware"
	CheckingFirmwareRepeat    Substate = "CheckingFirmwareRepeat"
	WaitingForManualUpgrade   Substate = "WaitingForManualUpgrade"
	WaitingForScoutUpgrade    Substate = "WaitingForScoutUpgrade"
	WaitingForScript          Substate = "WaitingForScript"
	InitialReset              Substate = "InitialReset"
	WaitingForUpload          Substate = "WaitingForUpload"
	WaitingForFirmwareUpgrade Substate = "WaitingForFirmwareUpgrade"
	ResetForNewFirmware       Substate = "ResetForNewFirmware"
	NewFirmwareReportedWait   Substate = "NewFirmwareReportedWait"
	FailedFirmwareUpgrade     Substate = "FailedFirmwareUpgrade"
	Restore                   Substate = "Restore"
)

// Route is how a component is installed.
type Route string

// The routes, in order of precedence.
const (
	RouteScout   Route = "scout"   // a packaged script run on the host by the agent
	RouteScript  Route = "script"  // the entry's local script
	RouteRedfish Route = "redfish" // upload to the BMC, poll its task
)

// HostUpdate is one machine's update record: everything the workflow
// needs to resume after a restart, written by compare-and-set on Revision.
type HostUpdate struct {
	MachineID string `json:"machine_id"`
	// Revision is the stored revision; PutUpdate compares it.
	Revision int64    `json:"revision"`
	Substate Substate `json:"substate"`
	// EnteredAt is when the substate was entered; NotBefore is the
	// earliest time of its next attempt (the body sleeps until then).
	EnteredAt time.Time `json:"entered_at"`
	NotBefore time.Time `json:"not_before,omitzero"`
	// Generation tells this update's attempt IDs from an earlier update's
	// of the same machine (the request's creation time).
	Generation int64 `json:"generation"`
	// Assigned is whether the host had an instance when the update
	// started: restore returns it to Assigned, not Ready.
	Assigned bool `json:"assigned"`
	// StartPower is the host's power state when the update started:
	// restore powers a host that was on back on.
	StartPower string `json:"start_power,omitempty"`

	// The component being installed, its target version and route.
	Component ComponentType `json:"component,omitempty"`
	Version   string        `json:"version,omitempty"`
	Route     Route         `json:"route,omitempty"`
	// Artifact is the index of the entry's artifact being installed; it
	// survives pre-update resets and transient upload retries, and starts
	// at 0 again for a new target or after a failure.
	Artifact int `json:"artifact"`
	// Attempt numbers uploads, scripts and agent tasks (see AttemptID).
	Attempt int `json:"attempt"`
	// Try numbers the update's tries: it is raised by every retry after a
	// failure and by an operator's reset, never lowered. A push belongs
	// to one try; an image already pushed in this try is pushed again
	// only when the BMC shows no sign of the earlier push.
	Try int `json:"try"`
	// Uploads counts the pushes sent during this update, a push sent
	// again after the BMC showed no sign of an earlier one included.
	Uploads int `json:"uploads,omitempty"`
	// TaskID is the BMC task of the current upload, or the agent task:
	// "scout-" and 128 random bits, drawn once per attempt and persisted
	// before it is offered (a task's ID is not to be guessed by a host).
	TaskID string `json:"task_id,omitempty"`
	// Started marks that the substate's one-shot action (an upload, a
	// script run, an agent task offer) was begun, so a restart that finds
	// no result knows it was interrupted.
	Started bool `json:"started,omitempty"`
	// Deadline bounds an agent task.
	Deadline time.Time `json:"deadline,omitzero"`
	// Phase is the next action of a multi-action substate (the resets).
	Phase int `json:"phase"`
	// ResetSent records the reset of Phase as started, written before it
	// is sent, with what the BMC showed just before: an attempt that finds
	// it reads the BMC before it sends that reset again.
	ResetSent *ResetMark `json:"reset_sent,omitempty"`
	// Artifacts is the number of artifacts of the target entry;
	// PowerDrains its power_drains_needed; Family the host's vendor
	// family (activation differs on Dell).
	Artifacts   int    `json:"artifacts"`
	PowerDrains int    `json:"power_drains,omitempty"`
	Family      string `json:"family,omitempty"`
	// Changed marks that firmware was activated during this update, so an
	// assigned host is restarted back into its instance at restore.
	Changed bool `json:"changed,omitempty"`
	// StartLockdown is the host's platform lockdown when the update
	// started (LockdownEnabled, LockdownDisabled; "" where the BMC has
	// none); LockdownChanged marks that the update turned it off, so that
	// restore turns it on again — and only then.
	StartLockdown   LockdownState `json:"start_lockdown,omitempty"`
	LockdownChanged bool          `json:"lockdown_changed,omitempty"`
	// Reprotect marks a retry of a started update: checking sets the
	// update report again and turns lockdown off again (when it was on at
	// the start) before anything else, since a hand-back that failed may
	// have undone them.
	Reprotect bool `json:"reprotect,omitempty"`
	// NoACPowerCycle marks that the BMC offers no AC power cycle: a power
	// drain is a power-off held for Settings.PowerDrainWait, then on.
	NoACPowerCycle bool `json:"no_ac_power_cycle,omitempty"`
	// From is what the target's component reported when the target was
	// chosen; Changes lists the components this update brought to their
	// target, in order.
	From    string            `json:"from,omitempty"`
	Changes []ComponentChange `json:"changes,omitempty"`
	// Cancel is an operator's cancellation: the update stops at its next
	// step boundary where no push, task, agent run or reset is in flight,
	// and hands the host back.
	Cancel *CancelMark `json:"cancel,omitempty"`

	// ResetRetries counts activation resets repeated for this target.
	ResetRetries int `json:"reset_retries"`
	// RetryCount counts FailedFirmwareUpgrade retries: the retry budget,
	// kept for assigned hosts too.
	RetryCount int `json:"retry_count"`
	// Errors counts consecutive transient errors in this substate.
	Errors int `json:"errors"`
	// UploadRetries counts transient upload failures and lost tasks of
	// the current target.
	UploadRetries int `json:"upload_retries"`
	// Rounds counts returns to checking that selected the same target
	// without verifying it.
	Rounds int `json:"rounds"`
	// LastError is the last transient error, for people.
	LastError string `json:"last_error,omitempty"`
	// Failure is why the update is in FailedFirmwareUpgrade.
	Failure *FailureInfo `json:"failure,omitempty"`
	// History is the last transitions, newest last.
	History []Transition `json:"history,omitempty"`
}

// ResetMark is a reset recorded as started (HostUpdate.ResetSent).
type ResetMark struct {
	Phase  int         `json:"phase"`
	Kind   ResetKind   `json:"kind"`
	Before ResetStatus `json:"before"`
	At     time.Time   `json:"at"`
}

// ComponentChange is a component an update brought to its target: what
// it reported before (its matching entries' versions, joined by ", ")
// and the target.
type ComponentChange struct {
	Component ComponentType `json:"component"`
	From      string        `json:"from"`
	To        string        `json:"to"`
}

// CancelMark is an operator's cancellation of an update.
type CancelMark struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// FailureInfo is a recorded failure of an attempt.
type FailureInfo struct {
	Code    string    `json:"code"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// Transition is one substate change.
type Transition struct {
	From Substate  `json:"from"`
	To   Substate  `json:"to"`
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
}

// maxHistory bounds HostUpdate.History: enough for an update's substates
// through its retries, kept with the finished update.
const maxHistory = 64

// Exhausted reports whether the update failed and spent its retry budget
// (and was not cancelled since: a cancelled update hands its host back).
func (u HostUpdate) Exhausted(maxRetries int) bool {
	return u.Substate == FailedFirmwareUpgrade && u.RetryCount >= maxRetries && u.Cancel == nil
}

// AttemptID names the current attempt's result of an upload or a script:
// unique per machine across updates. An agent task's result is named by
// its random TaskID instead.
func (u HostUpdate) AttemptID(kind string) string {
	return fmt.Sprintf("%d-%s-%d-%d", u.Generation, kind, u.Attempt, u.Artifact)
}

// moveTo changes the substate, recording the transition and resetting the
// per-substate counters.
func (u *HostUpdate) moveTo(s Substate, now time.Time, note string) {
	u.History = append(u.History, Transition{From: u.Substate, To: s, At: now, Note: note})
	if len(u.History) > maxHistory {
		u.History = append([]Transition(nil), u.History[len(u.History)-maxHistory:]...)
	}
	u.Substate = s
	u.EnteredAt = now
	u.NotBefore = now
	u.Errors = 0
	u.Phase = 0
	u.ResetSent = nil
	u.Started = false
	u.LastError = ""
}
