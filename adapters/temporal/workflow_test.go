package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The SDK's test environment keeps process-wide helpers alive.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*sharedWorkerStopChannel)"),
		// An activity cancelled while the test environment waits to retry
		// it (a step deferred past the workflow's cancellation) leaves the
		// environment's retry goroutine and its timeout watch blocked.
		goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*testWorkflowEnvironmentImpl).executeActivityWithRetryForTest"),
		goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*testWorkflowEnvironmentImpl).ExecuteActivity.func2"),
	)
}

// rack is a small fake site: healthy and broken hosts on two Ironic instances.
func rack() *fakes.Site {
	site := fakes.NewSite()
	site.AddIronic("ironic-gpu")
	site.AddIronic("ironic-cpu")
	ib := map[string]any{"infiniband": map[string]any{"rails": 8}}
	for _, h := range []fakes.HostSpec{
		{Name: "gpu-u02", Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: ib, Vendor: "lenovo"},
		{Name: "cpu-u10", Class: intent.ClassCPUBaremetal, Vendor: "dell"},
		{Name: "cpu-u11", Class: intent.ClassCPUBaremetal, Manufacturer: "Supermicro", Model: "SYS-821GE-TNHR", Vendor: "supermicro"},
		{Name: "bad-noclass", NoClass: true},
		{Name: "bad-switch", Class: intent.ClassSwitch},
		{Name: "bad-offline", Status: intent.StatusOffline},
		{Name: "bad-nogputype", Class: intent.ClassGPUCompute, Manufacturer: "Dell", Model: "PowerEdge XE9680"},
		{Name: "bad-ztp", Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: map[string]any{}, Vendor: "lenovo"},
	} {
		site.AddHost(h)
	}
	moved := site.AddHost(fakes.HostSpec{Name: "bad-miscabled", Class: intent.ClassCPUBaremetal, Vendor: "dell"})
	moved.NICs[1].Port = "swp60"
	dead := site.AddHost(fakes.HostSpec{Name: "bad-optics", Class: intent.ClassCPUBaremetal, Vendor: "dell"})
	for i := range dead.NICs {
		dead.NICs[i].Link = "down"
	}
	return site
}

func siteConfig() enrollment.SiteConfig {
	return enrollment.SiteConfig{
		ConfigureDHCP: true, ConfigureBMC: true, IronicEnrol: true,
		IronicInstances: map[string]string{intent.ClassGPUCompute: "ironic-gpu", intent.ClassCPUBaremetal: "ironic-cpu"},
		EnrolProject:    "baremetal-enrol",
	}
}

// outcome is one run of the workflow: its result, error and trace of
// steps and sleeps in order.
type outcome struct {
	res   enrollment.Result
	err   error
	trace []string
	// observed is what the runtime and the body reported (observations).
	observed *observations
}

// runTemporal runs the workflow under the SDK's test environment. The fake
// site's clock follows the workflow's sleeps (timers, and sleeps deferred
// into the next step), as it follows Local's.
func runTemporal(t testing.TB, site *fakes.Site, exec temporal.Dispatcher, req enrollment.Request) outcome {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(site.Clock.Now())
	env.SetTestTimeout(time.Minute)
	o := outcome{observed: &observations{}}
	followSleeps(env, site.Clock, func(d time.Duration) { o.trace = append(o.trace, "sleep "+d.String()) },
		func(info *activity.Info) { o.trace = append(o.trace, "step "+info.ActivityType.Name) })
	temporal.Register(env, &temporal.Activities{Exec: exec}, temporal.ActivityOptions{Observer: o.observed}, temporal.Enrollment)
	env.ExecuteWorkflow(temporal.WorkflowName, temporal.Input{Request: req, Identity: "id-" + req.Device})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	o.err = env.GetWorkflowError()
	if o.err == nil {
		if err := env.GetWorkflowResult(&o.res); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// followSleeps moves clk with the workflow's sleeps in env — its timers,
// and the first attempts of steps that carry the sleep before them
// (temporal.DeferredSleep) — telling onSleep of each, and onStep of every
// attempt that runs a step.
func followSleeps(env *testsuite.TestWorkflowEnvironment, clk *clock.Fake, onSleep func(time.Duration), onStep func(*activity.Info)) {
	sleep := func(d time.Duration) {
		if onSleep != nil {
			onSleep(d)
		}
		clk.Advance(d)
	}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		if d, ok := temporal.DeferredSleep(info, args); ok {
			sleep(d)
			return
		}
		if onStep != nil {
			onStep(info)
		}
	})
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { sleep(d) })
}

// runLocal runs the same body inline on the site's clock.
func runLocal(site *fakes.Site, exec *enrollment.Executor, req enrollment.Request) outcome {
	o := outcome{observed: &observations{}}
	rt := &flow.Local{Steps: exec, Log: exec.Log, Clock: site.Clock, RoundTrip: true, Observer: o.observed, OnEvent: func(e flow.Event) {
		switch e.Kind {
		case "step":
			o.trace = append(o.trace, "step "+e.Step)
		case "sleep":
			o.trace = append(o.trace, "sleep "+e.Took.String())
		}
	}}
	o.res, o.err = enrollment.Enroll(context.Background(), rt, req)
	return o
}

func appError(t *testing.T, err error) *sdktemporal.ApplicationError {
	t.Helper()
	var app *sdktemporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatalf("workflow error %v (%T) is not an ApplicationError", err, err)
	}
	return app
}

// world is one fresh fake site with its executor and a request for device.
// DHCP is configured only when the executor has a DHCP phase wired.
func world(t testing.TB, device string) (*fakes.Site, *enrollment.Executor, enrollment.Request) {
	t.Helper()
	site := rack()
	exec := enrolltest.Executor(site, nil)
	cfg := siteConfig()
	cfg.ConfigureDHCP = exec.DHCP != nil
	req, err := enrollment.Submit(context.Background(), site.NetBox, device, enrollment.SubmitOptions{Site: "lab1", Config: cfg, PlatformClassReady: true})
	if err != nil {
		t.Fatalf("submit %s: %v", device, err)
	}
	return site, exec, req
}

// enrolledBefore enrols the device once inline, so a fault can be set on
// its Ironic node before the run under test.
func enrolledBefore(t *testing.T, site *fakes.Site, exec *enrollment.Executor, req enrollment.Request) {
	t.Helper()
	if _, err := enrollment.Enroll(context.Background(), &flow.Local{Steps: exec, Log: exec.Log, Clock: site.Clock}, req); err != nil {
		t.Fatalf("first enrollment of %s: %v", req.Device, err)
	}
}

// TestSameStepsAsLocal: for the same fake site and faults, the workflow
// under Temporal and under flow.Local run the same steps and sleeps
// in the same order and end the same way.
func TestSameStepsAsLocal(t *testing.T) {
	cpu := func(s *fakes.Site) *fakes.Ironic { return s.Ironic["ironic-cpu"] }
	tests := []struct {
		name   string
		device string
		fault  func(*testing.T, *fakes.Site, *enrollment.Executor, enrollment.Request)
	}{
		{name: "fresh cpu host", device: "cpu-u10"},
		{name: "fresh gpu host", device: "gpu-u02"},
		{name: "supermicro host", device: "cpu-u11"},
		{name: "rerun on a converged host", device: "cpu-u10", fault: enrolledBefore},
		{name: "clean failed node held locked", device: "cpu-u10", fault: func(t *testing.T, s *fakes.Site, e *enrollment.Executor, r enrollment.Request) {
			enrolledBefore(t, s, e, r)
			cpu(s).SetState("cpu-u10", "clean failed")
			cpu(s).HoldLock("cpu-u10", "conductor-2", 3*time.Minute)
		}},
		{name: "inspect failed node, cleaning fails once", device: "cpu-u10", fault: func(t *testing.T, s *fakes.Site, e *enrollment.Executor, r enrollment.Request) {
			enrolledBefore(t, s, e, r)
			cpu(s).SetState("cpu-u10", "inspect failed")
			cpu(s).FailCleaning("cpu-u10", 1)
		}},
		{name: "netbox 5xx once", device: "cpu-u10", fault: func(_ *testing.T, s *fakes.Site, _ *enrollment.Executor, _ enrollment.Request) {
			s.Inject(fakes.SysNetBox, "*", 1, hostforge.ErrUnavailable)
		}},
		{name: "miscabled", device: "bad-miscabled"},
		{name: "dead optics", device: "bad-optics"},
		{name: "no gpu type", device: "bad-nogputype"},
		{name: "switch", device: "bad-switch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func(temporalRun bool) outcome {
				site, exec, req := world(t, tt.device)
				if tt.fault != nil {
					tt.fault(t, site, exec, req)
				}
				if temporalRun {
					return runTemporal(t, site, exec, req)
				}
				return runLocal(site, exec, req)
			}
			local, tmp := run(false), run(true)
			if !slices.Equal(local.trace, tmp.trace) {
				t.Fatalf("step sequences differ\nlocal:    %v\ntemporal: %v", local.trace, tmp.trace)
			}
			if l, tm := local.observed.keys(), tmp.observed.keys(); !slices.Equal(l, tm) || len(l) == 0 {
				t.Fatalf("observations differ\nlocal:    %q\ntemporal: %q", l, tm)
			}
			if len(local.trace) == 0 && tt.device != "bad-switch" {
				t.Fatal("no steps ran")
			}
			lc, tc := hostforge.CodeOf(local.err), ""
			if tmp.err != nil {
				tc = appError(t, tmp.err).Type()
			}
			if lc != tc {
				t.Fatalf("local ended with %q (%v), temporal with %q", lc, local.err, tc)
			}
			if tmp.err == nil && (tmp.res.Enrolled != local.res.Enrolled || tmp.res.ProvisionState != local.res.ProvisionState || tmp.res.Node != local.res.Node) {
				t.Fatalf("results differ: local %+v, temporal %+v", local.res, tmp.res)
			}
		})
	}
}

// TestHealthyHostTimeSkips: the cleaning polls and the inspection wait are
// workflow timers, skipped by the test environment, and the host ends
// available and tagged.
func TestHealthyHostTimeSkips(t *testing.T) {
	site, exec, req := world(t, "cpu-u10")
	start := time.Now()
	o := runTemporal(t, site, exec, req)
	if o.err != nil {
		t.Fatalf("enrollment failed: %v", o.err)
	}
	if !o.res.Enrolled || o.res.ProvisionState != "available" {
		t.Fatalf("result %+v, want enrolled and available", o.res)
	}
	var slept time.Duration
	for _, s := range o.trace {
		if d, ok := sleepOf(s); ok {
			slept += d
		}
	}
	if slept < 5*time.Minute {
		t.Fatalf("workflow slept %s in total; cleaning alone waits minutes (trace %v)", slept, o.trace)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("the run took %s of real time; waits must be skipped timers", took)
	}
	d, _ := site.NetBox.Device(context.Background(), "cpu-u10")
	if !slices.Contains(d.Tags, intent.DefaultIronicTag) || d.Status != intent.StatusActive {
		t.Fatalf("device %s tags %v status %s, want tagged ironic and active", d.Name, d.Tags, d.Status)
	}
}

func sleepOf(s string) (time.Duration, bool) {
	var d string
	if _, err := fmt.Sscanf(s, "sleep %s", &d); err != nil {
		return 0, false
	}
	v, err := time.ParseDuration(d)
	return v, err == nil
}

// TestDemoFailuresSurfaceAsApplicationErrors runs hosts broken in NetBox
// and on site through the real executor.
func TestDemoFailuresSurfaceAsApplicationErrors(t *testing.T) {
	tests := []struct {
		device     string
		code       string
		noActivity bool
	}{
		{"bad-noclass", "IRONIC_ROUTING_UNRESOLVED", true},
		{"bad-switch", "IRONIC_ROUTING_UNRESOLVED", true},
		{"bad-offline", "NETBOX_STATUS_INELIGIBLE", false},
		{"bad-nogputype", "PLATFORM_CLASS_UNRESOLVABLE", false},
		{"bad-ztp", "PLATFORM_CLASS_UNRESOLVABLE", false},
		{"bad-miscabled", "INSPECTION_CABLING_MISMATCH", false},
	}
	for _, tt := range tests {
		t.Run(tt.device, func(t *testing.T) {
			site, exec, req := world(t, tt.device)
			o := runTemporal(t, site, exec, req)
			app := appError(t, o.err)
			spec, _ := hostforge.Lookup(tt.code)
			if app.Type() != tt.code || app.NonRetryable() != !spec.Retryable {
				t.Fatalf("error type %s non-retryable %v, want %s non-retryable %v", app.Type(), app.NonRetryable(), tt.code, !spec.Retryable)
			}
			var f hostforge.Failure
			var res enrollment.Result
			if err := app.Details(&f, &res); err != nil {
				t.Fatalf("details: %v", err)
			}
			if f.Code != tt.code || f.Owner != spec.Owner || res.Failure == nil || res.Failure.Code != tt.code || res.Device != tt.device {
				t.Fatalf("details carry failure %+v and result %+v", f, res)
			}
			ran := 0
			for _, s := range o.trace {
				if len(s) > 5 && s[:5] == "step " {
					ran++
				}
			}
			if tt.noActivity && ran != 0 {
				t.Fatalf("%d activities ran before routing failed: %v", ran, o.trace)
			}
			if !tt.noActivity && ran == 0 {
				t.Fatal("no activity ran")
			}
		})
	}
}

// stub is a dispatcher that answers one step with scripted errors and
// passes every other step to the real executor.
type stub struct {
	exec  *enrollment.Executor
	step  string
	errs  []error
	calls int
}

func (s *stub) StepNames() []string { return s.exec.StepNames() }

func (s *stub) Dispatch(ctx context.Context, step string, in []byte) ([]byte, error) {
	if step == s.step {
		s.calls++
		if len(s.errs) > 0 {
			err := s.errs[0]
			if len(s.errs) > 1 {
				s.errs = s.errs[1:]
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return s.exec.Dispatch(ctx, step, in)
}

// TestEveryFailureCode: every failure code linked into the workflow, raised
// by a step, leaves the workflow as an ApplicationError of that type, with
// NonRetryable = !Retryable and the Failure in its details; a retryable
// one is first retried by the body within the attempt budget.
func TestEveryFailureCode(t *testing.T) {
	codes := hostforge.Codes()
	if len(codes) < 20 {
		t.Fatalf("only %d codes are linked; the phase packages should declare many more", len(codes))
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i].Code < codes[j].Code })
	for _, spec := range codes {
		t.Run(spec.Code, func(t *testing.T) {
			site, exec, req := world(t, "cpu-u10")
			s := &stub{exec: exec, step: enrollment.StepActivateDevice,
				errs: []error{(&spec).New("raised by the test for %s", spec.Code)}}
			o := runTemporal(t, site, s, req)
			app := appError(t, o.err)
			if app.Type() != spec.Code || app.NonRetryable() == spec.Retryable {
				t.Fatalf("type %s non-retryable %v, want %s non-retryable %v", app.Type(), app.NonRetryable(), spec.Code, !spec.Retryable)
			}
			var f hostforge.Failure
			if err := app.Details(&f); err != nil || f.Code != spec.Code || f.Action != spec.Action || f.Retryable != spec.Retryable {
				t.Fatalf("details %+v (%v)", f, err)
			}
			want := 1
			if spec.Retryable {
				want = enrollment.DefaultMaxAttempts
			}
			if s.calls != want {
				t.Fatalf("the step ran %d times, want %d", s.calls, want)
			}
		})
	}
}

// TestWaitBecomesTimer: a step's wait crosses the activity boundary, and
// the body sleeps it on a workflow timer before rerunning the same step.
func TestWaitBecomesTimer(t *testing.T) {
	site, exec, req := world(t, "cpu-u10")
	s := &stub{exec: exec, step: enrollment.StepActivateDevice, errs: []error{
		hostforge.RetryAfter(40*time.Second, "netbox_busy", "busy"),
		hostforge.RetryAfter(40*time.Second, "netbox_busy", "still busy"),
		nil,
	}}
	o := runTemporal(t, site, s, req)
	if o.err != nil {
		t.Fatal(o.err)
	}
	i := slices.Index(o.trace, "step "+enrollment.StepActivateDevice)
	want := []string{"step " + enrollment.StepActivateDevice, "sleep 40s", "step " + enrollment.StepActivateDevice, "sleep 40s", "step " + enrollment.StepActivateDevice}
	if i < 0 || len(o.trace) < i+len(want) || !slices.Equal(o.trace[i:i+len(want)], want) {
		t.Fatalf("trace %v does not hold %v", o.trace, want)
	}
}

// TestWaitBudget: a wait past its budget fails the workflow with
// WAIT_BUDGET_EXHAUSTED, retryable.
func TestWaitBudget(t *testing.T) {
	site, exec, req := world(t, "cpu-u10")
	s := &stub{exec: exec, step: enrollment.StepActivateDevice, errs: []error{
		hostforge.RetryAfter(10*time.Minute, "netbox_busy", "busy forever"),
	}}
	o := runTemporal(t, site, s, req)
	app := appError(t, o.err)
	if app.Type() != enrollment.WaitBudgetExhausted.Code || app.NonRetryable() {
		t.Fatalf("got %s non-retryable %v", app.Type(), app.NonRetryable())
	}
	if s.calls != 4 {
		t.Fatalf("step ran %d times, want 4 (3 waits of 10m fit the 30m budget)", s.calls)
	}
}

// TestUnclassifiedActivityErrors: errors that are not hostforge's (an
// activity that is not ours, a timeout, a panic) still reach the body as
// classified failures, so the workflow fails with a code instead of
// failing workflow tasks forever.
func TestUnclassifiedActivityErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code string
	}{
		{"foreign application error", sdktemporal.NewApplicationError("boom", "SomethingElse"), hostforge.Unclassified.Code},
		{"declared type without details", sdktemporal.NewNonRetryableApplicationError("refused", enrollment.StatusIneligible.Code, nil), enrollment.StatusIneligible.Code},
		{"plain error", errors.New("plain"), hostforge.Unclassified.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, exec, req := world(t, "cpu-u10")
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			temporal.Register(env, &temporal.Activities{Exec: exec}, temporal.ActivityOptions{}, temporal.Enrollment)
			env.OnActivity(enrollment.StepReadIntent, mock.Anything, mock.Anything, mock.Anything).Return(nil, tt.err)
			env.ExecuteWorkflow(temporal.WorkflowName, temporal.Input{Request: req})
			app := appError(t, env.GetWorkflowError())
			if app.Type() != tt.code {
				t.Fatalf("type %s, want %s", app.Type(), tt.code)
			}
		})
	}
}

// Activity timeouts become TEMPORAL_STEP_TIMED_OUT, retried by the body.
func TestActivityTimeoutIsRetried(t *testing.T) {
	_, exec, req := world(t, "bad-offline")
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	acts := &temporal.Activities{Exec: exec}
	temporal.Register(env, acts, temporal.ActivityOptions{}, temporal.Enrollment)
	calls := 0
	env.OnActivity(enrollment.StepReadIntent, mock.Anything, mock.Anything, mock.Anything).Return(func(ctx context.Context, in json.RawMessage, _ *temporal.Delay) (json.RawMessage, error) {
		calls++
		if calls == 1 {
			return nil, sdktemporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		return acts.Exec.Dispatch(ctx, enrollment.StepReadIntent, in)
	})
	env.ExecuteWorkflow(temporal.WorkflowName, temporal.Input{Request: req})
	app := appError(t, env.GetWorkflowError())
	if app.Type() != enrollment.StatusIneligible.Code || calls != 2 {
		t.Fatalf("type %s after %d reads, want NETBOX_STATUS_INELIGIBLE after a retried timeout", app.Type(), calls)
	}
}

// TestCancellation: a cancelled workflow ends, classified, without hanging.
func TestCancellation(t *testing.T) {
	site, exec, req := world(t, "cpu-u10")
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(site.Clock.Now())
	env.SetTestTimeout(time.Minute)
	// The fakes' time follows the workflow's skipped sleeps (the BMC
	// phase's iDRAC jobs progress while the workflow waits).
	followSleeps(env, site.Clock, nil, nil)
	stepper := &stub{exec: exec, step: enrollment.StepActivateDevice, errs: []error{hostforge.RetryAfter(20*time.Minute, "slow", "slow")}}
	temporal.Register(env, &temporal.Activities{Exec: stepper}, temporal.ActivityOptions{}, temporal.Enrollment)
	env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Minute)
	env.ExecuteWorkflow(temporal.WorkflowName, temporal.Input{Request: req})
	err := env.GetWorkflowError()
	if err == nil {
		t.Fatal("a cancelled workflow succeeded")
	}
	var app *sdktemporal.ApplicationError
	var canceled *sdktemporal.CanceledError
	switch {
	case errors.As(err, &app):
		if app.Type() != hostforge.Cancelled.Code {
			t.Fatalf("type %s, want CANCELLED", app.Type())
		}
	case errors.As(err, &canceled):
	default:
		t.Fatalf("cancellation ended as %v", err)
	}
}
