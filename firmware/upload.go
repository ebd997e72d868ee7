package firmware

import (
	"context"
	"fmt"
	"strings"

	"github.com/hostforge/hostforge"
)

// upload pushes the current artifact at most once. The push is recorded
// (Push: the image, its digest, its target and the BMC's tasks just
// before) and the record checkpointed before the push is sent; an attempt
// that finds a push recorded without a result — its answer was lost, or
// the worker died around it — asks the BMC first (resumePush) and pushes
// again only when the BMC shows no sign of it. An image already pushed in
// this try is likewise pushed again only when the BMC shows no sign of the
// earlier push. The upload slot is held until the push has returned.
func (e *Executor) upload(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	m := r.MachineID
	if r.Started {
		res, ok, err := e.Store.Result(ctx, m, r.AttemptID(ResultUpload))
		if err != nil {
			return err
		}
		if !ok {
			return e.resumePush(ctx, sc)
		}
		if err := e.Store.ReleaseUploadSlot(ctx, m); err != nil {
			return err
		}
		e.uploadDone(sc, res)
		return nil
	}
	model, entry, ok, err := e.target(ctx, *r)
	if err != nil {
		return err
	}
	if !ok || r.Artifact >= len(entry.Artifacts) {
		sc.move(CheckingFirmwareRepeat, "the catalog changed")
		return nil
	}
	next := *r
	next.Attempt++
	id := next.AttemptID(ResultUpload)
	req := UploadRequest{Component: r.Component, Version: r.Version, Artifact: entry.Artifacts[r.Artifact],
		Index: r.Artifact, Count: len(entry.Artifacts), InstallOnlySpecified: entry.InstallOnlySpecified, PushID: id}
	if entry.InstallOnlySpecified {
		obs, _, err := e.Store.Observed(ctx, m)
		if err != nil {
			return err
		}
		for _, x := range obs.Reported[r.Component] {
			req.Targets = append(req.Targets, x.ID)
		}
	}
	if prev, ok, err := e.earlierPush(ctx, *r, id); err != nil {
		return err
	} else if ok {
		known := ""
		if res, ok, err := e.Store.Result(ctx, m, prev.ID); err != nil {
			return err
		} else if ok {
			known = res.TaskID
		}
		switch ev, seen := e.askBMC(ctx, sc, model, prev, known); seen {
		case bmcUnread:
			return nil // booked on the record: asked again later
		case bmcShowsPush:
			e.uploadDone(sc, ev)
			return nil
		}
	}
	got, err := e.Store.AcquireUploadSlot(ctx, m, e.Settings.MaxUploads, sc.now, e.Settings.UploadLease)
	if err != nil {
		return err
	}
	if !got {
		sc.after(e.Settings.TaskPoll)
		return nil
	}
	release := func() error { return e.Store.ReleaseUploadSlot(context.WithoutCancel(ctx), m) }
	// The artifact is resolved (downloaded, verified) once the slot is
	// taken: a host queued behind max_uploads does not download or hash
	// it again at every look for a slot, only for the upload it makes.
	if e.Artifacts != nil {
		p, err := e.Artifacts.Resolve(ctx, req.Artifact)
		if err != nil {
			if rerr := release(); rerr != nil {
				return rerr
			}
			sc.transient(err, "resolving the artifact "+artifactName(req.Artifact))
			return nil
		}
		req.Path = p
	}
	list, err := e.BMC.Tasks(ctx, m)
	if err != nil {
		if rerr := release(); rerr != nil {
			return rerr
		}
		sc.transient(err, "listing the BMC's tasks before the push")
		return nil
	}
	push := Push{MachineID: m, ID: id, Try: r.Try, Component: r.Component, Version: r.Version, Artifact: r.Artifact,
		Targets: req.Targets, Image: artifactName(req.Artifact), Digest: req.Artifact.SHA256, At: sc.now, Listed: true}
	for _, t := range list.Tasks {
		push.Seen = append(push.Seen, SeenTask{ID: t.ID, Start: t.Start})
	}
	if _, err := e.Store.PutPush(ctx, push); err != nil {
		_ = release()
		return err
	}
	r.Attempt++
	r.Started = true
	r.Uploads++
	if err := sc.checkpoint(ctx); err != nil {
		_ = release()
		return err
	}
	task, uerr := e.BMC.Upload(ctx, m, req)
	if uerr != nil && !refused(uerr) {
		// The push may have reached the BMC (a dropped connection, a
		// timeout after the image was sent): nothing is concluded from the
		// error. No result is written; the next attempt asks the BMC.
		if err := release(); err != nil {
			return err
		}
		sc.transientPaced(uerr, "pushing "+push.Image+" (the BMC is asked whether it took it)", e.Settings.TaskPoll)
		return nil
	}
	res := Result{MachineID: m, ID: id, Kind: ResultUpload, OK: uerr == nil, TaskID: task, At: e.Clock.Now()}
	if uerr != nil {
		_, f, _ := hostforge.Classify(uerr)
		res.Code, res.Output = f.Code, capOutput(f.Error())
	}
	stored, err := e.Store.PutResult(ctx, res)
	if rerr := release(); err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	e.uploadDone(sc, stored)
	return nil
}

// refused reports an upload error that says the BMC did not take the
// push: a classified failure that is not retryable (a refused image,
// credentials, a conflicting update, an artifact that cannot be read).
// Anything else may have reached the BMC.
func refused(err error) bool {
	f, ok := hostforge.AsFailure(err)
	return ok && !f.Retryable && f.Code != hostforge.Unclassified.Code && f.Code != hostforge.Cancelled.Code
}

// resumePush decides a push recorded as started without a result: the BMC
// is asked whether it happened; when it shows neither a task nor a staged
// image of it, the push did not happen and is sent again (a new upload,
// counted against the target's upload retries).
func (e *Executor) resumePush(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	m := r.MachineID
	id := r.AttemptID(ResultUpload)
	model, entry, ok, err := e.target(ctx, *r)
	if err != nil {
		return err
	}
	push, found, err := e.pushOf(ctx, m, id)
	if err != nil {
		return err
	}
	if !found {
		// Begun before pushes were recorded: what the BMC listed then is
		// unknown, and the push is at most as old as the substate.
		push = Push{MachineID: m, ID: id, Try: r.Try, Component: r.Component, Version: r.Version, Artifact: r.Artifact, At: r.EnteredAt}
		if ok && r.Artifact < len(entry.Artifacts) {
			push.Image = artifactName(entry.Artifacts[r.Artifact])
		}
	}
	if !ok {
		model = nil
	}
	ev, seen := e.askBMC(ctx, sc, model, push, "")
	if seen == bmcUnread {
		return nil // booked on the record: asked again later
	}
	res := Result{MachineID: m, ID: id, Kind: ResultUpload, At: e.Clock.Now()}
	if seen == bmcShowsPush {
		res.OK, res.TaskID, res.Evidence, res.Output = true, ev.TaskID, ev.Evidence, ev.Output
	} else {
		res.Code = "transient:" + UploadFailed.Code
		res.Output = fmt.Sprintf("the answer to push %s of %s was lost and the BMC shows no task and no staged image of it: it did not happen", id, push.Image)
	}
	stored, err := e.Store.PutResult(ctx, res)
	if err != nil {
		return err
	}
	if err := e.Store.ReleaseUploadSlot(ctx, m); err != nil {
		return err
	}
	e.uploadDone(sc, stored)
	return nil
}

// What the BMC showed of an earlier push (askBMC).
type bmcShows int

const (
	// bmcUnread: the BMC could not be read; the error is booked on the
	// record and nothing is pushed before it has answered.
	bmcUnread bmcShows = iota
	// bmcShowsNothing: no task, no staged image, no installed target.
	bmcShowsNothing
	// bmcShowsPush: the push happened; the result says how it showed.
	bmcShowsPush
)

// askBMC looks on the BMC for a sign that push p happened: its task in
// the TaskService (PushTask; a task already known by its ID counts
// whatever its age), the target version already installed, or the image
// staged (StagedImage).
func (e *Executor) askBMC(ctx context.Context, sc *stepCtx, model *Model, p Push, known string) (Result, bmcShows) {
	m := sc.rec.MachineID
	list, err := e.BMC.Tasks(ctx, m)
	if err != nil {
		sc.transientPaced(err, "asking the BMC whether push "+p.ID+" happened", e.Settings.TaskPoll)
		return Result{}, bmcUnread
	}
	if known != "" {
		for _, t := range list.Tasks {
			if t.ID == known {
				return Result{OK: true, TaskID: t.ID, Evidence: EvidenceTask, Output: "push " + p.ID + ": its task " + t.ID + " is still listed"}, bmcShowsPush
			}
		}
	}
	if t, ok := PushTask(p, list, sc.now); ok {
		return Result{OK: true, TaskID: t.ID, Evidence: EvidenceTask, Output: fmt.Sprintf("push %s: the BMC lists its task %s (%s)", p.ID, t.ID, t.State)}, bmcShowsPush
	}
	inv, err := e.BMC.Inventory(ctx, m)
	if err != nil {
		sc.transientPaced(err, "asking the BMC whether push "+p.ID+" happened", e.Settings.TaskPoll)
		return Result{}, bmcUnread
	}
	if p.Version != "" && e.atTarget(ctx, inv, p.Component, p.Version) {
		return Result{OK: true, Evidence: EvidenceInstalled, Output: fmt.Sprintf("push %s: %s already reports %s", p.ID, p.Component, p.Version)}, bmcShowsPush
	}
	if id, ok := StagedImage(inv, model, p); ok {
		return Result{OK: true, Evidence: EvidenceStaged, Output: fmt.Sprintf("push %s: the BMC lists it staged as %s", p.ID, id)}, bmcShowsPush
	}
	return Result{}, bmcShowsNothing
}

// earlierPush returns the newest push of the record's current image in
// its try, other than the push id about to be recorded.
func (e *Executor) earlierPush(ctx context.Context, r HostUpdate, id string) (Push, bool, error) {
	ps, err := e.Store.Pushes(ctx, r.MachineID)
	if err != nil {
		return Push{}, false, err
	}
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		if p.ID != id && p.Try == r.Try && p.Component == r.Component && p.Version == r.Version && p.Artifact == r.Artifact {
			return p, true, nil
		}
	}
	return Push{}, false, nil
}

// pushOf returns the machine's push id.
func (e *Executor) pushOf(ctx context.Context, machine, id string) (Push, bool, error) {
	ps, err := e.Store.Pushes(ctx, machine)
	if err != nil {
		return Push{}, false, err
	}
	for _, p := range ps {
		if p.ID == id {
			return p, true, nil
		}
	}
	return Push{}, false, nil
}

// uploadDone moves on from an upload's result.
func (e *Executor) uploadDone(sc *stepCtx, res Result) {
	r := &sc.rec
	switch {
	case res.OK && res.Evidence == EvidenceInstalled:
		r.Changed = true
		sc.move(CheckingFirmwareRepeat, firstLine(res.Output))
	case res.OK && res.Evidence == EvidenceStaged:
		e.artifactInstalled(sc, firstLine(res.Output))
	case res.OK:
		r.TaskID = res.TaskID
		note := fmt.Sprintf("artifact %d of %d uploaded: task %s", r.Artifact+1, r.Artifacts, res.TaskID)
		if res.Evidence == EvidenceTask {
			note = firstLine(res.Output)
		}
		sc.move(WaitingForFirmwareUpgrade, note)
	case strings.HasPrefix(res.Code, "transient:"):
		e.uploadRetry(sc, res.Output)
	case res.Code == ArtifactMissing.Code:
		sc.fail(ArtifactMissing, "%s", res.Output)
	default:
		sc.fail(UploadFailed, "%s", res.Output)
	}
}

// artifactInstalled moves on once an artifact is on the BMC: the entry's
// next artifact, or the activation resets after the last.
func (e *Executor) artifactInstalled(sc *stepCtx, note string) {
	r := &sc.rec
	if r.Artifact+1 < r.Artifacts {
		r.Artifact++
		sc.move(WaitingForUpload, fmt.Sprintf("%s; artifact %d of %d next", note, r.Artifact+1, r.Artifacts))
		return
	}
	r.Changed = true
	sc.move(ResetForNewFirmware, note)
}

// uploadRetry returns to checking after a push that did not happen or a
// task the BMC forgot, within the target's budget of them (reset when the
// target changes or its firmware is verified).
func (e *Executor) uploadRetry(sc *stepCtx, why string) {
	r := &sc.rec
	r.UploadRetries++
	if r.UploadRetries > e.Settings.MaxUploadRetries {
		sc.fail(UploadFailed, "%d uploads of %s %s failed transiently or lost their task; last: %s", r.UploadRetries, r.Component, r.Version, why)
		return
	}
	sc.move(CheckingFirmwareRepeat, "transient upload failure: "+firstLine(why))
	sc.after(transientBackoff.After(r.UploadRetries))
}
