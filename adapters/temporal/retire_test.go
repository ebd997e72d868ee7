package temporal_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/retirement"
)

// retireRig is an enrolled, decommissioning host, a retirement executor
// and an extension dispatcher with a task bound to both retire stages.
type retireRig struct {
	site   *fakes.Site
	steps  *flow.Table
	runner *extensionsfake.Runner
	req    retirement.Request
}

func newRetireRig(t *testing.T, run string) retireRig {
	t.Helper()
	site := rack()
	cfg := siteConfig()
	const host = "cpu-u10"
	if _, err := enrollment.Enroll(context.Background(), enrolltest.Executor(site, nil).Local(site.Clock),
		enrollment.NewRequest(host, intent.ClassCPUBaremetal, "lab1", cfg, false, enrollment.Params{})); err != nil {
		t.Fatal(err)
	}
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.DeviceByName(host).Status = string(intent.StatusDecommissioning)
		return nil
	})
	def := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "dns", "label": "dns", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverDecommissioned", "tasks": [{"label": "forget", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "https://dns.example.net/forget", "method": "POST", "requestTemplate": "{{ server.netboxDevice }}"}}]},
  {"stage": "serverDeleteDNS", "tasks": [{"label": "delete-record", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "https://dns.example.net/delete", "method": "POST", "requestTemplate": "{{ serverDNSRecordSet.hostname }}"}}]}]}`
	x, problems := extensions.Parse([]byte(def), "dns.json")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	reg, _ := extensions.NewRegistry(x)
	runner := extensionsfake.NewRunner()
	d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: runner}, extensionsfake.NewStore())
	steps, err := flow.Merge(enrolltest.RetireExecutor(site, nil), d)
	if err != nil {
		t.Fatal(err)
	}
	rc := enrolltest.RetireSiteConfig(cfg)
	rc.Events = true
	return retireRig{site: site, steps: steps, runner: runner,
		req: retirement.NewRequest(host, intent.ClassCPUBaremetal, "lab1", run, "", rc, retirement.Params{})}
}

// The retirement runs as one Temporal workflow — its steps and the
// extension dispatch's as its activities, its polls as durable timers —
// and ends exactly as the same body on flow.Local: the same steps, the
// same result, the same deliveries.
func TestRetirementOnTemporalMatchesLocal(t *testing.T) {
	rig := newRetireRig(t, "retire-t1")
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(rig.site.Clock.Now())
	env.SetTestTimeout(time.Minute)
	var trace []string
	followSleeps(env, rig.site.Clock, nil, func(info *activity.Info) { trace = append(trace, info.ActivityType.Name) })
	temporal.Register(env, &temporal.Activities{Exec: rig.steps}, temporal.ActivityOptions{}, temporal.Retirement(wiring.AnnounceRetirement))
	env.ExecuteWorkflow(temporal.RetireWorkflowName, rig.req)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res retirement.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !res.Retired || res.Run != "retire-t1" || len(res.Deliveries) != 2 || res.Deliveries[1].Event != "retire-t1/serverDeleteDNS" {
		t.Fatalf("result %+v", res)
	}
	if got := rig.runner.Requests(); len(got) != 2 || got[1].Body != "cpu-u10" {
		t.Fatalf("deliveries made %+v", got)
	}
	for _, step := range []string{retirement.StepIronicGate, retirement.StepErase, retirement.StepRemoveNode, retirement.StepNetBox, extensions.StepRun, retirement.StepAnnounced} {
		if !slices.Contains(trace, step) {
			t.Fatalf("no %s activity in %v", step, trace)
		}
	}

	local := newRetireRig(t, "retire-t1")
	var ltrace []string
	rt := &flow.Local{Steps: local.steps, Clock: local.site.Clock, RoundTrip: true, OnEvent: func(e flow.Event) {
		if e.Kind == "step" {
			ltrace = append(ltrace, e.Step)
		}
	}}
	lres, err := retirement.Workflow{Announce: wiring.AnnounceRetirement}.Run(context.Background(), rt, local.req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(trace, ltrace) {
		t.Fatalf("Temporal ran %v\nLocal ran    %v", trace, ltrace)
	}
	if lres.Erase != res.Erase || len(lres.Phases) != len(res.Phases) || lres.Deliveries[0].DeliveryID != res.Deliveries[0].DeliveryID {
		t.Fatalf("Local %+v\nTemporal %+v", lres, res)
	}
}
