package temporal

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge"
)

// Bounded histories: continue-as-new under a body written once.
//
// A body (enrollment.Enroll, firmware.Update, the settlement, extension
// dispatch) is ordinary Go against flow.Runtime: its place — which phase,
// which poll of which attempt, how much of each wait budget is spent, the
// deadlines it computed — lives in its local variables, not in a state the
// adapter could hand to a new run. What the adapter does know is every
// answer the runtime gave the body: each step's outcome (its output, wait
// or failure), each sleep, each clock reading. The body is deterministic in
// those answers (Temporal's replay already requires it), so feeding the
// same answers to the same body, from the start, brings it back to exactly
// where it was, with the same local state.
//
// So each run journals those answers. When a run's history reaches
// ContinueAsNewAt events, the runtime stops the body before its next
// command (an activity or a timer), and the run continues as new with its
// input and the journal (a [Resume]). The new run starts the body over and
// answers it from the journal — no activity is scheduled, no timer started,
// nothing is sent anywhere again — until the journal is spent; from there
// the body runs live, at the command the last run stopped before. Attempt
// counts, wait budgets ([flow.Meter]), deadlines read from the clock and a
// poll loop's progress are all rebuilt by the replay, so they carry across
// runs; side effects are not repeated, because a replayed step is its
// recorded outcome, not a call.
//
// Only a run's own commands count against HistoryLimit: a replayed journal
// adds no event. The journal rides in the continued run's input, gzipped
// (a poll loop's answers are near copies of each other and compress to
// almost nothing); it grows with the whole workflow, its events do not.
// What a run does only once — starting its settlement child — runs in the
// first run alone.
//
// A replay checks each call against the journal (the same kind, the same
// step name, the same sleep): a body changed between two runs of one
// workflow (a new build deployed mid-run) fails with
// TEMPORAL_RESUME_DIVERGED instead of being answered with another step's
// outcome.

// HistoryLimit is the most events one run of a hostforge workflow records:
// every long-running workflow continues as new before it gets there.
const HistoryLimit = 2000

// EnrollmentHistoryBudget is the most events the history of an enrollment
// that reaches available without faults may record, on a lab's timing
// (Ironic's fake-hardware transitions polled every second, BMC resets and
// iDRAC jobs of seconds) and on production timing (inspections and
// cleanings of minutes, iDRAC jobs of minutes): up to about forty polls.
// Each poll of a step costs 6 events (the activity's three, which carry
// the sleep before it, and the workflow task it wakes; delay.go), so the
// budget is mostly polls; a body that polls more, or a runtime that
// records more per step, fails TestEnrollmentHistoryBudget.
const EnrollmentHistoryBudget = 300

// historyHeadroom is what a run keeps below HistoryLimit when it decides to
// continue. Between two decisions the body issues one command (an activity
// adds 6 events with the workflow task that follows it, a timer 5), and the
// continuation adds 2; a workflow task a dead worker timed out adds 3.
const historyHeadroom = 100

// DefaultContinueAsNewAt is the history length at which a run continues
// as new.
const DefaultContinueAsNewAt = HistoryLimit - historyHeadroom

// maxJournalBytes bounds a journal decoded from a continued run's input.
const maxJournalBytes = 64 << 20

// ResumeDiverged is a continued run whose body does not call what its
// journal recorded.
var ResumeDiverged = hostforge.Declare(hostforge.Spec{
	Code:      "TEMPORAL_RESUME_DIVERGED",
	Phase:     "any",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "A workflow that continued as new resumed on a build whose workflow code differs from the one that ran it before (the message names what the journal recorded and what the body asked for); nothing was sent again. Let runs started before a deploy finish on workers of the old build, or rerun the workflow.",
})

// Resume is what a continued run starts from: the journal of the runs
// before it. It is the workflow's second argument, absent (nil) on a
// first run.
type Resume struct {
	// Runs counts the runs before this one.
	Runs int `json:"runs"`
	// Entries counts the journal's entries.
	Entries int `json:"entries"`
	// Journal is the entries' JSON, gzipped.
	Journal []byte `json:"journal"`
}

// Entry kinds.
const (
	entryDo    = "d"
	entrySleep = "s"
	entryNow   = "n"
)

// entry is one answer the runtime gave the body.
type entry struct {
	Kind string `json:"k"`
	// Step, Out, Wait, Fail: a step's outcome (Out only when the body
	// asked for the output).
	Step string             `json:"s,omitempty"`
	Out  json.RawMessage    `json:"o,omitempty"`
	Wait *hostforge.Wait    `json:"w,omitempty"`
	Fail *hostforge.Failure `json:"f,omitempty"`
	// D is a sleep's duration.
	D time.Duration `json:"d,omitempty"`
	// T is a clock reading.
	T *time.Time `json:"t,omitempty"`
}

// err is the step's outcome as the body saw it.
func (e *entry) err() error {
	switch {
	case e.Fail != nil:
		f := *e.Fail
		return &f
	case e.Wait != nil:
		w := *e.Wait
		return &w
	}
	return nil
}

// setErr records a step's error: a wait, or a failure whose cause (not
// serialised) is folded into its message so the replayed error reads the
// same.
func (e *entry) setErr(err error) {
	o, f, w := hostforge.Classify(err)
	switch o {
	case hostforge.Waiting:
		c := *w
		e.Wait = &c
	case hostforge.Failed:
		c := *f
		if c.Cause != nil {
			if c.Message != "" {
				c.Message += ": "
			}
			c.Message += c.Cause.Error()
			c.Cause = nil
		}
		e.Fail = &c
	}
}

// journal is one run's record of the answers the body got, and the
// answers it replays from the runs before.
type journal struct {
	entries []entry
	// pos is the next entry to replay; at len(entries) the run is live.
	pos int
	// replayed is how many entries the resume carried.
	replayed int
	// runs counts the runs before this one.
	runs int
	// live counts the commands this run issued: a run continues only
	// after one, so every run makes progress.
	live       int
	continueAt int
	// continuing or diverged stop the body: the run continues as new, or
	// fails with the divergence.
	continuing bool
	diverged   *hostforge.Failure
}

// continueAt is the history length at which a run continues.
func (o ActivityOptions) continueAt() int {
	if o.ContinueAsNewAt > 0 {
		return o.ContinueAsNewAt
	}
	return DefaultContinueAsNewAt
}

// newJournal decodes a resume (nil: a first run).
func newJournal(r *Resume, continueAt int) (*journal, error) {
	j := &journal{continueAt: continueAt}
	if r == nil || len(r.Journal) == 0 {
		return j, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.Journal))
	if err != nil {
		return nil, ResumeDiverged.Wrap(err, "the journal of a continued run does not decode")
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxJournalBytes+1))
	if err != nil {
		return nil, ResumeDiverged.Wrap(err, "the journal of a continued run does not decode")
	}
	if len(raw) > maxJournalBytes {
		return nil, ResumeDiverged.New("the journal of a continued run is over %d bytes", maxJournalBytes)
	}
	if err := json.Unmarshal(raw, &j.entries); err != nil {
		return nil, ResumeDiverged.Wrap(err, "the journal of a continued run does not decode")
	}
	if len(j.entries) != r.Entries {
		return nil, ResumeDiverged.New("the journal of a continued run holds %d entries, its resume says %d", len(j.entries), r.Entries)
	}
	j.replayed, j.runs = len(j.entries), r.Runs
	return j, nil
}

// resume encodes the journal for the next run.
func (j *journal) resume() (*Resume, error) {
	raw, err := json.Marshal(j.entries)
	if err != nil {
		return nil, hostforge.Unclassified.Wrap(err, "encoding the journal")
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(raw); err != nil {
		return nil, hostforge.Unclassified.Wrap(err, "compressing the journal")
	}
	if err := zw.Close(); err != nil {
		return nil, hostforge.Unclassified.Wrap(err, "compressing the journal")
	}
	return &Resume{Runs: j.runs + 1, Entries: len(j.entries), Journal: b.Bytes()}, nil
}

func (j *journal) replaying() bool { return j.pos < len(j.entries) }

// stopped says whether the body was stopped (to continue, or diverged).
func (j *journal) stopped() bool { return j.continuing || j.diverged != nil }

// next returns the entry to replay, or stops the body when the call is not
// what the journal recorded.
func (j *journal) next(r *Runtime, kind, step string, d time.Duration) *entry {
	e := &j.entries[j.pos]
	if e.Kind != kind || e.Step != step || e.D != d {
		j.diverged = ResumeDiverged.New("entry %d of the journal recorded %s, the body asked for %s", j.pos, describe(e.Kind, e.Step, e.D), describe(kind, step, d))
		j.park(r)
	}
	j.pos++
	return e
}

func describe(kind, step string, d time.Duration) string {
	switch kind {
	case entryDo:
		return "step " + step
	case entrySleep:
		return "a sleep of " + d.String()
	}
	return "a clock reading"
}

// due says whether the run should continue as new before its next command.
func (j *journal) due(r *Runtime) bool {
	if j.live == 0 {
		return false
	}
	info := workflow.GetInfo(r.ctx)
	return info.GetCurrentHistoryLength() >= j.continueAt || info.GetContinueAsNewSuggested()
}

// continueNow stops the body before its next command so the run
// continues as new; a sleep held for that command is slept first (the
// next run starts its command at once). A cancelled sleep returns its
// error to the body instead.
func (j *journal) continueNow(r *Runtime) error {
	if err := r.flush(); err != nil {
		return err
	}
	j.continuing = true
	j.park(r)
	return nil
}

// park stops the body for good: the workflow function returns (continuing
// or failing) and the SDK ends the body's coroutine with the run.
func (j *journal) park(r *Runtime) {
	ch := workflow.NewChannel(r.ctx)
	for {
		ch.Receive(r.ctx, nil)
	}
}

func (j *journal) do(r *Runtime, step string, in, out any) error {
	if j.replaying() {
		e := j.next(r, entryDo, step, 0)
		if out != nil && len(e.Out) > 0 {
			if err := json.Unmarshal(e.Out, out); err != nil {
				j.diverged = ResumeDiverged.Wrap(err, "entry %d of the journal (step %s) does not decode into the body's output", j.pos-1, step)
				j.park(r)
			}
		}
		return e.err()
	}
	if j.due(r) {
		if err := j.continueNow(r); err != nil {
			return err
		}
	}
	e := entry{Kind: entryDo, Step: step}
	var err error
	if out == nil {
		err = r.execute(step, in, nil)
	} else {
		var raw json.RawMessage
		if err = r.execute(step, in, &raw); err == nil {
			if uerr := json.Unmarshal(raw, out); uerr != nil {
				err = hostforge.Unclassified.Wrap(uerr, "step %s: its result does not decode", step)
			} else {
				e.Out = raw
			}
		}
	}
	e.setErr(err)
	j.entries = append(j.entries, e)
	j.pos++
	j.live++
	return err
}

func (j *journal) sleep(r *Runtime, d time.Duration) error {
	if j.replaying() {
		j.next(r, entrySleep, "", d)
		return nil
	}
	if j.due(r) {
		if err := j.continueNow(r); err != nil {
			return err
		}
	}
	if err := r.timer(d); err != nil {
		return err // cancelled: the run ends here
	}
	j.entries = append(j.entries, entry{Kind: entrySleep, D: d})
	j.pos++
	j.live++
	return nil
}

func (j *journal) now(r *Runtime) time.Time {
	if j.replaying() {
		e := j.next(r, entryNow, "", 0)
		if e.T == nil {
			j.diverged = ResumeDiverged.New("entry %d of the journal is a clock reading without a time", j.pos-1)
			j.park(r)
		}
		return *e.T
	}
	t := r.clock()
	j.entries = append(j.entries, entry{Kind: entryNow, T: &t})
	j.pos++
	return t
}

// String summarises the journal for logs.
func (j *journal) String() string {
	return fmt.Sprintf("%d entries (%d replayed) after %d runs", len(j.entries), j.replayed, j.runs)
}
