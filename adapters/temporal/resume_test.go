package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
)

// chained is a workflow run to its end under the SDK's test environment,
// across every continue-as-new: each run is a new environment started with
// the input and resume the last one continued with.
type chained struct {
	// runs holds each run's history length as a server counts it.
	runs  []int
	trace []string
	err   error
	// result decodes the last run's result.
	result func(any) error
}

// runChained runs the workflow name on the step set. The test environment
// keeps no history, so each run's length is modelled as a server records
// a workflow that issues one command at a time (historyModel) and handed
// to the workflow through SetCurrentHistoryLength. The clock follows the
// workflow's timers, as the fakes' clocks follow Local's sleeps.
func runChained(t testing.TB, clk *clock.Fake, exec temporal.Dispatcher, opts temporal.ActivityOptions, defs []temporal.Definition, name string, in any) chained {
	t.Helper()
	var c chained
	args := []any{in}
	for run := 0; ; run++ {
		if run > 200 {
			t.Fatal("the workflow continued as new 200 times")
		}
		var s testsuite.WorkflowTestSuite
		s.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
		env := s.NewTestWorkflowEnvironment()
		env.SetStartTime(clk.Now())
		env.SetTestTimeout(2 * time.Minute)
		h := historyModel{}
		env.SetCurrentHistoryLength(h.start())
		followSleeps(env, clk, func(d time.Duration) {
			c.trace = append(c.trace, "sleep "+d.String())
			h.sleep()
		}, func(info *activity.Info) { c.trace = append(c.trace, "step "+info.ActivityType.Name) })
		env.SetOnActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) {
			env.SetCurrentHistoryLength(h.activity())
		})
		env.SetOnTimerFiredListener(func(string) { env.SetCurrentHistoryLength(h.timer()) })
		temporal.Register(env, &temporal.Activities{Exec: exec}, opts, defs...)
		env.ExecuteWorkflow(name, args...)
		if !env.IsWorkflowCompleted() {
			t.Fatalf("run %d did not complete", run)
		}
		c.runs = append(c.runs, h.closed())
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if errors.As(err, &can) {
			if can.WorkflowType.Name != name {
				t.Fatalf("run %d continued as %s", run, can.WorkflowType.Name)
			}
			var next json.RawMessage
			var res temporal.Resume
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next, &res); err != nil {
				t.Fatalf("decoding the continuation of run %d: %v", run, err)
			}
			if res.Runs != run+1 || res.Entries == 0 {
				t.Fatalf("run %d continued with resume %+v", run, res)
			}
			args = []any{next, &res}
			continue
		}
		c.err = err
		c.result = env.GetWorkflowResult
		return c
	}
}

// historyModel counts a run's history as the server records a workflow
// that has one command in flight at a time: WorkflowExecutionStarted and
// the first workflow task (scheduled, started), then per activity its
// scheduled, started and closed events and the workflow task it wakes
// (completed for the last task, then scheduled and started) — a step that
// carries the sleep before it is one activity, its retry adds nothing —
// per timer its started and fired events and that task, and at the run's
// first sleep the version marker of deferred sleeps with its search
// attribute (two events, sent with the next command). The current length
// is the ID of the latest WorkflowTaskStarted, what
// GetCurrentHistoryLength returns. TestHistoryModelMatchesRecordedHistories
// holds it to real histories.
type historyModel struct {
	n int
	// versioned: the run's first sleep recorded the version marker.
	versioned bool
}

func (h *historyModel) start() int    { h.n = 3; return h.n }
func (h *historyModel) activity() int { h.n += 6; return h.n }
func (h *historyModel) timer() int    { h.n += 5; return h.n }
func (h *historyModel) child() int    { h.n += 5; return h.n }

// sleep books a sleep, deferred or on a timer: the run's first records the
// version marker and its search attribute.
func (h *historyModel) sleep() {
	if !h.versioned {
		h.versioned = true
		h.n += 2
	}
}

// closed is the run's final length: its last workflow task completes and
// the run closes (completes, fails or continues as new).
func (h *historyModel) closed() int { return h.n + 2 }

// TestContinueAsNewResumesWhereItWas runs enrollments whose runs continue
// as new every few commands (ContinueAsNewAt 40, about six steps per run)
// and holds them to the same body run inline on the same faults: the same
// steps and sleeps in the same order — none repeated, none skipped, so no
// side effect is redone — and the same end. The node-lock budget spent
// before a continuation carries into the next run: a lock held past it
// fails at the same poll as inline.
func TestContinueAsNewResumesWhereItWas(t *testing.T) {
	cpu := func(s *fakes.Site) *fakes.Ironic { return s.Ironic["ironic-cpu"] }
	tests := []struct {
		name   string
		device string
		fault  func(*testing.T, *fakes.Site, *enrollment.Executor, enrollment.Request)
	}{
		{name: "fresh cpu host", device: "cpu-u10"},
		{name: "fresh gpu host", device: "gpu-u02"},
		{name: "inspect failed node, cleaning fails once", device: "cpu-u10", fault: func(t *testing.T, s *fakes.Site, e *enrollment.Executor, r enrollment.Request) {
			enrolledBefore(t, s, e, r)
			cpu(s).SetState("cpu-u10", "inspect failed")
			cpu(s).FailCleaning("cpu-u10", 1)
		}},
		{name: "node locked past its budget", device: "cpu-u10", fault: func(t *testing.T, s *fakes.Site, e *enrollment.Executor, r enrollment.Request) {
			enrolledBefore(t, s, e, r)
			cpu(s).SetState("cpu-u10", "clean failed")
			cpu(s).HoldLock("cpu-u10", "conductor-2", 2*time.Hour)
		}},
		{name: "netbox 5xx once", device: "cpu-u10", fault: func(_ *testing.T, s *fakes.Site, _ *enrollment.Executor, _ enrollment.Request) {
			s.Inject(fakes.SysNetBox, "*", 1, hostforge.ErrUnavailable)
		}},
		{name: "dead optics", device: "bad-optics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site, exec, req := world(t, tt.device)
			if tt.fault != nil {
				tt.fault(t, site, exec, req)
			}
			before := site.Calls()
			local := runLocal(site, exec, req)
			localCalls := site.Calls().Sub(before)

			site, exec, req = world(t, tt.device)
			if tt.fault != nil {
				tt.fault(t, site, exec, req)
			}
			before = site.Calls()
			c := runChained(t, site.Clock, exec, temporal.ActivityOptions{ContinueAsNewAt: 40}, []temporal.Definition{temporal.Enrollment},
				temporal.WorkflowName, temporal.Input{Request: req, Identity: "id-" + req.Device})
			if len(c.runs) < 3 {
				t.Fatalf("%d runs (lengths %v); the test wants several continuations", len(c.runs), c.runs)
			}
			for i, n := range c.runs {
				// A run continues before its next command once it reached
				// 40 events: one command (6) and the close (2) past it.
				if n > 40+6+2 {
					t.Errorf("run %d recorded %d events, past the threshold and one command", i, n)
				}
			}
			if !slices.Equal(local.trace, c.trace) {
				t.Fatalf("step sequences differ\nlocal:    %v\ntemporal: %v", local.trace, c.trace)
			}
			lc, tc := hostforge.CodeOf(local.err), ""
			if c.err != nil {
				tc = appError(t, c.err).Type()
			}
			if lc != tc {
				t.Fatalf("local ended with %q (%v), the continued workflow with %q (%v)", lc, local.err, tc, c.err)
			}
			if c.err == nil {
				var res enrollment.Result
				if err := c.result(&res); err != nil {
					t.Fatal(err)
				}
				if res.Enrolled != local.res.Enrolled || res.ProvisionState != local.res.ProvisionState || len(res.Phases) != len(local.res.Phases) {
					t.Fatalf("results differ: local %+v, continued %+v", local.res, res)
				}
			}
			// Every system saw the calls and writes of the inline run: the
			// replays sent nothing again.
			if got := site.Calls().Sub(before); !reflect.DeepEqual(got, localCalls) || got.Writes() == 0 {
				t.Fatalf("calls by system: continued %v, inline %v", got, localCalls)
			}
			t.Logf("%d runs of %v events; %d steps", len(c.runs), c.runs, len(c.trace))
		})
	}
}

// TestHistoryLimit: the limit is 2,000 events, and a workflow that waits
// far longer than one run can record — a settlement whose enrollment runs
// for 30 hours, probed about once a minute — continues as new at the
// default threshold: every run stays under the limit, and the probes, the
// wait budget and the outcome are those of one uninterrupted run.
func TestHistoryLimit(t *testing.T) {
	if temporal.HistoryLimit != 2000 || temporal.DefaultContinueAsNewAt >= temporal.HistoryLimit || temporal.DefaultContinueAsNewAt < temporal.HistoryLimit-200 {
		t.Fatalf("HistoryLimit %d, DefaultContinueAsNewAt %d", temporal.HistoryLimit, temporal.DefaultContinueAsNewAt)
	}
	const probes = 30 * 60
	run := func(maxWait time.Duration, chain bool) (int, enrollment.ProofOutcome, string, []int) {
		site := fakes.NewSite()
		site.Proofs.Register("cpu-u10", "fm-7")
		site.Proofs.SetReference("cpu-u10", "ironic-cpu/node-1")
		res, _ := json.Marshal(enrollment.Result{Device: "cpu-u10", Instance: "ironic-cpu", Node: "node-1", Enrolled: true, ProvisionState: "available",
			Phases: []enrollment.PhaseRecord{{Phase: enrollment.PhaseIronic, Status: "done"}}})
		// The enrollment runs for about 30 hours: it closes at the last probe.
		n := 0
		await := flow.Bind(temporal.StepAwaitClose, time.Minute, func(ctx context.Context, in temporal.AwaitCloseIn) (temporal.AwaitCloseOut, error) {
			if n++; n <= probes {
				return temporal.AwaitCloseOut{}, hostforge.RetryAfter(5*time.Second, temporal.WaitEnrollmentRunning, "running")
			}
			return temporal.AwaitCloseOut{Status: enrollment.CompletionCompleted, ClosedAt: site.Clock.Now(), Output: res}, nil
		})
		steps, err := flow.Merge(flow.MustTable(await), enrollment.ProofSteps(site.Proofs))
		if err != nil {
			t.Fatal(err)
		}
		in := temporal.SettleInput{Device: "cpu-u10", Identity: "fm-7", WorkflowID: "enroll/cpu-u10", RunID: "r1", MaxWait: maxWait}
		if !chain {
			out, err := temporal.Settle(context.Background(), &flow.Local{Steps: steps, Clock: site.Clock}, in)
			return n, out, hostforge.CodeOf(err), nil
		}
		c := runChained(t, site.Clock, steps, temporal.ActivityOptions{}, []temporal.Definition{temporal.Settlement}, temporal.SettleWorkflowName, in)
		var out enrollment.ProofOutcome
		code := ""
		if c.err != nil {
			code = appError(t, c.err).Type()
		} else if err := c.result(&out); err != nil {
			t.Fatal(err)
		}
		return n, out, code, c.runs
	}
	for _, tt := range []struct {
		name    string
		maxWait time.Duration
	}{{"the enrollment closes within the budget", 48 * time.Hour}, {"the wait budget runs out across runs", 20 * time.Hour}} {
		t.Run(tt.name, func(t *testing.T) {
			lp, lout, lcode, _ := run(tt.maxWait, false)
			tp, tout, tcode, runs := run(tt.maxWait, true)
			if len(runs) < 3 {
				t.Fatalf("%d runs (%v) for %d probes", len(runs), runs, lp)
			}
			for i, n := range runs {
				if n >= temporal.HistoryLimit {
					t.Errorf("run %d recorded %d events, not under %d", i, n, temporal.HistoryLimit)
				}
				if i < len(runs)-1 && n < temporal.DefaultContinueAsNewAt {
					t.Errorf("run %d continued at %d events, before the threshold", i, n)
				}
			}
			if lp != tp || lcode != tcode {
				t.Fatalf("inline: %d probes ending %q; continued: %d probes ending %q", lp, lcode, tp, tcode)
			}
			if lcode == "" {
				if lout.Action != tout.Action || tout.Action != enrollment.ProofEstablished {
					t.Fatalf("inline %+v, continued %+v", lout, tout)
				}
			} else if lcode != flow.WaitBudgetExhausted.Code {
				t.Fatalf("ended with %s, want the wait budget exhausted", lcode)
			}
			t.Logf("%d probes over %d runs of %v events", tp, len(runs), runs)
		})
	}
}

// TestHistoryModelMatchesRecordedHistories holds historyModel to the
// histories a real Temporal dev server recorded (testdata/histories): the
// modelled length of each run, from its activities, timers and children,
// is its real number of events.
func TestHistoryModelMatchesRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Events []struct {
				EventType string `json:"eventType"`
			} `json:"events"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m := historyModel{}
		m.start()
		for _, e := range h.Events {
			switch e.EventType {
			case "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED":
				m.activity()
			case "EVENT_TYPE_TIMER_STARTED":
				m.timer()
			case "EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED":
				m.child()
			case "EVENT_TYPE_MARKER_RECORDED":
				m.sleep()
			}
		}
		if got := m.closed(); got != len(h.Events) {
			t.Errorf("%s: modelled %d events, recorded %d", filepath.Base(f), got, len(h.Events))
		}
	}
}
