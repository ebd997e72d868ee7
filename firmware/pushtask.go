package firmware

import (
	"net/url"
	"path"
	"strings"
	"time"
)

// PushEvidenceWindow is how long after it ended a task the BMC lists still
// counts as the task of a push whose answer was lost, where the tasks the
// BMC listed before the push are unknown (PushTask).
const PushEvidenceWindow = time.Hour

// MaxTasksListed bounds the tasks a BMCClient reads for one Tasks call:
// the newest members of the collection (its last ones), so that a BMC
// keeping a long job history costs a bounded number of reads.
const MaxTasksListed = 64

// taskClockSlack is how much earlier than the push, by the BMC's clock, a
// task may say it started and still be taken as the push's when the BMC's
// tasks before the push are unknown: Redfish times have whole seconds,
// and the BMC's clock is read from its Date header.
const taskClockSlack = 2 * time.Minute

// PushTask finds the task of push p among the BMC's tasks l, read at now
// (on the workflow's clock). A task is the push's when the BMC records
// nothing that says otherwise:
//
//   - it is an update task (TaskInfo.Update: the payload targets the
//     UpdateService, or the name or OEM job type says firmware update);
//     resets, configuration jobs and exports are never a push's;
//   - it names no other image: where the BMC records the image (a
//     SimpleUpdate's ImageURI) its file name is the push's, compared
//     without case; where it records payload targets, they overlap the
//     push's targets (when the push has any);
//   - it is newer than the push's record: not among the tasks the BMC
//     listed just before the push (p.Seen), or listed then with another
//     start time (BMCs that number tasks from 1 again after their own
//     reset reuse Ids). Without that list (Listed false) it must have
//     started at or after the record by the BMC's clock, as far as its
//     StartTime and the BMC's Date tell; a task without times then counts
//     only while it runs;
//   - where its novelty rests on times only (no list from before the
//     push), it is running (New, Starting, Running, Pending) or it ended
//     within PushEvidenceWindow: by its EndTime against the BMC's clock
//     where the BMC gives both, else by the push's record time against
//     now; a task that ended earlier is no evidence by itself (the staged
//     image or the inventory still are). A task that is new against the
//     list from before the push is the push's whatever its age: a worker
//     that resumes hours later (a store outage, a weekend) finds the push's
//     finished task and polls it instead of pushing the image again.
//
// Of several, the one that started last wins (the collection's last on a
// tie). Limits: the BMC never records the image's digest, so a firmware
// update started on the same BMC by someone else after the push was
// recorded, with no image name in its payload, is taken for the push's —
// the workflow then polls that task and verifies the inventory, so a
// wrong match costs a failed attempt, never a second push; a BMC that
// drops finished tasks at once (some keep none) shows only the staged
// image or the installed version; a BMC whose collection keeps more than
// MaxTasksListed tasks is read for its newest only.
func PushTask(p Push, l TaskList, now time.Time) (TaskInfo, bool) {
	seen := make(map[string]time.Time, len(p.Seen))
	for _, s := range p.Seen {
		seen[s.ID] = s.Start
	}
	// The push's record time on the BMC's clock.
	var bmcAt time.Time
	if !l.Now.IsZero() && !p.At.IsZero() {
		bmcAt = l.Now.Add(-now.Sub(p.At))
	}
	var best TaskInfo
	found := false
	for _, t := range l.Tasks {
		if !t.Update {
			continue
		}
		if t.Image != "" && p.Image != "" && !sameImage(t.Image, p.Image) {
			continue
		}
		if len(t.Targets) > 0 && len(p.Targets) > 0 && !overlap(t.Targets, p.Targets) {
			continue
		}
		switch {
		case p.Listed:
			if start, ok := seen[t.ID]; ok && start.Equal(t.Start) {
				continue
			}
		case !t.Start.IsZero() && !bmcAt.IsZero():
			if t.Start.Before(bmcAt.Add(-taskClockSlack)) {
				continue
			}
		case !waitingTask(t.State):
			continue
		}
		if !p.Listed && !waitingTask(t.State) {
			var age time.Duration
			if !t.End.IsZero() && !l.Now.IsZero() {
				age = l.Now.Sub(t.End)
			} else {
				age = now.Sub(p.At)
			}
			if age > PushEvidenceWindow {
				continue
			}
		}
		if !found || !t.Start.Before(best.Start) {
			best, found = t, true
		}
	}
	return best, found
}

// StagedImage reports the inventory member that shows push p's image
// staged: a member that is not installed (a word of its Id or Name is
// pending, staged or staging: XCC's BMC-Primary-Pending, Supermicro's
// Staging_BMC) whose version is the push's target version, found by the
// component's matcher (model may be nil: then by the push's targets, the
// member's Id starting with one of them).
func StagedImage(inv Inventory, model *Model, p Push) (string, bool) {
	if p.Version == "" {
		return "", false
	}
	var comp *Component
	if model != nil {
		comp = model.Components[p.Component]
	}
	for _, e := range inv.Entries {
		if e.Version != p.Version || !(stagedWord(e.ID) || stagedWord(e.Name)) {
			continue
		}
		if comp != nil && comp.Matches(e.ID) {
			return e.ID, true
		}
		for _, t := range p.Targets {
			if strings.HasPrefix(e.ID, t) {
				return e.ID, true
			}
		}
	}
	return "", false
}

// imageName is the file name of an artifact's file name or URL.
func imageName(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		s = u.Path
	}
	return strings.ToLower(path.Base(s))
}

func sameImage(a, b string) bool { return imageName(a) == imageName(b) }

func overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y || path.Base(x) == path.Base(y) {
				return true
			}
		}
	}
	return false
}
