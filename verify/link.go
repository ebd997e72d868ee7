package verify

import (
	"sort"
	"time"
)

// LinkState is what a BMC reports of one frontend port.
type LinkState string

// Link states.
const (
	LinkUp      LinkState = "UP"
	LinkDown    LinkState = "DOWN"
	LinkUnknown LinkState = "UNKNOWN"
)

// LinkSample is one observation of every frontend port.
type LinkSample struct {
	At    time.Time            `json:"at"`
	Ports map[string]LinkState `json:"ports"`
}

// LinkDecision is the link guard's verdict.
type LinkDecision string

// Verdicts.
const (
	// LinkPass: continue (a link is up, or link state is unknown).
	LinkPass LinkDecision = "pass"
	// LinkWait: every port seen so far is DOWN, but the budget has not run out.
	LinkWait LinkDecision = "wait"
	// LinkAbort: every port stayed DOWN for the whole budget.
	LinkAbort LinkDecision = "abort"
)

// DecideLink applies the spec's three-state semantics to the samples taken
// since power-on (start; earlier samples are ignored):
//
//   - any port UP in any sample passes;
//   - any port UNKNOWN passes too — unknown telemetry fails open and Ironic
//     stays the source of truth. A state other than UP/DOWN/UNKNOWN, and a
//     sample with no ports at all, count as UNKNOWN;
//   - every port DOWN in every sample, with a sample at or after
//     start+budget, aborts;
//   - otherwise (no samples yet, or all DOWN within the budget) keep waiting.
//
// A BMC that cannot observe links at all is not a sample: the caller fails
// the attempt instead of calling DecideLink.
func DecideLink(start time.Time, budget time.Duration, samples []LinkSample) LinkDecision {
	deadline := start.Add(budget)
	allDownUntilDeadline := false
	for _, s := range samples {
		if s.At.Before(start) {
			continue
		}
		if len(s.Ports) == 0 {
			return LinkPass
		}
		for _, st := range s.Ports {
			if st != LinkDown {
				return LinkPass // UP, UNKNOWN, or a state the BMC cannot name
			}
		}
		if !s.At.Before(deadline) {
			allDownUntilDeadline = true
		}
	}
	if allDownUntilDeadline {
		return LinkAbort
	}
	return LinkWait
}

// DownPorts returns the ports DOWN in the latest sample since start, sorted,
// for the abort message ("check switch/cabling/optics for ...").
func DownPorts(start time.Time, samples []LinkSample) []string {
	var last *LinkSample
	for i := range samples {
		if !samples[i].At.Before(start) && (last == nil || !samples[i].At.Before(last.At)) {
			last = &samples[i]
		}
	}
	if last == nil {
		return nil
	}
	var out []string
	for p, st := range last.Ports {
		if st == LinkDown {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
