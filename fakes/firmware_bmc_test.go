package fakes_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
)

// Staged firmware becomes the running firmware only through the reset
// its image needs.
func TestFirmwareBMCActivation(t *testing.T) {
	resets := map[string][]string{
		"ForceRestart":      {"ForceRestart"},
		"off then on":       {"ForceOff", "On"},
		"AC cycle then on":  {"ACPowerCycle", "On"},
		"BMC reset":         {"BMCReset"},
		"on while on":       {"On"},
		"restart while off": {"ForceOff", "ForceRestart"},
		"nothing":           nil,
	}
	cases := []struct {
		activation fakes.Activation
		activates  map[string]bool
	}{
		{fakes.ActivateHostReboot, map[string]bool{"ForceRestart": true, "off then on": true, "AC cycle then on": true}},
		{fakes.ActivatePowerCycle, map[string]bool{"off then on": true, "AC cycle then on": true}},
		{fakes.ActivateACCycle, map[string]bool{"AC cycle then on": true}},
		{fakes.ActivateBMCReset, map[string]bool{"BMC reset": true}},
		{fakes.ActivateSelf, map[string]bool{"ForceRestart": true, "off then on": true, "AC cycle then on": true, "BMC reset": true, "on while on": true, "restart while off": true, "nothing": true}},
		{fakes.ActivateNever, map[string]bool{}},
	}
	for _, c := range cases {
		for name, seq := range resets {
			t.Run(string(c.activation)+"/"+name, func(t *testing.T) {
				clk := clock.NewFake(clock.Epoch)
				b := fakes.NewFirmwareBMC(clk, "Acme", "X1", "AMI", []fakes.FirmwareMember{{ID: "BIOS", Version: "1.0", State: "Enabled"}})
				b.AddImage("bios.bin", fakes.FirmwareImage{Targets: []string{"BIOS"}, Version: "2.0", Activation: c.activation, TaskTime: time.Minute})
				ctx := context.Background()
				id, err := b.Upload(ctx, "bios.bin", "")
				if err != nil {
					t.Fatal(err)
				}
				if st, _ := b.Task(ctx, id); st != "Running" {
					t.Fatalf("task %s before its time", st)
				}
				clk.Advance(time.Minute)
				if st, _ := b.Task(ctx, id); st != "Completed" {
					t.Fatalf("task %s after its time", st)
				}
				clk.Advance(2 * fakes.BMCResetDowntime)
				for _, r := range seq {
					if err := b.Reset(ctx, r); err != nil {
						t.Fatal(err)
					}
					clk.Advance(2 * fakes.BMCResetDowntime)
				}
				got := b.Version("BIOS") == "2.0"
				if got != c.activates[name] {
					t.Fatalf("active after %v: %v, want %v", seq, got, c.activates[name])
				}
			})
		}
	}
}

func TestFirmwareBMCBehaviour(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(clock.Epoch)
	b := fakes.NewFirmwareBMC(clk, "Lenovo", "SR670", "Lenovo", []fakes.FirmwareMember{{ID: "BMC-Primary", Version: "1", State: "Enabled"}})
	b.AddImage("xcc.upd", fakes.FirmwareImage{Targets: []string{"BMC-Primary"}, Version: "2", Activation: fakes.ActivateBMCReset, ShowPending: true})
	b.AddImage("bad.upd", fakes.FirmwareImage{Targets: []string{"BMC-Primary"}, Version: "3", TaskEnd: "Exception"})
	if _, err := b.Upload(ctx, "unknown.bin", ""); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("unknown image: %v", err)
	}
	bad, _ := b.Upload(ctx, "bad.upd", "")
	id, _ := b.Upload(ctx, "xcc.upd", "")
	clk.Advance(time.Hour)
	if st, _ := b.Task(ctx, bad); st != "Exception" {
		t.Fatalf("failing task ended %s", st)
	}
	inv, _ := b.Inventory(ctx)
	if len(inv) != 2 || inv[1].ID != "BMC-Primary-Pending" || inv[1].Version != "2" || inv[1].State != "Disabled" || inv[0].Version != "1" {
		t.Fatalf("staged inventory %+v", inv)
	}
	if err := b.Reset(ctx, "BMCReset"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Inventory(ctx); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("a resetting BMC answered: %v", err)
	}
	clk.Advance(fakes.BMCResetDowntime)
	inv, _ = b.Inventory(ctx)
	if len(inv) != 1 || inv[0].Version != "2" {
		t.Fatalf("after the BMC reset %+v", inv)
	}
	b.ForgetTasks(true)
	if _, err := b.Task(ctx, id); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("forgotten task: %v", err)
	}
	b.Fail("inventory", 2, errors.New("boom"))
	for range 2 {
		if _, err := b.Inventory(ctx); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("injected fault: %v", err)
		}
	}
	if _, err := b.Inventory(ctx); err != nil {
		t.Fatalf("fault outlived its count: %v", err)
	}
	if err := b.Install("xcc.upd", true); err != nil || b.Version("BMC-Primary") != "2" {
		t.Fatalf("Install: %v", err)
	}
	st := b.State()
	if st.Uploads != 2 || st.Calls["inventory"] != 6 || !st.Lockdown {
		t.Fatalf("state %+v", st)
	}
}
