// Package link holds what the BMC phase and the Ironic phases agree on about
// frontend links: the three link states a BMC reports, and the link guard's
// decision over the samples taken since power-on. It is pure: no I/O, no
// clock, no logging.
//
// # The link guard
//
// [Decide] is the verdict over the BMC's per-port samples since power-on:
//
//	any port UP in any sample ............................ pass
//	any port UNKNOWN, an unnamed state, a sample w/o ports  pass (fails open:
//	                                                        Ironic stays the
//	                                                        source of truth)
//	every port DOWN in every sample, a sample ≥ budget ... abort
//	otherwise (no samples yet, all DOWN within budget) ... wait
//
// A BMC that cannot observe links at all is not a sample: the caller fails
// the attempt instead of deciding.
package link

import (
	"sort"
	"time"
)

// State is what a BMC reports of one frontend port.
type State string

// Link states.
const (
	Up      State = "UP"
	Down    State = "DOWN"
	Unknown State = "UNKNOWN"
)

// FromRedfish maps a Redfish LinkStatus (EthernetInterface.LinkStatus,
// Port.LinkStatus) to the guard's three states; anything the BMC cannot
// name is Unknown, which fails open.
func FromRedfish(status string) State {
	switch status {
	case "LinkUp", "Up":
		return Up
	case "LinkDown", "NoLink", "Down":
		return Down
	}
	return Unknown
}

// Sample is one observation of every frontend port.
type Sample struct {
	At    time.Time        `json:"at"`
	Ports map[string]State `json:"ports"`
}

// Decision is the link guard's verdict.
type Decision string

// Verdicts.
const (
	// Pass: continue (a link is up, or link state is unknown).
	Pass Decision = "pass"
	// Wait: every port seen so far is DOWN, but the budget has not run out.
	Wait Decision = "wait"
	// Abort: every port stayed DOWN for the whole budget.
	Abort Decision = "abort"
)

// Decide applies the spec's three-state semantics to the samples taken
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
// the attempt instead of calling Decide.
func Decide(start time.Time, budget time.Duration, samples []Sample) Decision {
	deadline := start.Add(budget)
	allDownUntilDeadline := false
	for _, s := range samples {
		if s.At.Before(start) {
			continue
		}
		if len(s.Ports) == 0 {
			return Pass
		}
		for _, st := range s.Ports {
			if st != Down {
				return Pass // UP, UNKNOWN, or a state the BMC cannot name
			}
		}
		if !s.At.Before(deadline) {
			allDownUntilDeadline = true
		}
	}
	if allDownUntilDeadline {
		return Abort
	}
	return Wait
}

// DownPorts returns the ports DOWN in the latest sample since start, sorted,
// for the abort message ("check switch/cabling/optics for ...").
func DownPorts(start time.Time, samples []Sample) []string {
	var last *Sample
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
		if st == Down {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
