package metrics_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/metrics"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
)

// exporters is a registry with every hostforge metric, as a worker has.
func exporters(t *testing.T) (*prometheus.Registry, *metrics.Exporters) {
	t.Helper()
	reg := metrics.NewRegistry()
	ex, err := metrics.NewExporters(reg)
	if err != nil {
		t.Fatal(err)
	}
	return reg, ex
}

// sample is one series' value: a counter's or gauge's value, a
// histogram's sample count.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// gather reads every hostforge series of the registry.
func gather(t *testing.T, reg *prometheus.Registry) []sample {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []sample
	for _, mf := range fams {
		if !strings.HasPrefix(mf.GetName(), metrics.Namespace+"_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			s := sample{name: mf.GetName(), labels: map[string]string{}}
			for _, lp := range m.GetLabel() {
				s.labels[lp.GetName()] = lp.GetValue()
			}
			switch {
			case m.GetCounter() != nil:
				s.value = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				s.value = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				s.value = float64(m.GetHistogram().GetSampleCount())
			}
			out = append(out, s)
		}
	}
	return out
}

// value sums the series of name whose labels include want.
func value(samples []sample, name string, want map[string]string) float64 {
	var v float64
	for _, s := range samples {
		if s.name != name {
			continue
		}
		match := true
		for k, x := range want {
			if s.labels[k] != x {
				match = false
				break
			}
		}
		if match {
			v += s.value
		}
	}
	return v
}

// series counts a registry's hostforge series, histogram buckets included.
func series(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range fams {
		if !strings.HasPrefix(mf.GetName(), metrics.Namespace+"_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			n++
			if h := m.GetHistogram(); h != nil {
				n += len(h.GetBucket()) + 2
			}
		}
	}
	return n
}

// enrollAll runs every device of site through enrollment.Enroll on a
// flow.Local reporting to obs, and returns the results by device.
func enrollAll(t *testing.T, site *fakes.Site, cfg enrollment.SiteConfig, obs flow.Observer, devices []string) map[string]enrollment.Result {
	t.Helper()
	exec := enrolltest.Executor(site, nil)
	out := map[string]enrollment.Result{}
	for _, d := range devices {
		req, err := enrollment.Submit(context.Background(), site.NetBox, d, enrollment.SubmitOptions{Site: enrolltest.DemoSite, Config: cfg, PlatformClassReady: true})
		if err != nil {
			t.Fatalf("submit %s: %v", d, err)
		}
		rt := exec.Local(site.Clock)
		rt.Subject, rt.Observer, rt.RoundTrip = d, obs, true
		res, _ := enrollment.Enroll(context.Background(), rt, req)
		out[d] = res
	}
	return out
}

// TestDemoRackCounts enrols the demo rack — healthy hosts and hosts
// broken in NetBox and on site, each with its own code and owner —
// through flow.Local and reads back what /metrics counts: the runs by
// outcome, code and owner, and a phase histogram sample per phase run.
func TestDemoRackCounts(t *testing.T) {
	reg, ex := exporters(t)
	site := enrolltest.DemoRack()
	results := enrollAll(t, site, enrolltest.DemoSiteConfig(), ex.Workflows, site.HostNames())
	got := gather(t, reg)
	enr := map[string]string{"workflow": enrollment.Workflow}

	type key struct{ code, owner string }
	failed := map[key]int{}
	enrolled := 0
	phases := map[[2]string]int{}
	ironicRan := 0
	for _, r := range results {
		if r.Failure != nil {
			failed[key{r.Failure.Code, string(r.Failure.Owner)}]++
		} else {
			enrolled++
		}
		for _, p := range r.Phases {
			if p.Status != "skipped" {
				phases[[2]string{p.Phase, p.Status}]++
			}
			if p.Phase == enrollment.PhaseIronic && p.Status != "skipped" {
				ironicRan++
			}
		}
	}
	if len(failed) < 5 || enrolled < 5 {
		t.Fatalf("the demo rack gave %d enrolled and failures %v; want both kinds", enrolled, failed)
	}
	if v := value(got, "hostforge_workflow_runs_started_total", enr); v != float64(len(results)) {
		t.Errorf("enrollments started %v, want %d", v, len(results))
	}
	if v := value(got, "hostforge_workflow_runs_finished_total", map[string]string{"workflow": enrollment.Workflow, "outcome": "succeeded", "code": "", "owner": ""}); v != float64(enrolled) {
		t.Errorf("enrollments succeeded %v, want %d", v, enrolled)
	}
	for k, n := range failed {
		labels := map[string]string{"workflow": enrollment.Workflow, "outcome": "failed", "code": k.code, "owner": k.owner}
		if v := value(got, "hostforge_workflow_runs_finished_total", labels); v != float64(n) {
			t.Errorf("enrollments failed with %s (owner %s): %v, want %d", k.code, k.owner, v, n)
		}
	}
	if v := value(got, "hostforge_workflow_runs_finished_total", map[string]string{"workflow": enrollment.Workflow, "outcome": "failed"}); v != float64(len(results)-enrolled) {
		t.Errorf("enrollments failed in all %v, want %d", v, len(results)-enrolled)
	}
	// Spot-check the table in enrolltest.DemoRack: two hosts no Ironic
	// instance routes, owned by the infrastructure engineers.
	if v := value(got, "hostforge_workflow_runs_finished_total", map[string]string{"code": enrollment.RoutingUnresolved.Code, "owner": string(hostforge.OwnerInfraEng)}); v != 2 {
		t.Errorf("IRONIC_ROUTING_UNRESOLVED counted %v times, want the demo rack's 2", v)
	}
	if v := value(got, "hostforge_workflow_run_duration_seconds", enr); v != float64(len(results)) {
		t.Errorf("run durations observed %v, want %d", v, len(results))
	}
	for p, n := range phases {
		labels := map[string]string{"workflow": enrollment.Workflow, "phase": p[0], "status": p[1]}
		if v := value(got, "hostforge_phase_duration_seconds", labels); v != float64(n) {
			t.Errorf("phase %s %s: %v samples, want %d", p[0], p[1], v, n)
		}
	}
	if v := value(got, "hostforge_phase_duration_seconds", map[string]string{"phase": enrollment.PhaseIronicInspection}); v != float64(ironicRan) {
		t.Errorf("inspections observed %v, want one per Ironic phase that ran (%d)", v, ironicRan)
	}
	if v := value(got, "hostforge_phase_duration_seconds", map[string]string{"phase": enrollment.PhaseIronicCleaning, "status": "done"}); v != float64(enrolled) {
		t.Errorf("cleanings done %v, want one per enrolled host (%d)", v, enrolled)
	}
	if v := value(got, "hostforge_step_duration_seconds", map[string]string{"step": enrollment.StepReadIntent, "outcome": "done"}); v < float64(len(results)-2) {
		t.Errorf("read_intent attempts %v, want one per routed host at least", v)
	}
	for _, s := range got {
		for k, v := range s.labels {
			for d := range results {
				if strings.Contains(v, d) {
					t.Fatalf("%s{%s=%q} carries device %s", s.name, k, v, d)
				}
			}
		}
	}
}

// TestDurationsOnTheRuntimeClock: phase and run durations are the time
// the fake clock advanced, not the wall clock's.
func TestDurationsOnTheRuntimeClock(t *testing.T) {
	site := enrolltest.DemoRack()
	ex := &timing{}
	start := site.Clock.Now()
	enrollAll(t, site, enrolltest.DemoSiteConfig(), ex, []string{"cpu-r1-u10"})
	elapsed := site.Clock.Now().Sub(start)
	if elapsed < time.Minute {
		t.Fatalf("the fake enrollment took %s of virtual time; the check below needs some", elapsed)
	}
	if ex.run != elapsed {
		t.Errorf("the run observed %s, the clock advanced %s", ex.run, elapsed)
	}
	if ex.phases != elapsed {
		t.Errorf("the phases add up to %s, the clock advanced %s", ex.phases, elapsed)
	}
}

type timing struct{ run, phases time.Duration }

func (x *timing) Observe(o any) {
	switch o := o.(type) {
	case flow.RunEnded:
		x.run = o.Took
	case flow.PhaseEnded:
		if !strings.HasPrefix(o.Phase, "ironic.") { // parts of ironic, counted within it
			x.phases += o.Took
		}
	}
}

// TestHundredDevicesAddNoSeries: the label sets are bounded — a hundred
// more hosts enrolled add no series at all.
func TestHundredDevicesAddNoSeries(t *testing.T) {
	reg, ex := exporters(t)
	site := fakes.NewSite()
	site.AddIronic("ironic-cpu")
	// A pair of 64-port leaves per rack of 40 hosts.
	var names []string
	for i := range 101 {
		rack := i / 40
		if i%40 == 0 {
			site.AddSwitch(fmt.Sprintf("leaf-r%d-a", rack))
			site.AddSwitch(fmt.Sprintf("leaf-r%d-b", rack))
		}
		name := fmt.Sprintf("cpu-r%d-u%02d", rack, i%40)
		site.AddHost(fakes.HostSpec{Name: name, Class: intent.ClassCPUBaremetal, Vendor: "dell",
			Switches: []string{fmt.Sprintf("leaf-r%d-a", rack), fmt.Sprintf("leaf-r%d-b", rack)}})
		names = append(names, name)
	}
	cfg := enrolltest.DemoSiteConfig()
	cfg.IronicInstances = map[string]string{intent.ClassCPUBaremetal: "ironic-cpu"}
	res := enrollAll(t, site, cfg, ex.Workflows, names[:1])
	if res[names[0]].Failure != nil {
		t.Fatalf("first host: %v", res[names[0]].Failure)
	}
	after1 := series(t, reg)
	res = enrollAll(t, site, cfg, ex.Workflows, names[1:])
	for _, n := range names[1:] {
		if res[n].Failure != nil {
			t.Fatalf("%s: %v", n, res[n].Failure)
		}
	}
	if after101 := series(t, reg); after101 != after1 {
		t.Fatalf("%d series after one host, %d after 101", after1, after101)
	}
	if v := value(gather(t, reg), "hostforge_workflow_runs_finished_total", map[string]string{"outcome": "succeeded", "workflow": enrollment.Workflow}); v != 101 {
		t.Fatalf("enrollments succeeded %v, want 101", v)
	}
}

// TestLabelsFoldPastTheirBound: a caller that passes data where a
// constant belongs (a step named after a host) cannot grow a series per
// value: past the bound, values count as "other".
func TestLabelsFoldPastTheirBound(t *testing.T) {
	reg, ex := exporters(t)
	for i := range 1000 {
		ex.Workflows.Observe(flow.StepAttempt{Step: fmt.Sprintf("step-for-host-%d", i), Outcome: hostforge.Done, Took: time.Second})
	}
	got := gather(t, reg)
	steps := map[string]bool{}
	for _, s := range got {
		if s.name == "hostforge_step_duration_seconds" {
			steps[s.labels["step"]] = true
		}
	}
	if len(steps) > 201 || !steps[metrics.Other] {
		t.Fatalf("%d step values, other=%v; want the bound and the rest folded into other", len(steps), steps[metrics.Other])
	}
	if v := value(got, "hostforge_step_duration_seconds", nil); v != 1000 {
		t.Fatalf("%v attempts counted, want every one of 1000", v)
	}
}

// TestUndeclaredCodesCountAsUnclassified: only catalogue codes become
// labels, with the owner the catalogue names.
func TestUndeclaredCodesCountAsUnclassified(t *testing.T) {
	reg, ex := exporters(t)
	adHoc := &hostforge.Failure{Spec: hostforge.Spec{Code: "NOT_IN_THE_CATALOGUE", Owner: hostforge.OwnerDCOps}}
	ex.Workflows.Observe(flow.RunEnded{Workflow: enrollment.Workflow, Failure: adHoc})
	ex.Workflows.Observe(flow.RunEnded{Workflow: enrollment.Workflow, Failure: enrollment.RoutingUnresolved.New("x")})
	got := gather(t, reg)
	if v := value(got, "hostforge_workflow_runs_finished_total", map[string]string{"code": "NOT_IN_THE_CATALOGUE"}); v != 0 {
		t.Error("an undeclared code became a label value")
	}
	if v := value(got, "hostforge_workflow_runs_finished_total", map[string]string{"code": hostforge.Unclassified.Code, "owner": string(hostforge.OwnerSDK)}); v != 1 {
		t.Errorf("UNCLASSIFIED/SDK = %v, want the undeclared code's failure", v)
	}
	if v := value(got, "hostforge_workflow_runs_finished_total", map[string]string{"code": enrollment.RoutingUnresolved.Code, "owner": string(enrollment.RoutingUnresolved.Owner)}); v != 1 {
		t.Errorf("IRONIC_ROUTING_UNRESOLVED = %v, want 1", v)
	}
}

// fireWorld is extension dispatch on fakes: one extension whose tasks
// (label:type[:policy]) are bound to serverRegistered.
func fireWorld(t *testing.T, runner *extensionsfake.Runner, tasks ...string) *extensions.Dispatcher {
	t.Helper()
	var ts []string
	for _, spec := range tasks {
		parts := strings.Split(spec, ":")
		policy := ""
		if len(parts) > 2 {
			policy = fmt.Sprintf(`"failurePolicy": %q,`, parts[2])
		}
		var opts string
		switch parts[1] {
		case "webhook":
			opts = `"taskType": "ExtensionTaskWebhook", "options": {"endpoint": "https://hooks.example.com/x", "method": "POST", "requestTemplate": "{}"}`
		case "ssh":
			opts = `"taskType": "ExtensionTaskSsh", "options": {"host": "10.0.0.9", "port": 22, "timeout": 10, "commandTemplate": "true"}`
		}
		ts = append(ts, fmt.Sprintf(`{"label": %q, %s %s}`, parts[0], policy, opts))
	}
	def := fmt.Sprintf(`{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "notify", "label": "notify",
  "extensionType": "workflow", "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
  "onAssetChange": [{"stage": "serverRegistered", "tasks": [%s]}]}`, strings.Join(ts, ","))
	x, ps := extensions.Parse([]byte(def), "notify.json")
	if x == nil {
		t.Fatalf("definition: %v", ps)
	}
	reg, err := extensions.NewRegistry(x)
	if err != nil {
		t.Fatal(err)
	}
	return extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: runner, extensions.TaskSSH: runner}, extensionsfake.NewStore())
}

// TestExtensionFireCounts fires an event on fakes: a webhook that lands,
// one that waits once then lands, an SSH task that fails, and the task
// its failure skips. /metrics counts each delivery by status and the
// latency of those that ran.
func TestExtensionFireCounts(t *testing.T) {
	reg, ex := exporters(t)
	runner := extensionsfake.NewRunner()
	runner.On("slow", extensionsfake.Outcome{Err: hostforge.RetryAfter(30*time.Second, "receiver_busy", "429"), Times: 1})
	runner.On("broken", extensionsfake.Outcome{Err: extensions.TaskFailed.New("exit 1")})
	d := fireWorld(t, runner, "fast:webhook", "slow:webhook", "broken:ssh", "after:webhook")
	clk := clock.NewFake(clock.Epoch)
	rt := d.Local(clk)
	rt.Observer = ex.Workflows
	ev, _, err := extensions.NewEvent("evt-1", extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "SN1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := extensions.Fire(context.Background(), rt, ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deliveries) != 4 {
		t.Fatalf("deliveries %+v", rep.Deliveries)
	}
	got := gather(t, reg)
	stage := string(extensions.ServerRegisteredStage)
	for _, c := range []struct {
		typ, status string
		want        float64
	}{
		{"ExtensionTaskWebhook", "succeeded", 2},
		{"ExtensionTaskSsh", "failed", 1},
		{"ExtensionTaskWebhook", "skipped", 1},
		{"ExtensionTaskWebhook", "failed", 0},
	} {
		if v := value(got, "hostforge_extension_deliveries_total", map[string]string{"stage": stage, "task_type": c.typ, "status": c.status}); v != c.want {
			t.Errorf("%s %s deliveries: %v, want %v", c.typ, c.status, v, c.want)
		}
	}
	if v := value(got, "hostforge_extension_delivery_latency_seconds", map[string]string{"stage": stage}); v != 3 {
		t.Errorf("latencies observed %v, want the 3 deliveries that ran", v)
	}
	if v := value(got, "hostforge_waits_total", map[string]string{"step": extensions.StepRun, "reason": "receiver_busy"}); v != 1 {
		t.Errorf("receiver_busy waits %v, want 1", v)
	}
	if v := value(got, "hostforge_workflow_runs_finished_total", map[string]string{"workflow": extensions.Workflow, "outcome": "succeeded"}); v != 1 {
		t.Errorf("dispatch runs succeeded %v, want 1 (a failed task does not fail the dispatch)", v)
	}
	// The latency histogram puts the waited delivery at or past its 30 s.
	fams, _ := reg.Gather()
	var buckets []string
	for _, mf := range fams {
		if mf.GetName() != "hostforge_extension_delivery_latency_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			typ := ""
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "task_type" {
					typ = lp.GetValue()
				}
			}
			for _, b := range m.GetHistogram().GetBucket() {
				buckets = append(buckets, fmt.Sprintf("%s %g:%d", typ, b.GetUpperBound(), b.GetCumulativeCount()))
			}
		}
	}
	sort.Strings(buckets)
	// The webhooks: one within 10 s, the waited one by 30 s; the SSH task
	// ran after the waited webhook, so it too landed only after 10 s.
	for _, want := range []string{"ExtensionTaskWebhook 10:1", "ExtensionTaskWebhook 30:2", "ExtensionTaskSsh 10:0", "ExtensionTaskSsh 30:1"} {
		if !contains(buckets, want) {
			t.Errorf("latency buckets %v lack %q", buckets, want)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// TestWaitBudgetExhaustion: a step whose waits outgrow their budget is
// counted by step and reason, its series there at zero from the first
// wait.
func TestWaitBudgetExhaustion(t *testing.T) {
	reg, ex := exporters(t)
	w := ex.Workflows
	w.Observe(flow.Waited{Step: "ironic_inspection", Reason: "node_locked", Sleep: 20 * time.Second})
	labels := map[string]string{"step": "ironic_inspection", "reason": "node_locked"}
	got := gather(t, reg)
	if !has(got, "hostforge_wait_budget_exhausted_total", labels) || value(got, "hostforge_wait_budget_exhausted_total", labels) != 0 {
		t.Fatal("the exhaustion series is not there at zero after the first wait")
	}
	w.Observe(flow.WaitExhausted{Step: "ironic_inspection", Reason: "node_locked", Waited: 15 * time.Minute, Budget: 15 * time.Minute})
	got = gather(t, reg)
	if value(got, "hostforge_wait_budget_exhausted_total", labels) != 1 || value(got, "hostforge_wait_seconds_total", map[string]string{"reason": "node_locked"}) != 20 {
		t.Fatalf("exhausted %v, waited %v s", value(got, "hostforge_wait_budget_exhausted_total", labels), value(got, "hostforge_wait_seconds_total", nil))
	}
}

func has(samples []sample, name string, labels map[string]string) bool {
	for _, s := range samples {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range labels {
			if s.labels[k] != v {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestSchedules: a declared schedule exports its interval and, until a
// run, its declaration as its last run; each run counts, sets the last
// run and observes its lag.
func TestSchedules(t *testing.T) {
	reg, ex := exporters(t)
	w := ex.Workflows
	declared := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	metrics.SetNow(w, func() time.Time { return declared })
	w.DeclareSchedule(metrics.ScheduleIronicProjection, time.Minute)
	s := map[string]string{"schedule": metrics.ScheduleIronicProjection}
	got := gather(t, reg)
	if value(got, "hostforge_schedule_interval_seconds", s) != 60 || value(got, "hostforge_schedule_last_run_timestamp_seconds", s) != float64(declared.Unix()) ||
		!has(got, "hostforge_schedule_runs_total", s) || value(got, "hostforge_schedule_runs_total", s) != 0 {
		t.Fatalf("declared schedule: %+v", got)
	}
	at := declared.Add(time.Minute)
	w.Observe(flow.ScheduleRun{Schedule: metrics.ScheduleIronicProjection, Scheduled: at, Started: at.Add(3 * time.Second)})
	w.DeclareSchedule(metrics.ScheduleIronicProjection, time.Minute) // a second declaration keeps the run
	got = gather(t, reg)
	if value(got, "hostforge_schedule_runs_total", s) != 1 || value(got, "hostforge_schedule_lag_seconds", s) != 1 ||
		value(got, "hostforge_schedule_last_run_timestamp_seconds", s) != float64(at.Add(3*time.Second).Unix()) {
		t.Fatalf("after a run: %+v", got)
	}
}
