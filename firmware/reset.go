package firmware

import (
	"context"
	"errors"

	"github.com/hostforge/hostforge/bmc"
)

// resetOutcome is what a BMC's reset status says of a reset sent earlier.
type resetOutcome int

const (
	// resetUnknown: the BMC shows nothing either way (no LastResetTime, no
	// power state).
	resetUnknown resetOutcome = iota
	resetHappened
	resetNotHappened
)

// resetOutcomeOf tells from the BMC's status before a reset was sent and
// now whether the reset happened:
//
//   - ForceOff: the power is Off (happened) or On (not);
//   - On: the power is On (happened) or Off (not);
//   - ForceRestart and an AC power cycle: the system's LastResetTime
//     changed, or the power state is not what it was (a restart under
//     way, a cycle that ended on), happened; the same LastResetTime and
//     power state, not;
//   - a BMC reset: the Manager's LastResetTime changed (happened) or not.
//
// A BMC that reports neither is unknown: the reset is not sent again —
// an activation that did not happen is reset again by the new-firmware
// wait, within its own budget.
func resetOutcomeOf(kind ResetKind, before, now ResetStatus) resetOutcome {
	known := func(s string) bool { return s != "" }
	switch kind {
	case ResetForceOff, ResetOn:
		want, other := PowerOff, PowerOn
		if kind == ResetOn {
			want, other = PowerOn, PowerOff
		}
		switch now.Power {
		case want:
			return resetHappened
		case other:
			return resetNotHappened
		}
	case ResetForceRestart, ResetACPowerCycle:
		if known(before.SystemLastReset) && known(now.SystemLastReset) && before.SystemLastReset != now.SystemLastReset {
			return resetHappened
		}
		if known(before.Power) && known(now.Power) && before.Power != now.Power {
			return resetHappened
		}
		if known(before.SystemLastReset) && known(now.SystemLastReset) {
			return resetNotHappened
		}
	case ResetBMC:
		if known(before.ManagerLastReset) && known(now.ManagerLastReset) {
			if before.ManagerLastReset != now.ManagerLastReset {
				return resetHappened
			}
			return resetNotHappened
		}
	}
	return resetUnknown
}

// reset performs the record's current Phase, a reset of kind, at most
// once: it is recorded as started (ResetSent, with the BMC's status just
// before) and the record checkpointed before it is sent. An attempt that
// finds it recorded — the answer was lost, or the worker died — reads the
// BMC and sends it again only when the BMC shows it did not happen. done
// reports the reset happened (sent now, or found done); otherwise the
// error is booked on the record and the step comes back later.
func (e *Executor) reset(ctx context.Context, sc *stepCtx, kind ResetKind, what string) (done bool, err error) {
	r := &sc.rec
	m := r.MachineID
	if mk := r.ResetSent; mk != nil && mk.Phase == r.Phase && mk.Kind == kind {
		now, err := e.BMC.ResetStatus(ctx, m)
		if err != nil {
			sc.transient(err, "reading whether "+what+" happened")
			return false, nil
		}
		if resetOutcomeOf(kind, mk.Before, now) != resetNotHappened {
			r.ResetSent, r.Errors = nil, 0
			return true, nil
		}
	} else {
		before, err := e.BMC.ResetStatus(ctx, m)
		if err != nil {
			sc.transient(err, "reading the power state before "+what)
			return false, nil
		}
		r.ResetSent = &ResetMark{Phase: r.Phase, Kind: kind, Before: before, At: sc.now}
		if err := sc.checkpoint(ctx); err != nil {
			return false, err
		}
	}
	if err := e.BMC.Reset(ctx, m, kind); err != nil {
		if kind == ResetACPowerCycle && errors.Is(err, bmc.ErrUnsupported) {
			// The BMC offers no AC power cycle at all (none of its reset
			// types or OEM actions is one): nothing was sent. The drain
			// becomes a power-off held for the drain wait (activate).
			r.ResetSent, r.NoACPowerCycle, r.Errors = nil, true, 0
			r.LastError = capOutput("no AC power cycle: " + err.Error())
			return false, nil
		}
		sc.transient(err, what)
		return false, nil
	}
	r.ResetSent, r.Errors = nil, 0
	return true, nil
}
