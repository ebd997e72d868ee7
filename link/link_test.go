package link_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/hostforge/hostforge/link"
)

func TestDecideLink(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	budget := 5 * time.Minute
	at := func(d time.Duration, ports map[string]link.State) link.Sample {
		return link.Sample{At: t0.Add(d), Ports: ports}
	}
	down := map[string]link.State{"eth0": link.Down, "eth1": link.Down}
	for _, tc := range []struct {
		name    string
		samples []link.Sample
		want    link.Decision
	}{
		{"no samples yet", nil, link.Wait},
		{"one port up", []link.Sample{at(time.Minute, map[string]link.State{"eth0": link.Down, "eth1": link.Up})}, link.Pass},
		{"up once, down later", []link.Sample{at(time.Minute, map[string]link.State{"eth0": link.Up}), at(6*time.Minute, down)}, link.Pass},
		{"unknown fails open", []link.Sample{at(time.Minute, map[string]link.State{"eth0": link.Down, "eth1": link.Unknown})}, link.Pass},
		{"unnamed state is unknown", []link.Sample{at(time.Minute, map[string]link.State{"eth0": "Degraded"})}, link.Pass},
		{"sample without ports is unknown", []link.Sample{at(time.Minute, nil)}, link.Pass},
		{"all down within budget", []link.Sample{at(0, down), at(4*time.Minute, down)}, link.Wait},
		{"all down just before the deadline", []link.Sample{at(budget-time.Nanosecond, down)}, link.Wait},
		{"all down at the deadline", []link.Sample{at(0, down), at(budget, down)}, link.Abort},
		{"all down past the deadline", []link.Sample{at(10*time.Minute, down)}, link.Abort},
		{"samples before power-on are ignored", []link.Sample{at(-time.Minute, map[string]link.State{"eth0": link.Up}), at(time.Minute, down)}, link.Wait},
		{"up after a down past the deadline still passes", []link.Sample{at(budget, down), at(budget+time.Second, map[string]link.State{"eth0": link.Up})}, link.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := link.Decide(t0, budget, tc.samples); got != tc.want {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDownPorts(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	samples := []link.Sample{
		{At: t0.Add(2 * time.Minute), Ports: map[string]link.State{"eth1": link.Down, "eth0": link.Down, "eth2": link.Unknown}},
		{At: t0.Add(time.Minute), Ports: map[string]link.State{"eth3": link.Down}},
		{At: t0.Add(-time.Minute), Ports: map[string]link.State{"eth9": link.Down}},
	}
	if got := link.DownPorts(t0, samples); !reflect.DeepEqual(got, []string{"eth0", "eth1"}) {
		t.Errorf("DownPorts = %v", got)
	}
	if got := link.DownPorts(t0.Add(time.Hour), samples); got != nil {
		t.Errorf("no samples since start: %v", got)
	}
}
