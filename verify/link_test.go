package verify_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/hostforge/hostforge/verify"
)

func TestDecideLink(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	budget := 5 * time.Minute
	at := func(d time.Duration, ports map[string]verify.LinkState) verify.LinkSample {
		return verify.LinkSample{At: t0.Add(d), Ports: ports}
	}
	down := map[string]verify.LinkState{"eth0": verify.LinkDown, "eth1": verify.LinkDown}
	for _, tc := range []struct {
		name    string
		samples []verify.LinkSample
		want    verify.LinkDecision
	}{
		{"no samples yet", nil, verify.LinkWait},
		{"one port up", []verify.LinkSample{at(time.Minute, map[string]verify.LinkState{"eth0": verify.LinkDown, "eth1": verify.LinkUp})}, verify.LinkPass},
		{"up once, down later", []verify.LinkSample{at(time.Minute, map[string]verify.LinkState{"eth0": verify.LinkUp}), at(6*time.Minute, down)}, verify.LinkPass},
		{"unknown fails open", []verify.LinkSample{at(time.Minute, map[string]verify.LinkState{"eth0": verify.LinkDown, "eth1": verify.LinkUnknown})}, verify.LinkPass},
		{"unnamed state is unknown", []verify.LinkSample{at(time.Minute, map[string]verify.LinkState{"eth0": "Degraded"})}, verify.LinkPass},
		{"sample without ports is unknown", []verify.LinkSample{at(time.Minute, nil)}, verify.LinkPass},
		{"all down within budget", []verify.LinkSample{at(0, down), at(4*time.Minute, down)}, verify.LinkWait},
		{"all down just before the deadline", []verify.LinkSample{at(budget-time.Nanosecond, down)}, verify.LinkWait},
		{"all down at the deadline", []verify.LinkSample{at(0, down), at(budget, down)}, verify.LinkAbort},
		{"all down past the deadline", []verify.LinkSample{at(10*time.Minute, down)}, verify.LinkAbort},
		{"samples before power-on are ignored", []verify.LinkSample{at(-time.Minute, map[string]verify.LinkState{"eth0": verify.LinkUp}), at(time.Minute, down)}, verify.LinkWait},
		{"up after a down past the deadline still passes", []verify.LinkSample{at(budget, down), at(budget+time.Second, map[string]verify.LinkState{"eth0": verify.LinkUp})}, verify.LinkPass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := verify.DecideLink(t0, budget, tc.samples); got != tc.want {
				t.Errorf("DecideLink = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDownPorts(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	samples := []verify.LinkSample{
		{At: t0.Add(2 * time.Minute), Ports: map[string]verify.LinkState{"eth1": verify.LinkDown, "eth0": verify.LinkDown, "eth2": verify.LinkUnknown}},
		{At: t0.Add(time.Minute), Ports: map[string]verify.LinkState{"eth3": verify.LinkDown}},
		{At: t0.Add(-time.Minute), Ports: map[string]verify.LinkState{"eth9": verify.LinkDown}},
	}
	if got := verify.DownPorts(t0, samples); !reflect.DeepEqual(got, []string{"eth0", "eth1"}) {
		t.Errorf("DownPorts = %v", got)
	}
	if got := verify.DownPorts(t0.Add(time.Hour), samples); got != nil {
		t.Errorf("no samples since start: %v", got)
	}
}
