package bmc

import (
	"context"
	"strings"
)

// iDRAC stages BIOS and boot-order changes as a Lifecycle Controller job
// that applies on the next boot. The host reset must wait until the job is
// Scheduled: a boot that starts sooner walks past it, and the job then stays
// queued and rejects every later settings write.

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

func (r *run) activeConfigJob(ctx context.Context) (*Job, error) {
	js, err := r.jobs(ctx)
	if err != nil {
		return nil, err
	}
	for i := range js {
		if isConfigJob(js[i]) && jobActive(js[i].State) {
			return &js[i], nil
		}
	}
	return nil, nil
}

func (r *run) idracBios(ctx context.Context) (string, error) {
	write, staged, err := r.biosDiff(ctx)
	if err != nil {
		return "", err
	}
	if len(write) == 0 && !staged {
		return outOK, nil
	}
	restage := func() (string, error) {
		all := map[string]any{}
		for k, v := range r.desiredBIOS() {
			all[k] = v
		}
		var id string
		err := r.write(ctx, "bios", func() (err error) { id, err = r.cl.SetBiosAttributes(ctx, all); return err })
		return id, err
	}
	if len(write) == 0 {
		return r.finishStaged(ctx, "bios", restage)
	}
	if err := r.awaitNoRunningJob(ctx, "bios"); err != nil {
		return "", err
	}
	var id string
	if err := r.write(ctx, "bios", func() (err error) { id, err = r.cl.SetBiosAttributes(ctx, write); return err }); err != nil {
		return "", err
	}
	return r.applyJob(ctx, "bios", id)
}

// finishStaged handles settings an earlier attempt already staged: a job
// some other reboot carried into the Lifecycle Controller (Running) is left
// to finish without a further reset; a queued job is scheduled and applied;
// staged values without a job are staged again.
func (r *run) finishStaged(ctx context.Context, step string, restage func() (string, error)) (string, error) {
	j, err := r.activeConfigJob(ctx)
	if err != nil {
		return "", err
	}
	if j == nil {
		id, err := restage()
		if err != nil {
			return "", err
		}
		return r.applyJob(ctx, step, id)
	}
	if j.State == JobRunning {
		r.log.Info("staged job already running; no further reset", "step", step, "job", j.ID)
		return "carried", nil
	}
	return r.applyJob(ctx, step, j.ID)
}

// applyJob waits (bounded) for the Lifecycle Controller to schedule the job,
// resets the host, and waits for the job to finish. A job that never
// schedules is deleted so a rerun can stage it again.
func (r *run) applyJob(ctx context.Context, step, id string) (string, error) {
	if id == "" {
		return "", JobFailed.New("%s: %s: the BMC staged the change without reporting a job", r.t.Device, step)
	}
	clk := r.clock()
	deadline := clk.Now().Add(r.b.JobSchedule)
	for {
		j, err := r.job(ctx, id)
		if err != nil {
			return "", err
		}
		if j == nil {
			return "", JobFailed.New("%s: %s: job %s vanished from the job queue", r.t.Device, step, id)
		}
		switch j.State {
		case JobScheduled:
			if err := r.write(ctx, step+": host reset", func() error { return r.cl.ResetSystem(ctx) }); err != nil {
				return "", err
			}
			if err := r.awaitDone(ctx, step, id); err != nil {
				return "", err
			}
			return "applied", nil
		case JobRunning:
			r.log.Info("job carried by another reboot; no further reset", "step", step, "job", id)
			return "carried", nil
		case JobCompleted:
			return "applied", nil
		case JobStateFailed, JobCompletedWithErrors:
			return "", JobFailed.New("%s: %s: job %s %s: %s", r.t.Device, step, id, j.State, j.Message)
		}
		if !clk.Now().Before(deadline) {
			if err := r.write(ctx, step+": delete unscheduled job", func() error { return r.cl.DeleteJob(ctx, id) }); err != nil {
				return "", err
			}
			return "", JobNotScheduled.New("%s: %s: job %s still %s after %s; deleted", r.t.Device, step, id, j.State, r.b.JobSchedule)
		}
		if err := clk.Sleep(ctx, r.b.JobPoll); err != nil {
			return "", Unreachable.Wrap(err, "%s: %s: cancelled waiting for job %s", r.t.Device, step, id)
		}
	}
}

func (r *run) job(ctx context.Context, id string) (*Job, error) {
	js, err := r.jobs(ctx)
	if err != nil {
		return nil, err
	}
	for i := range js {
		if js[i].ID == id {
			return &js[i], nil
		}
	}
	return nil, nil
}

// awaitDone waits for a job to leave the queue's active states.
func (r *run) awaitDone(ctx context.Context, step, id string) error {
	clk := r.clock()
	deadline := clk.Now().Add(r.b.JobRun)
	for {
		j, err := r.job(ctx, id)
		if err != nil {
			return err
		}
		if j == nil || j.State == JobCompleted {
			return nil
		}
		if j.State == JobStateFailed || j.State == JobCompletedWithErrors {
			return JobFailed.New("%s: %s: job %s %s: %s", r.t.Device, step, id, j.State, j.Message)
		}
		if !clk.Now().Before(deadline) {
			return JobFailed.New("%s: %s: job %s still %s after %s", r.t.Device, step, id, j.State, r.b.JobRun)
		}
		if err := clk.Sleep(ctx, r.b.JobPoll); err != nil {
			return Unreachable.Wrap(err, "%s: %s: cancelled waiting for job %s", r.t.Device, step, id)
		}
	}
}

// awaitNoRunningJob lets a running configuration job finish before the next
// settings write, which iDRAC would otherwise refuse.
func (r *run) awaitNoRunningJob(ctx context.Context, step string) error {
	j, err := r.activeConfigJob(ctx)
	if err != nil || j == nil || j.State != JobRunning {
		return err
	}
	return r.awaitDone(ctx, step, j.ID)
}
