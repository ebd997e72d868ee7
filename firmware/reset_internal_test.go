package firmware

import "testing"

// What a BMC's reset status before and after says of a reset whose answer
// was lost.
func TestResetOutcome(t *testing.T) {
	on := ResetStatus{Power: PowerOn, SystemLastReset: "2026-05-04T09:00:00Z", ManagerLastReset: "2026-05-01T00:00:00Z"}
	off := on
	off.Power = PowerOff
	restarted := on
	restarted.SystemLastReset = "2026-05-04T09:05:00Z"
	bmcReset := on
	bmcReset.ManagerLastReset = "2026-05-04T09:05:00Z"
	blind := ResetStatus{Power: PowerOn}
	cases := []struct {
		name       string
		kind       ResetKind
		before, at ResetStatus
		want       resetOutcome
	}{
		{"ForceOff: now off", ResetForceOff, on, off, resetHappened},
		{"ForceOff: still on", ResetForceOff, on, on, resetNotHappened},
		{"On: now on", ResetOn, off, restarted, resetHappened},
		{"On: still off", ResetOn, off, off, resetNotHappened},
		{"ForceRestart: the system's last reset moved", ResetForceRestart, on, restarted, resetHappened},
		{"ForceRestart: off, mid-restart", ResetForceRestart, on, off, resetHappened},
		{"ForceRestart: nothing moved", ResetForceRestart, on, on, resetNotHappened},
		{"ForceRestart: no LastResetTime", ResetForceRestart, blind, blind, resetUnknown},
		{"AC cycle after a power-off: the last reset moved", ResetACPowerCycle, off, ResetStatus{Power: PowerOff, SystemLastReset: restarted.SystemLastReset, ManagerLastReset: on.ManagerLastReset}, resetHappened},
		{"AC cycle: nothing moved", ResetACPowerCycle, off, off, resetNotHappened},
		{"BMC reset: the Manager's last reset moved", ResetBMC, on, bmcReset, resetHappened},
		{"BMC reset: not moved", ResetBMC, on, on, resetNotHappened},
		{"BMC reset: no LastResetTime", ResetBMC, blind, blind, resetUnknown},
		{"power unknown", ResetForceOff, ResetStatus{}, ResetStatus{}, resetUnknown},
	}
	for _, c := range cases {
		if got := resetOutcomeOf(c.kind, c.before, c.at); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
