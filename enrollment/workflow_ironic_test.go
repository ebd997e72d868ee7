package enrollment_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

type ironicWorld struct {
	site *fakes.Site
	ir   *fakes.Ironic
	cfg  enrollment.SiteConfig
	exec *enrollment.Executor
	// steps is the step timeline.
	steps []string
}

func newIronicWorld(t *testing.T, hs fakes.HostSpec) *ironicWorld {
	t.Helper()
	site := fakes.NewSite()
	w := &ironicWorld{site: site, ir: site.AddIronic("ironic-cpu")}
	site.AddHost(hs)
	w.exec = enrolltest.Executor(site, nil)
	w.cfg = enrollment.SiteConfig{IronicEnrol: true, IronicInstances: map[string]string{intent.ClassCPUBaremetal: "ironic-cpu"}}
	return w
}

func (w *ironicWorld) enroll(t *testing.T, p enrollment.Params) (enrollment.Result, error) {
	t.Helper()
	w.steps = nil
	rt := &flow.Local{Steps: w.exec, Log: w.exec.Log, Clock: w.site.Clock, RoundTrip: true, OnEvent: func(e flow.Event) {
		if e.Kind == "step" {
			w.steps = append(w.steps, e.Step+":"+e.Outcome.String())
		}
	}}
	return enrollment.Enroll(context.Background(), rt, enrollment.NewRequest("h1", intent.ClassCPUBaremetal, "lab1", w.cfg, false, p))
}

func TestIronicEnrollmentReachesAvailable(t *testing.T) {
	w := newIronicWorld(t, fakes.HostSpec{Name: "h1"})
	res, err := w.enroll(t, enrollment.Params{})
	if err != nil || !res.Enrolled || res.ProvisionState != ironic.StateAvailable {
		t.Fatalf("result %+v, %v", res, err)
	}
	w.site.Clock.Advance(time.Minute) // the power-on finalize requested completes
	n, _ := w.ir.Node("h1")
	if n.PowerState != ironic.PowerOn {
		t.Fatalf("node left %s, want powered on", n.PowerState)
	}
	dev, _ := w.site.NetBox.Device(context.Background(), "h1")
	if !dev.HasTag(intent.DefaultIronicTag) {
		t.Fatalf("tags %v lack %s", dev.Tags, intent.DefaultIronicTag)
	}
	timeline := strings.Join(w.steps, " ")
	for _, want := range []string{enrollment.StepIronicInspection + ":done", enrollment.StepIronicCleaning + ":done", enrollment.StepIronicFinalize + ":done", enrollment.StepTagDevice + ":done"} {
		if !strings.Contains(timeline, want) {
			t.Fatalf("timeline %q lacks %s", timeline, want)
		}
	}
	// A rerun on the enrolled host skips to finalize and does not touch the node.
	before := len(w.ir.Writes("h1"))
	if res, err := w.enroll(t, enrollment.Params{}); err != nil || res.ProvisionState != ironic.StateAvailable {
		t.Fatalf("rerun: %+v %v", res, err)
	}
	if got := w.ir.Writes("h1")[before:]; len(got) != 0 {
		t.Fatalf("rerun on an available node wrote %+v", got)
	}
}

func TestIronicNodeLockBudget(t *testing.T) {
	for _, tt := range []struct {
		name string
		hold time.Duration
		code string
	}{
		{"lock clears within the budget", 4 * time.Minute, ""},
		{"lock held past the budget", 20 * time.Minute, ironic.NodeLocked.Code},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newIronicWorld(t, fakes.HostSpec{Name: "h1"})
			off := false
			if _, err := w.enroll(t, enrollment.Params{RunInspection: &off}); err != nil {
				t.Fatal(err)
			}
			w.ir.SetState("h1", ironic.StateManageable)
			w.ir.HoldLock("h1", "conductor-9", tt.hold)
			start := w.site.Clock.Now()
			_, err := w.enroll(t, enrollment.Params{})
			if tt.code == "" {
				if err != nil {
					t.Fatalf("enrollment after a short lock: %v", err)
				}
				return
			}
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != tt.code || !strings.Contains(f.Error(), "conductor-9") || !strings.Contains(f.Error(), "manageable") {
				t.Fatalf("error %v, want %s naming the holder and state", err, tt.code)
			}
			if took := w.site.Clock.Now().Sub(start); took < 14*time.Minute || took > 16*time.Minute {
				t.Fatalf("gave up after %s, want about the 15 min budget", took)
			}
		})
	}
}

func TestIronicWholeAttemptReruns(t *testing.T) {
	for _, tt := range []struct {
		name     string
		override int
		code     string
	}{
		{"inspection failure rerun within the budget", 0, ""},
		{"max_attempts_override=1 fails fast", 1, ironic.InspectionFailed.Code},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newIronicWorld(t, fakes.HostSpec{Name: "h1"})
			off := false
			if _, err := w.enroll(t, enrollment.Params{RunInspection: &off}); err != nil {
				t.Fatal(err)
			}
			w.ir.SetState("h1", ironic.StateManageable)
			w.ir.FailInspection("h1", 1)
			_, err := w.enroll(t, enrollment.Params{ForceInspection: true, MaxAttemptsOverride: tt.override})
			if hostforge.CodeOf(err) != tt.code {
				t.Fatalf("error %v, want code %q", err, tt.code)
			}
		})
	}
	t.Run("clean failed reruns the start", func(t *testing.T) {
		w := newIronicWorld(t, fakes.HostSpec{Name: "h1"})
		off := false
		if _, err := w.enroll(t, enrollment.Params{RunInspection: &off}); err != nil {
			t.Fatal(err)
		}
		w.ir.SetState("h1", ironic.StateManageable)
		w.ir.FailCleaning("h1", 1)
		if res, err := w.enroll(t, enrollment.Params{}); err != nil || res.ProvisionState != ironic.StateAvailable {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

func TestIronicSwitchToIPMIInWorkflow(t *testing.T) {
	w := newIronicWorld(t, fakes.HostSpec{Name: "h1"})
	w.cfg.SwitchToIPMIAfterInspection = true
	if res, err := w.enroll(t, enrollment.Params{}); err != nil || res.ProvisionState != ironic.StateAvailable {
		t.Fatalf("%+v %v", res, err)
	}
	if n, _ := w.ir.Node("h1"); n.Driver != "ipmi" {
		t.Fatalf("driver %s, want ipmi", n.Driver)
	}
}

// Each Ironic step after the first starts on the look its predecessor
// ended with (ironic.Sighting), carried through JSON as under a remote
// orchestrator: the cleaning half's start and finalize make no node read
// of their own. After the switch to IPMI, which rewrites the node, the
// cleaning start reads it again.
func TestIronicStepsStartOnTheLastLook(t *testing.T) {
	for _, sw := range []bool{false, true} {
		w := newIronicWorld(t, fakes.HostSpec{Name: "h1"})
		w.cfg.SwitchToIPMIAfterInspection = sw
		reads := map[string][]int{} // node reads of each call, by step
		last := w.site.Calls()
		rt := &flow.Local{Steps: w.exec, Clock: w.site.Clock, RoundTrip: true, OnEvent: func(e flow.Event) {
			if e.Kind != "step" {
				return
			}
			now := w.site.Calls()
			reads[e.Step] = append(reads[e.Step], now.Sub(last)[fakes.SysIronic].Ops["get_node"])
			last = now
		}}
		res, err := enrollment.Enroll(context.Background(), rt, enrollment.NewRequest("h1", intent.ClassCPUBaremetal, "lab1", w.cfg, false, enrollment.Params{}))
		if err != nil || res.ProvisionState != ironic.StateAvailable {
			t.Fatalf("switch %v: %+v %v", sw, res, err)
		}
		clean, fin := reads[enrollment.StepIronicCleaning], reads[enrollment.StepIronicFinalize]
		if len(clean) < 2 || len(fin) != 1 {
			t.Fatalf("switch %v: node reads by call %v", sw, reads)
		}
		want := 0
		if sw {
			want = 1
		}
		if clean[0] != want || fin[0] != 0 {
			t.Errorf("switch %v: the cleaning start read the node %d times (want %d), finalize %d (want 0); all: %v", sw, clean[0], want, fin[0], reads)
		}
	}
}
