package fleetsim

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/flow"
)

// Call is one thing a host's workflow did: a step with its input, or a
// sleep.
type Call struct {
	Step  string
	In    any
	Sleep time.Duration
}

// Script is every host's calls, in order, as one run made them.
type Script map[string][]Call

// recorder wraps a runtime and writes down every step and sleep.
type recorder struct {
	flow.Runtime
	calls *[]Call
}

func (r recorder) Do(ctx context.Context, step string, in, out any) error {
	// An input passed by pointer changes after the call (a polling body
	// carries its progress in it): record the value it had.
	if v := reflect.ValueOf(in); v.Kind() == reflect.Pointer && !v.IsNil() {
		in = v.Elem().Interface()
	}
	*r.calls = append(*r.calls, Call{Step: step, In: in})
	return r.Runtime.Do(ctx, step, in, out)
}

func (r recorder) Sleep(ctx context.Context, d time.Duration) error {
	*r.calls = append(*r.calls, Call{Sleep: d})
	inner := r.Runtime
	return inner.Sleep(ctx, d)
}

// Record runs the fleet through the workflow, like Run, and returns what
// each host's workflow called: the script a straight-line loop replays.
func (f *Fleet) Record(ctx context.Context, o Options) (RunStats, Script) {
	var mu sync.Mutex
	script := Script{}
	o.wrap = func(name string, rt flow.Runtime) flow.Runtime {
		calls := &[]Call{}
		mu.Lock()
		script[name] = nil
		mu.Unlock()
		return recorder{Runtime: rt, calls: calls}
	}
	o.done = func(name string, rt flow.Runtime) {
		if r, ok := rt.(recorder); ok {
			mu.Lock()
			script[name] = *r.calls
			mu.Unlock()
		}
	}
	return f.Run(ctx, o), script
}

// StraightLine makes the script's calls on the fleet with no engine: for
// each host, one goroutine calls the executor's step methods in the
// recorded order with the recorded inputs and sleeps the recorded sleeps on
// the fleet's virtual time — no workflow body, no runtime, no retry policy,
// no classification, no events. It is the limit the engine is measured
// against. It returns the first error that is not what the recording saw
// coming (a step it cannot call).
func (f *Fleet) StraightLine(ctx context.Context, exec *enrollment.Executor, script Script) error {
	steps := map[string]func(context.Context, any) error{
		enrollment.StepReadIntent: func(ctx context.Context, in any) error {
			_, err := exec.ReadIntent(ctx, in.(enrollment.ReadIntentIn))
			return err
		},
		enrollment.StepRecordPlatformClass: func(ctx context.Context, in any) error {
			_, err := exec.RecordPlatformClass(ctx, in.(enrollment.RecordPlatformClassIn))
			return err
		},
		enrollment.StepConfigureDHCP: func(ctx context.Context, in any) error {
			_, err := exec.ConfigureDHCP(ctx, in.(dhcp.Entry))
			return err
		},
		enrollment.StepConfigureBMC: func(ctx context.Context, in any) error {
			_, err := exec.ConfigureBMC(ctx, in.(bmc.Target))
			return err
		},
		enrollment.StepActivateDevice: func(ctx context.Context, in any) error {
			_, err := exec.ActivateDevice(ctx, in.(enrollment.ActivateIn))
			return err
		},
		enrollment.StepTagDevice: func(ctx context.Context, in any) error {
			_, err := exec.TagDevice(ctx, in.(enrollment.TagIn))
			return err
		},
		enrollment.StepIronicInspection: func(ctx context.Context, in any) error {
			_, err := exec.IronicInspection(ctx, in.(enrollment.IronicInspectionIn))
			return err
		},
		enrollment.StepIronicSwitchIPMI: func(ctx context.Context, in any) error {
			_, err := exec.IronicSwitchToIPMI(ctx, in.(enrollment.IronicNodeIn))
			return err
		},
		enrollment.StepIronicCleaning: func(ctx context.Context, in any) error {
			_, err := exec.IronicCleaning(ctx, in.(enrollment.IronicCleaningIn))
			return err
		},
		enrollment.StepIronicFinalize: func(ctx context.Context, in any) error {
			_, err := exec.IronicFinalize(ctx, in.(enrollment.IronicNodeIn))
			return err
		},
	}
	for _, calls := range script {
		for _, c := range calls {
			if c.Step != "" && steps[c.Step] == nil {
				return fmt.Errorf("fleetsim: the straight-line loop cannot call step %q", c.Step)
			}
		}
	}
	f.Clock.Each(len(f.Names), 0, func(i int) {
		for _, c := range script[f.Names[i]] {
			if c.Step == "" {
				_ = f.Clock.Sleep(ctx, c.Sleep)
				continue
			}
			_ = steps[c.Step](ctx, c.In) // the recording already knows what each call returns
		}
	})
	return nil
}
