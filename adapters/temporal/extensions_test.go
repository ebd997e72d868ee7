package temporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
)

// siteServers is the serverRegistered source of a fake site: its NetBox
// and its Ironic instances' inventories.
type siteServers struct{ site *fakes.Site }

func (s siteServers) Device(ctx context.Context, name string) (intent.Device, error) {
	return s.site.NetBox.Device(ctx, name)
}

func (s siteServers) Inventory(ctx context.Context, instance, node string) ([]byte, error) {
	ir, ok := s.site.Ironic[instance]
	if !ok {
		return nil, fmt.Errorf("no Ironic %s", instance)
	}
	return ir.Inventory(ctx, node)
}

const notifyDef = `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "notify", "label": "notify", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [
   {"label": "hook", "taskType": "ExtensionTaskWebhook", "failurePolicy": "continue",
    "options": {"endpoint": "https://hooks.example.com/", "method": "POST", "requestTemplate": "{{ server.netboxDevice }} {{ server.ironicNode }}"}},
   {"label": "announce", "taskType": "ExtensionTaskSsh",
    "options": {"host": "10.0.0.9", "port": 22, "timeout": 10, "commandTemplate": "echo {{ server.serialNumber | shellquote }}"}}]}]}`

func dispatcher(t *testing.T, site *fakes.Site) (*extensions.Dispatcher, *extensionsfake.Runner, *extensionsfake.Store) {
	t.Helper()
	x, ps := extensions.Parse([]byte(notifyDef), "notify.json")
	if x == nil {
		t.Fatal(ps)
	}
	reg, _ := extensions.NewRegistry(x)
	runner, store := extensionsfake.NewRunner(), extensionsfake.NewStore()
	runner.On("hook", extensionsfake.Outcome{Err: extensions.TaskFailed.New("receiver said 503")})
	d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: runner, extensions.TaskSSH: runner}, store)
	d.Servers = siteServers{site}
	return d, runner, store
}

// A successful enrollment submitted with Events starts the serverRegistered
// dispatch as a child workflow: the event built from NetBox and the node's
// inventory by an activity, every task delivered with its stable ID and
// recorded; a failed task does not fail the enrollment.
func TestEnrollmentFiresServerRegistered(t *testing.T) {
	for _, events := range []bool{true, false} {
		t.Run(fmt.Sprintf("events=%v", events), func(t *testing.T) {
			site, exec, req := world(t, "cpu-u10")
			d, runner, store := dispatcher(t, site)
			table, err := flow.Merge(exec, d)
			if err != nil {
				t.Fatal(err)
			}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.SetStartTime(site.Clock.Now())
			env.SetTestTimeout(time.Minute)
			var enrollmentRun string
			followSleeps(env, site.Clock, nil, func(info *activity.Info) {
				if info.ActivityType.Name == enrollment.StepReadIntent {
					enrollmentRun = info.WorkflowExecution.RunID
				}
			})
			temporal.Register(env, &temporal.Activities{Exec: table}, temporal.ActivityOptions{}, temporal.Enrollment, temporal.ServerRegistered)
			env.ExecuteWorkflow(temporal.WorkflowName, temporal.Input{Request: req, Identity: "id-cpu-u10", Events: events})
			if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
				t.Fatalf("enrollment: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
			}
			var res enrollment.Result
			if err := env.GetWorkflowResult(&res); err != nil || !res.Enrolled || res.Node == "" {
				t.Fatalf("result %+v (%v)", res, err)
			}
			reqs := runner.Requests()
			if !events {
				if len(reqs) != 0 {
					t.Fatalf("%d deliveries without Events", len(reqs))
				}
				return
			}
			if len(reqs) != 2 {
				t.Fatalf("%d deliveries, want the two tasks", len(reqs))
			}
			// The event is the enrollment run's: another run that enrolls
			// the host is another event.
			eventID := extensions.ServerRegisteredEventID(enrollmentRun)
			if enrollmentRun == "" || reqs[0].EventID != eventID {
				t.Fatalf("event %s, want the enrollment run %q's", reqs[0].EventID, enrollmentRun)
			}
			if reqs[0].DeliveryID != extensions.DeliveryID(eventID, "notify", "hook") || reqs[0].Body != "cpu-u10 "+res.Node {
				t.Errorf("first delivery %+v", reqs[0])
			}
			recs, err := store.Executions(context.Background(), extensions.Query{EventID: eventID})
			status := map[string]extensions.ExecStatus{}
			for _, r := range recs {
				status[r.Task] = r.Status
			}
			if err != nil || len(recs) != 2 || status["hook"] != extensions.StatusFailed || status["announce"] != extensions.StatusSucceeded {
				t.Errorf("records %+v (%v)", recs, err)
			}
		})
	}
}

// Extension dispatch of one event runs the same steps in the same order
// on Temporal as inline, and reports the same.
func TestExtensionsWorkflowMatchesLocal(t *testing.T) {
	site := rack()
	ev, _, err := extensions.NewEvent("evt-1", extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "SN1", "netboxDevice": "d", "ironicNode": "n"}}`))
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ := dispatcher(t, site)
	var localSteps []string
	rt := d.Local(clock.NewFake(clock.Epoch))
	rt.RoundTrip = true
	rt.OnEvent = func(e flow.Event) {
		if e.Kind == "step" {
			localSteps = append(localSteps, e.Step)
		}
	}
	want, err := extensions.Fire(context.Background(), rt, ev)
	if err != nil {
		t.Fatal(err)
	}

	d2, _, _ := dispatcher(t, site)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var steps []string
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		if _, ok := temporal.DeferredSleep(info, args); !ok {
			steps = append(steps, info.ActivityType.Name)
		}
	})
	temporal.Register(env, &temporal.Activities{Exec: d2}, temporal.ActivityOptions{}, temporal.Extensions)
	env.ExecuteWorkflow(temporal.ExtensionsWorkflowName, ev)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var got extensions.Report
	if err := env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(steps) != fmt.Sprint(localSteps) {
		t.Errorf("steps on Temporal %v, inline %v", steps, localSteps)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("report on Temporal %+v, inline %+v", got, want)
	}
}

// losingRun is the extensions.run activity of a worker that is lost once
// the first run of task returned: Temporal sees the activity's heartbeat
// time out, after the task's effect happened.
func losingRun(a *temporal.Activities, task string) func(context.Context, json.RawMessage, *temporal.Delay) (json.RawMessage, error) {
	lost := false
	return func(ctx context.Context, in json.RawMessage, delay *temporal.Delay) (json.RawMessage, error) {
		out, err := a.Step(ctx, in, delay)
		var run struct {
			Task struct {
				Task string `json:"task"`
			} `json:"task"`
		}
		if !lost && json.Unmarshal(in, &run) == nil && run.Task.Task == task {
			lost = true
			return nil, sdktemporal.NewHeartbeatTimeoutError()
		}
		return out, err
	}
}

// An SSH task whose extensions.run activity lost its worker after the
// command ran is not run a second time: Temporal does not retry it, and
// the dispatch records it EXTENSION_TASK_INTERRUPTED. A webhook lost the
// same way is delivered again, with the same webhook-id.
func TestLostWorkerAfterTheEffectDoesNotRunAnSSHTaskTwice(t *testing.T) {
	for _, task := range []string{"announce", "hook"} {
		t.Run(task, func(t *testing.T) {
			d, runner, store := dispatcher(t, rack())
			runner.On("hook", extensionsfake.Outcome{})
			ev, _, err := extensions.NewEvent("evt-lost", extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "SN1", "netboxDevice": "d", "ironicNode": "n"}}`))
			if err != nil {
				t.Fatal(err)
			}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.SetTestTimeout(time.Minute)
			var attempts []string
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				if info.ActivityType.Name == extensions.StepRun {
					attempts = append(attempts, fmt.Sprintf("attempt %d, heartbeat timeout %s, start-to-close %s", info.Attempt, info.HeartbeatTimeout, info.StartToCloseTimeout))
				}
			})
			acts := &temporal.Activities{Exec: d}
			temporal.Register(env, acts, temporal.ActivityOptions{}, temporal.Extensions)
			env.RegisterActivityWithOptions(losingRun(acts, task), activity.RegisterOptions{Name: extensions.StepRun, DisableAlreadyRegisteredCheck: true})
			env.ExecuteWorkflow(temporal.ExtensionsWorkflowName, ev)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var rep extensions.Report
			if err := env.GetWorkflowResult(&rep); err != nil {
				t.Fatal(err)
			}
			runs := 0
			for _, r := range runner.Requests() {
				if r.Task == task {
					runs++
				}
			}
			var got extensions.Delivery
			for _, del := range rep.Deliveries {
				if del.Task == task {
					got = del
				}
			}
			if task == "hook" {
				if runs != 2 || got.Status != extensions.StatusSucceeded {
					t.Fatalf("webhook: %d deliveries, %s; want it delivered again (%v)", runs, got.Status, attempts)
				}
				for _, r := range runner.Requests() {
					if r.DeliveryID != got.DeliveryID && r.Task == "hook" {
						t.Errorf("a retry carried delivery ID %s, want %s", r.DeliveryID, got.DeliveryID)
					}
				}
				return
			}
			if runs != 1 {
				t.Fatalf("the SSH command ran %d times with delivery ID %s, want once (activities: %v)", runs, got.DeliveryID, attempts)
			}
			// Two calls: the lost one, and the one that found the delivery
			// started; each a first attempt, bounded by the task's timeout
			// (10 s: connect, log in and run, plus a margin), its heartbeat
			// as long.
			if want := "[attempt 1, heartbeat timeout 45s, start-to-close 45s attempt 1, heartbeat timeout 45s, start-to-close 45s]"; fmt.Sprint(attempts[1:]) != want {
				t.Errorf("the SSH task's activities: %v, want %s", attempts[1:], want)
			}
			if got.Status != extensions.StatusFailed || got.Code != "EXTENSION_TASK_INTERRUPTED" {
				t.Fatalf("the SSH task ended %s %s, want failed EXTENSION_TASK_INTERRUPTED", got.Status, got.Code)
			}
			rec, ok, _ := store.Execution(context.Background(), got.DeliveryID)
			if !ok || !strings.HasPrefix(rec.Message, "EXTENSION_TASK_INTERRUPTED:") {
				t.Fatalf("record %+v", rec)
			}
		})
	}
}
