package bmc

import (
	"time"

	"github.com/hostforge/hostforge"
)

// Wait reasons of the BMC phase. An attempt never sleeps: it returns a
// *hostforge.Wait with one of these reasons and the runtime sleeps, within
// the reason's budget (see [Waits]), before it calls the phase again.
const (
	// WaitBusy: the BMC answered 5xx (busy, booting its host). The wait's
	// detail carries the BMC's own reason.
	WaitBusy = "bmc_busy"
	// WaitUnreachable: the BMC did not answer at all (connection refused or
	// reset, request timeout).
	WaitUnreachable = "bmc_unreachable"
	// WaitReset: a cold reset was requested and Redfish is not back yet, or
	// does not take the per-host credential yet.
	WaitReset = "bmc_reset"
	// WaitJobSchedule: an iDRAC settings job waits for the Lifecycle
	// Controller to schedule it.
	WaitJobSchedule = "idrac_job_schedule"
	// WaitJobRun: an iDRAC settings job is applying (the host reboots into
	// it), or a running job blocks the next settings write.
	WaitJobRun = "idrac_job_run"
)

// Budgets and pauses of the phase's waits. The runtime enforces the
// budgets (Waits); the phase also checks the reset, schedule and run
// budgets itself against the times it persisted in the admin vault item,
// so a rerun after a crash knows how long a reset or a job has been going.
const (
	// BusyBudget bounds the busy (5xx) waits of one run of the step, and
	// separately its no-answer waits.
	BusyBudget = 2 * time.Minute
	// ResetBudget is how long Redfish may take to come back, with the
	// per-host credential accepted, after a cold reset. A BMC still
	// answering on its old credential after that never took the reset (the
	// request was lost on its way), and the phase requests it again.
	ResetBudget = 10 * time.Minute
	// ResetWaitBudget bounds the reset waits of one run of the step: one
	// reset, and one more when the BMC did not take the first.
	ResetWaitBudget = 2 * ResetBudget
	// ResetPoll is the pause before the first poll after a cold reset; the
	// polls after it space out (quietPause) to at most ResetPollMax.
	ResetPoll    = 15 * time.Second
	ResetPollMax = 30 * time.Second
	// JobScheduleBudget is how long the Lifecycle Controller may take to
	// schedule a staged job before the phase deletes it.
	JobScheduleBudget = 3 * time.Minute
	// JobRunBudget is how long a job may run after the host reset that
	// carries it.
	JobRunBudget = 20 * time.Minute
	// JobPoll is the pause before the first poll of a job after hostforge
	// staged it or reset the host for it; the polls after it space out
	// (quietPause) to at most JobPollMax.
	JobPoll    = 10 * time.Second
	JobPollMax = time.Minute
	// JobsPerRun is the most iDRAC jobs one run applies (BIOS, boot order):
	// the runtime's job budgets cover them all.
	JobsPerRun = 2
)

// BusyBackoff paces busy and no-answer waits: 5 s doubling to 30 s.
var BusyBackoff = hostforge.Backoff{First: 5 * time.Second, Max: 30 * time.Second}

// quietPause paces the polls of something the phase set going `since`
// ago — a staged iDRAC job, the host reset that carries it, a cold reset
// of the BMC — while each poll finds it unchanged: the pause is the time
// it has been going plus first, so the polls double their spacing (first,
// 3×first, 7×first, … after the action), as ironic.NextPoll paces a
// node's, at most most, and never past the end of its budget (left) so the
// poll that judges an overrun is not late. A job or a reset takes minutes,
// and each poll is a step in the workflow's history and a round of
// Redfish reads; since comes from the times persisted in the admin item,
// so the pace survives a worker restart.
func quietPause(since, first, most, left time.Duration) time.Duration {
	d := min(max(since.Round(time.Second)+first, first), most)
	if left > 0 && d > left {
		d = left
	}
	return d
}

// WaitSpec is one wait reason's policy, for the workflow to register with
// its runtime (enrollment maps it onto flow.WaitPolicy), so the budgets and
// the failure at exhaustion are the same under every runtime.
type WaitSpec struct {
	Reason string
	// Budget is the total time the reason's waits may add up to in one run
	// of the step.
	Budget time.Duration
	// Backoff, when set, paces the reason's n-th wait; otherwise each wait
	// sleeps its own After.
	Backoff hostforge.Backoff
	// Exhausted is the failure once the budget is spent.
	Exhausted func(step string, last *hostforge.Wait, waited, budget time.Duration) error
}

// Waits lists the policy of every wait reason the phase returns.
//
//	reason              budget        pause          at exhaustion
//	bmc_busy            2 min         5 s → 30 s     BMC_HTTP_SERVICE_UNAVAILABLE (the BMC's reason)
//	bmc_unreachable     2 min         5 s → 30 s     BMC_UNREACHABLE
//	bmc_reset           2×10 min      15 s … 30 s    BMC_RESET_TIMEOUT (the phase requests a reset the BMC did not take again after 10 min)
//	idrac_job_schedule  2×(3 min+10 s) 10 s … 1 min  BMC_JOB_NOT_SCHEDULED (the phase deletes the job at 3 min first)
//	idrac_job_run       2×20 min      10 s … 1 min   BMC_JOB_FAILED
//
// A reset's and a job's pauses grow with the time since the phase acted
// (quietPause: the cold reset, the staging, the host reset).
//
// The job budgets cover both jobs of a run; the phase bounds each job by
// JobScheduleBudget and JobRunBudget itself.
func Waits() []WaitSpec {
	return []WaitSpec{
		{Reason: WaitBusy, Budget: BusyBudget, Backoff: BusyBackoff,
			Exhausted: func(step string, last *hostforge.Wait, waited, budget time.Duration) error {
				return ServiceUnavailable.New("step %s: the BMC stayed busy for %s (budget %s): %s", step, waited, budget, last.Detail)
			}},
		{Reason: WaitUnreachable, Budget: BusyBudget, Backoff: BusyBackoff,
			Exhausted: func(step string, last *hostforge.Wait, waited, budget time.Duration) error {
				return Unreachable.New("step %s: the BMC did not answer for %s (budget %s): %s", step, waited, budget, last.Detail)
			}},
		{Reason: WaitReset, Budget: ResetWaitBudget,
			Exhausted: func(step string, last *hostforge.Wait, waited, budget time.Duration) error {
				return ResetTimeout.New("step %s: waited %s (budget %s) after the cold reset: %s", step, waited, budget, last.Detail)
			}},
		{Reason: WaitJobSchedule, Budget: JobsPerRun * (JobScheduleBudget + JobPoll),
			Exhausted: func(step string, last *hostforge.Wait, waited, budget time.Duration) error {
				return JobNotScheduled.New("step %s: waited %s (budget %s) for the Lifecycle Controller; the job is still queued and the rerun deletes it: %s", step, waited, budget, last.Detail)
			}},
		{Reason: WaitJobRun, Budget: JobsPerRun * JobRunBudget,
			Exhausted: func(step string, last *hostforge.Wait, waited, budget time.Duration) error {
				return JobFailed.New("step %s: waited %s (budget %s) for settings jobs to finish: %s", step, waited, budget, last.Detail)
			}},
	}
}

// The longest one attempt can take. An attempt never sleeps, so it is
// bounded by the requests it makes times the deadline of each. The
// workflow registers AttemptBound as the step's attempt bound (under
// Temporal, its start-to-close timeout).
const (
	// RequestTimeout is the deadline of one request to a BMC: the Redfish
	// connector's default.
	RequestTimeout = 60 * time.Second
	// MaxCollection is the largest collection the bound assumes the BMC
	// lists (account slots, boot options, job queue): 16, as iDRAC's fixed
	// account slots.
	MaxCollection = 16
	// MaxRequestsPerAttempt bounds the Redfish requests of one attempt on a
	// BMC with collections of at most MaxCollection members. Measured over
	// the Redfish emulator for every vendor flavour in the heaviest attempts
	// (a drifted BMC rotated from its factory password with a forced reset,
	// busy answers, a lost answer to the password change), the heaviest
	// makes 100; the bound leaves a fifth for paths those do not reach.
	// adapters/redfish TestAttemptRequestsWithinBound fails above it.
	MaxRequestsPerAttempt = 120
	// AttemptBound is MaxRequestsPerAttempt × RequestTimeout: 2 h.
	AttemptBound = MaxRequestsPerAttempt * RequestTimeout
	// LinkReadRequests bounds the Redfish requests of one LinkReader read
	// (connect, discovery, the system, its NIC collection and up to
	// MaxCollection NICs), for the Ironic steps' attempt bound.
	LinkReadRequests = 8 + MaxCollection
)
