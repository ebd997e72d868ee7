package enrollment_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

func TestDispatch(t *testing.T) {
	ctx := context.Background()
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1", Class: intent.ClassCPUBaremetal})
	exec := &enrollment.Executor{NetBox: site.NetBox, FleetManager: site.FleetManager, Vault: site.Vault}

	out, err := exec.Dispatch(ctx, enrollment.StepReadIntent, []byte(`{"device":"h1"}`))
	if err != nil {
		t.Fatal(err)
	}
	var ri enrollment.ReadIntentOut
	if err := json.Unmarshal(out, &ri); err != nil || ri.Device.Name != "h1" || ri.Device.Status != intent.StatusStaged {
		t.Fatalf("output %s decodes to %+v (%v)", out, ri.Device, err)
	}

	tests := []struct {
		name, step, in, code string
	}{
		{"unknown step", "no_such_step", `{}`, hostforge.Unclassified.Code},
		{"input not JSON", enrollment.StepReadIntent, `{"device":`, hostforge.Unclassified.Code},
		{"input of the wrong shape", enrollment.StepReadIntent, `{"device":42}`, hostforge.Unclassified.Code},
		{"the step's own failure", enrollment.StepReadIntent, `{"device":"nope"}`, enrollment.DeviceNotFound.Code},
		{"a phase not wired", enrollment.StepConfigureBMC, `{}`, enrollment.NotImplemented.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Dispatch(ctx, tt.step, []byte(tt.in))
			if hostforge.CodeOf(err) != tt.code || out != nil {
				t.Fatalf("Dispatch = %s, %v; want no output and %s", out, err, tt.code)
			}
		})
	}

	// A wait passes through as a wait.
	site.Inject(fakes.SysNetBox, "*", 1, hostforge.RetryAfter(0, "x", "y"))
	if _, err := exec.Dispatch(ctx, enrollment.StepReadIntent, []byte(`{"device":"h1"}`)); err == nil {
		t.Fatal("an injected wait was lost")
	} else if _, ok := hostforge.AsWait(err); !ok {
		t.Fatalf("wait became %v", err)
	}
}
