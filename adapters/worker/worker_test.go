package worker_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/adapters/worker"
	"github.com/hostforge/hostforge/enrollment"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakOptions...)
}

// leakOptions are goleak's exceptions; the integration build adds its own.
var leakOptions = []goleak.Option{
	// The SDK keeps process-wide helpers alive.
	goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
	goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*sharedWorkerStopChannel)"),
}

// labSystems wires the systems of a lab's config, its Ironic on a port
// nothing answers (nothing is contacted before a step runs).
func labSystems(t *testing.T) *wiring.Systems {
	t.Helper()
	ctx := context.Background()
	l, err := lab.Start(ctx, lab.Options{Dir: filepath.Join(t.TempDir(), "lab")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	cfg, err := wiring.Load(l.Config)
	if err != nil {
		t.Fatal(err)
	}
	// No Ironic answers here (whatever runs on the default port).
	cfg.Ironic[0].URL = "http://127.0.0.1:1"
	sys, err := wiring.Open(ctx, cfg, wiring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sys.Close() })
	return sys
}

// noClient is a Temporal client New accepts; the tests here never call it.
type noClient struct{ client.Client }

// TestNewBindsWhatTheConfigNames: on a config with a ledger and Ironic,
// the worker runs the enrollment, its settlement, extension dispatch and
// the Ironic projection as a schedule every ledger.projection_interval;
// every definition and step registers on one worker (their step names do
// not clash). Without the ledger, neither the settlement nor the
// projection is bound, and there is no schedule.
func TestNewBindsWhatTheConfigNames(t *testing.T) {
	sys := labSystems(t)
	w, err := worker.New(sys, noClient{}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.Workflows(), []string{"enrollment", "settlement", "extensions", "retirement", "projection"}; !slices.Equal(got, want) {
		t.Fatalf("workflows %v, want %v", got, want)
	}
	want := []temporal.Schedule{{Purpose: temporal.PurposeProjection, Workflow: temporal.ProjectionWorkflowName, Every: lab.LedgerProjectionInterval}}
	if got := w.Schedules(); !slices.Equal(got, want) {
		t.Fatalf("schedules %+v, want %+v", got, want)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	if err := w.Register(env); err != nil {
		t.Fatalf("registering: %v", err)
	}

	bare := *sys
	bare.Proofs, bare.Projector = nil, nil
	w, err = worker.New(&bare, noClient{}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Workflows(); !slices.Equal(got, []string{"enrollment", "extensions", "retirement"}) || len(w.Schedules()) != 0 {
		t.Fatalf("without a ledger: workflows %v, schedules %v", got, w.Schedules())
	}
}

// TestProjectionWorkflow: the schedule's workflow runs one projection pass
// through the worker's registration.
func TestProjectionWorkflow(t *testing.T) {
	sys := labSystems(t)
	w, err := worker.New(sys, noClient{}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	if err := w.Register(env); err != nil {
		t.Fatal(err)
	}
	env.ExecuteWorkflow(temporal.ProjectionWorkflowName, temporal.PeriodicInput{Site: sys.Site})
	// No Ironic answers behind the lab's config: the pass lists nothing
	// and fails classified, as the next interval's run would retry.
	err = env.GetWorkflowError()
	if err == nil {
		t.Fatal("a projection with no Ironic to list succeeded")
	}
	if f := temporal.FailureOf(err); f == nil || f.Code != enrollment.ProjectionListFailed.Code {
		t.Fatalf("projection failed with %v, want %s", err, enrollment.ProjectionListFailed.Code)
	}
}

// TestNewRefusesWhatCannotRun: no systems, no client, negative options.
func TestNewRefusesWhatCannotRun(t *testing.T) {
	sys := labSystems(t)
	for name, f := range map[string]func() error{
		"no systems": func() error { _, err := worker.New(nil, noClient{}, worker.Options{}); return err },
		"no client":  func() error { _, err := worker.New(sys, nil, worker.Options{}); return err },
		"negative timeout": func() error {
			_, err := worker.New(sys, noClient{}, worker.Options{StopTimeout: -time.Second})
			return err
		},
		"negative capacity": func() error {
			_, err := worker.New(sys, noClient{}, worker.Options{MaxConcurrentSteps: -1})
			return err
		},
	} {
		if err := f(); hostforge.CodeOf(err) != worker.WorkerFailed.Code {
			t.Errorf("%s: %v, want %s", name, err, worker.WorkerFailed.Code)
		}
	}
}

// TestRunRefusesAnAddressInUse: a metrics address that does not listen
// fails Run before it polls, with the address named.
func TestRunRefusesAnAddressInUse(t *testing.T) {
	sys := labSystems(t)
	w, err := worker.New(sys, noClient{}, worker.Options{MetricsListen: "256.0.0.1:1", NoSchedules: true})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Run(context.Background())
	if hostforge.CodeOf(err) != worker.WorkerFailed.Code || !strings.Contains(err.Error(), "256.0.0.1:1") {
		t.Fatalf("Run = %v, want %s naming the address", err, worker.WorkerFailed.Code)
	}
	if err := w.Run(context.Background()); hostforge.CodeOf(err) != worker.WorkerFailed.Code {
		t.Fatalf("a second Run = %v", err)
	}
}
