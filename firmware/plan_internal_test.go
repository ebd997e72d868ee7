package firmware

import (
	"reflect"
	"testing"
	"time"
)

func TestActivationPlan(t *testing.T) {
	drain := []ResetKind{ResetForceOff, ResetACPowerCycle, ResetOn}
	cases := []struct {
		name   string
		c      ComponentType
		drains int
		family string
		want   []ResetKind
	}{
		{"uefi: ForceRestart", UEFI, 0, "lenovo", []ResetKind{ResetForceRestart}},
		{"combined BMC and UEFI: ForceRestart", CombinedBMCUEFI, 0, "nvidia", []ResetKind{ResetForceRestart}},
		{"bmc on non-Dell: BMC reset", BMC, 0, "lenovo", []ResetKind{ResetBMC}},
		{"bmc on Dell: the iDRAC activates itself", BMC, 0, "dell", nil},
		{"hgxbmc: off, pause, on", HGXBMC, 0, "nvidia", []ResetKind{ResetForceOff, ResetOn}},
		{"gpu: off, pause, on", GPU, 0, "nvidia", []ResetKind{ResetForceOff, ResetOn}},
		{"power drains replace the uefi restart", UEFI, 1, "dell", drain},
		{"two drains", CX7, 2, "nvidia", append(append([]ResetKind{}, drain...), drain...)},
		{"drains replace the hgx off/on", HGXBMC, 1, "nvidia", drain},
		{"drains then the BMC reset of a non-Dell bmc", BMC, 1, "supermicro", append(append([]ResetKind{}, drain...), ResetBMC)},
		{"cx7 without drains: nothing", CX7, 0, "nvidia", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []ResetKind
			for _, a := range activationPlan(c.c, c.drains, c.family, 30*time.Second) {
				got = append(got, a.kind)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("plan %v, want %v", got, c.want)
			}
		})
	}
	// The pauses: 60 s after the drain's ForceOff, 90 s after the AC
	// cycle, the hgx delay after its ForceOff.
	p := activationPlan(CX7, 1, "nvidia", 30*time.Second)
	if p[0].pause != 60*time.Second || p[1].pause != 90*time.Second || p[2].pause != 5*time.Second {
		t.Fatalf("drain pauses %+v", p)
	}
	if p := activationPlan(GPU, 0, "nvidia", 42*time.Second); p[0].pause != 42*time.Second {
		t.Fatalf("hgx delay %+v", p)
	}
}

func TestScoutDeadline(t *testing.T) {
	s := ScoutScript{ExecutionTimeout: 7200 * time.Second, DownloadTimeout: 600 * time.Second}
	if got := scoutDeadline(s, 2); got != 30*time.Second+2*time.Hour+20*time.Minute+30*time.Minute {
		t.Fatalf("deadline %s", got)
	}
	if got := scoutDeadline(ScoutScript{ExecutionTimeout: 10 * time.Hour}, 1); got != 5*time.Hour {
		t.Fatalf("deadline %s, want the 5 h cap", got)
	}
}

func TestCapOutput(t *testing.T) {
	long := make([]byte, 0, 2000)
	for len(long) < 1499 {
		long = append(long, 'a')
	}
	long = append(long, "é-tail"...)
	got := capOutput(string(long))
	if len(got) != 1499 {
		t.Fatalf("cut at %d, want 1499 (before the split rune)", len(got))
	}
	if capOutput("short") != "short" {
		t.Fatal("short output changed")
	}
}
