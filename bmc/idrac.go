package bmc

import (
	"context"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
)

// iDRAC stages BIOS and boot-order changes as a Lifecycle Controller job
// that applies on the next boot. The host reset must wait until the job is
// Scheduled: a boot that starts sooner walks past it, and the job then stays
// queued and rejects every later settings write.
//
// One call acts at most once on the job: stage it, reset the host, or
// delete it; otherwise it returns a wait. The job in flight — its id, the
// step that staged it, when, and when the host was reset for it — is kept
// in the admin vault item, so a rerun after a crash neither resets the host
// a second time nor loses the schedule deadline.

// isConfigJob reports whether a job applies BIOS settings or boot order
// (iDRAC names them "ConfigBIOS:BIOS.Setup.1-1").
func isConfigJob(j Job) bool { return strings.Contains(strings.ToUpper(j.Name), "BIOS") }

func jobActive(s string) bool {
	switch s {
	case JobNew, JobScheduling, JobScheduled, JobRunning:
		return true
	}
	return false
}

func (r *run) jobs(ctx context.Context) ([]Job, error) {
	var js []Job
	err := r.read(ctx, "read job queue", func() (err error) { js, err = r.cl.ListJobs(ctx); return err })
	return js, err
}

func activeConfigJob(js []Job) *Job {
	for i := range js {
		if isConfigJob(js[i]) && jobActive(js[i].State) {
			return &js[i]
		}
	}
	return nil
}

func findJob(js []Job, id string) *Job {
	for i := range js {
		if js[i].ID == id {
			return &js[i]
		}
	}
	return nil
}

// jobSettled is a step's outcome once its settings are converged: a job
// this run followed is forgotten ("applied"), otherwise nothing happened.
func (r *run) jobSettled(ctx context.Context, step, converged string) (string, error) {
	if m := r.admin.job(); m.exists && m.Step == step {
		if err := r.save(ctx, noJob); err != nil {
			return "", err
		}
		return "applied", nil
	}
	return converged, nil
}

// runningJobBlocks returns a wait while a configuration job runs: iDRAC
// refuses settings writes until it finishes.
func (r *run) runningJobBlocks(ctx context.Context, step string) error {
	js, err := r.jobs(ctx)
	if err != nil {
		return err
	}
	if j := activeConfigJob(js); j != nil && j.State == JobRunning {
		return r.wait(WaitJobRun, JobPoll, "%s: job %s is running; the next settings write waits for it", step, j.ID)
	}
	return nil
}

func (r *run) idracBios(ctx context.Context) (string, error) {
	write, staged, err := r.biosDiff(ctx)
	if err != nil {
		return "", err
	}
	if len(write) == 0 && !staged {
		return r.jobSettled(ctx, "bios", outOK)
	}
	stage := func() (string, error) {
		attrs := write
		if len(attrs) == 0 {
			// Staged values without a job: stage them all again.
			attrs = r.desiredBIOS()
		}
		var id string
		err := r.write(ctx, "bios", func() (err error) { id, err = r.cl.SetBiosAttributes(ctx, attrs); return err })
		return id, err
	}
	converged := func() (bool, error) {
		write, staged, err := r.biosDiff(ctx)
		return len(write) == 0 && !staged, err
	}
	return r.idracJob(ctx, "bios", len(write) > 0, stage, converged)
}

// idracJob drives one staged change through the Lifecycle Controller.
// needsWrite is true when the change is not staged yet. converged re-reads
// the step's settings: the job queue is read after the settings, so a job
// can complete in between (TestJobCompletingBetweenReads).
func (r *run) idracJob(ctx context.Context, step string, needsWrite bool, stage func() (string, error), converged func() (bool, error)) (string, error) {
	js, err := r.jobs(ctx)
	if err != nil {
		return "", err
	}
	if m := r.admin.job(); m.exists && m.Step == step {
		return r.followJob(ctx, step, m, findJob(js, m.ID), converged)
	}
	active := activeConfigJob(js)
	switch {
	case active != nil && active.State == JobRunning && needsWrite:
		return "", r.wait(WaitJobRun, JobPoll, "%s: job %s is running; the settings write waits for it", step, active.ID)
	case active != nil && active.State == JobRunning:
		// Another reboot carried the staged values into the Lifecycle
		// Controller: left to finish, no further reset.
		r.log.Info("staged job already running; no further reset", "step", step, "job", active.ID)
		return "carried", nil
	case active != nil && !needsWrite:
		// The values are staged and their job queued (an attempt stopped
		// before recording it): follow it from now.
		m := jobMarker{ID: active.ID, Step: step, StagedAt: r.now(), exists: true}
		if err := r.saveJob(ctx, m); err != nil {
			return "", err
		}
		return r.followJob(ctx, step, m, active, converged)
	}
	// A queued job of another tool makes iDRAC refuse this write (LC068):
	// a refusal for the operator, not something to wait out.
	id, err := stage()
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", JobFailed.New("%s: %s: the BMC staged the change without reporting a job", r.t.Device, step)
	}
	if err := r.saveJob(ctx, jobMarker{ID: id, Step: step, StagedAt: r.now(), exists: true}); err != nil {
		return "", err
	}
	return "", r.wait(WaitJobSchedule, JobPoll, "%s: job %s staged; waiting for the Lifecycle Controller to schedule it", step, id)
}

func (r *run) saveJob(ctx context.Context, m jobMarker) error {
	reset := ""
	if m.hasReset {
		reset = stamp(m.Reset)
	}
	return r.save(ctx, map[string]string{FieldJobID: m.ID, FieldJobStep: m.Step, FieldJobStagedAt: stamp(m.StagedAt), FieldJobHostResetAt: reset})
}

// jobOnItsWay is the wait while the job this run follows is on its way
// and within its budget: being scheduled, or applying after the host
// reset. nil when the job needs an action or a judgement (followJob): it
// completed, failed or vanished, is scheduled and owed its host reset, is
// running without one, or overran its budget.
func (r *run) jobOnItsWay(step string, m jobMarker, j *Job, now time.Time) *hostforge.Wait {
	switch {
	case j == nil, j.State == JobStateFailed, j.State == JobCompletedWithErrors, j.State == JobCompleted:
		return nil
	case j.State == JobRunning || j.State == JobScheduled:
		since := now.Sub(m.Reset)
		if !m.hasReset || since >= JobRunBudget {
			return nil
		}
		return r.wait(WaitJobRun, quietPause(since, JobPoll, JobPollMax, JobRunBudget-since), "%s: job %s %s since the host reset %s ago", step, m.ID, j.State, since.Round(time.Second))
	}
	// New, Scheduling, or a state iDRAC has not documented.
	staged := now.Sub(m.StagedAt)
	if staged >= JobScheduleBudget {
		return nil
	}
	return r.wait(WaitJobSchedule, quietPause(staged, JobPoll, JobPollMax, JobScheduleBudget-staged), "%s: job %s %s, staged %s ago; waiting for the Lifecycle Controller to schedule it", step, m.ID, j.State, staged.Round(time.Second))
}

// jobInFlight is the attempt's short way while a job this run staged is
// on its way: the steps before the job's converged when it was staged and
// the ones after it wait for it, so the attempt reads the job queue and
// returns the wait, instead of re-reading every converged setting on each
// poll (a Dell's BIOS and boot-order jobs take minutes of polls). Once the
// job needs an action, the full pass runs and followJob takes it.
func (r *run) jobInFlight(ctx context.Context) error {
	m := r.admin.job()
	if r.vendor != VendorDell || !m.exists {
		return nil
	}
	js, err := r.jobs(ctx)
	if err != nil {
		return err
	}
	if w := r.jobOnItsWay(m.Step, m, findJob(js, m.ID), r.now()); w != nil {
		r.step(m.Step, "waiting")
		return w
	}
	return nil
}

// followJob takes the one next action on the job this run staged: wait
// for the schedule, reset the host once it is Scheduled, wait for it to
// run, or delete it when it never schedules.
func (r *run) followJob(ctx context.Context, step string, m jobMarker, j *Job, converged func() (bool, error)) (string, error) {
	now := r.now()
	if w := r.jobOnItsWay(step, m, j, now); w != nil {
		return "", w
	}
	forget := func() error { return r.save(ctx, noJob) }
	switch {
	case j == nil:
		if err := forget(); err != nil {
			return "", err
		}
		return "", JobFailed.New("%s: %s: job %s vanished from the job queue before its settings applied", r.t.Device, step, m.ID)
	case j.State == JobStateFailed || j.State == JobCompletedWithErrors:
		if err := forget(); err != nil {
			return "", err
		}
		return "", JobFailed.New("%s: %s: job %s %s: %s", r.t.Device, step, m.ID, j.State, r.scrub(j.Message))
	case j.State == JobCompleted:
		// The caller read its settings before the job queue: the job may
		// have completed in between. Read them again before judging.
		ok, err := converged()
		if err != nil {
			return "", err
		}
		if err := forget(); err != nil {
			return "", err
		}
		if ok {
			return "applied", nil
		}
		// Completed, yet the settings still differ: staging again would loop.
		return "", JobFailed.New("%s: %s: job %s completed but the settings did not apply (%s)", r.t.Device, step, m.ID, r.scrub(j.Message))
	case j.State == JobRunning && !m.hasReset:
		if err := forget(); err != nil {
			return "", err
		}
		r.log.Info("job carried by another reboot; no further reset", "step", step, "job", m.ID)
		return "carried", nil
	case j.State == JobRunning || j.State == JobScheduled && m.hasReset:
		// On its way no more: over the budget.
		since := now.Sub(m.Reset)
		return "", JobFailed.New("%s: %s: job %s still %s %s after the host reset (budget %s)", r.t.Device, step, m.ID, j.State, since.Round(time.Second), JobRunBudget)
	case j.State == JobScheduled:
		if err := r.write(ctx, step+": host reset", func() error { return r.cl.ResetSystem(ctx) }); err != nil {
			return "", err
		}
		m.Reset, m.hasReset = now, true
		if err := r.saveJob(ctx, m); err != nil {
			return "", err
		}
		return "", r.wait(WaitJobRun, JobPoll, "%s: host reset; job %s applies on this boot", step, m.ID)
	}
	// New, Scheduling, or a state iDRAC has not documented, past the
	// schedule budget.
	since := now.Sub(m.StagedAt)
	if err := r.write(ctx, step+": delete unscheduled job", func() error { return r.cl.DeleteJob(ctx, m.ID) }); err != nil {
		return "", err
	}
	if err := forget(); err != nil {
		return "", err
	}
	return "", JobNotScheduled.New("%s: %s: job %s still %s %s after it was staged; deleted", r.t.Device, step, m.ID, j.State, since.Round(time.Second))
}
