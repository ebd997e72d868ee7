package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/firmware"
)

// Reset performs one power or BMC action, choosing the ResetType from
// what the BMC allows — the action's inline ResetType@Redfish.
// AllowableValues, else the Parameters of its @Redfish.ActionInfo (a DGX's
// MegaRAC lists them only there) — so that no reset a BMC refuses is
// sent:
//
//   - ForceOff: ForceOff, else GracefulShutdown;
//   - On: On, else ForceOn;
//   - ForceRestart: ForceRestart, else GracefulRestart;
//   - an AC power cycle: FullPowerCycle (Redfish's "behaves like removing
//     AC power"), else PowerCycle (iDRAC's virtual AC cycle; a
//     Supermicro's), else the vendor's OEM action the captures show
//     (XCC's LenovoComputerSystem.SystemReset, ResetType ACPowerCycle);
//     a BMC with none of them (a DGX's MegaRAC allows ForceOff,
//     ForceRestart, GracefulShutdown and On) answers an error that is
//     bmc.ErrUnsupported, and nothing is sent: the update workflow then
//     holds the host off for its drain wait instead;
//   - a BMC reset: Manager.Reset GracefulRestart, else ForceRestart.
//
// A BMC that lists no allowable values gets the first choice.
func (f *Firmware) Reset(ctx context.Context, machine string, kind firmware.ResetKind) error {
	c, err := f.connect(ctx, machine, false)
	if err != nil {
		return err
	}
	defer c.close()
	return classify(c.firmwareReset(ctx, kind), "reset %s of %s", kind, machine)
}

// systemResets are the ResetTypes of each kind, in order of preference.
var systemResets = map[firmware.ResetKind][]string{
	firmware.ResetForceOff:     {"ForceOff", "GracefulShutdown"},
	firmware.ResetOn:           {"On", "ForceOn"},
	firmware.ResetForceRestart: {"ForceRestart", "GracefulRestart"},
	firmware.ResetACPowerCycle: {"FullPowerCycle", "PowerCycle"},
}

// oemACCycles are the vendors' OEM actions of an AC power cycle the real
// captures show: the action's key under Actions.Oem and its ResetType.
var oemACCycles = []struct{ action, resetType string }{
	{"#LenovoComputerSystem.SystemReset", "ACPowerCycle"},
}

func (c *client) firmwareReset(ctx context.Context, kind firmware.ResetKind) error {
	if kind == firmware.ResetBMC {
		m, t, err := c.resetAction(ctx, "manager", c.manager, managerReset)
		if err != nil {
			return err
		}
		allowed, err := c.allowedResets(ctx, actionDoc(m, managerReset))
		if err != nil {
			return err
		}
		rt, ok := choose(allowed, "GracefulRestart", "ForceRestart")
		if !ok {
			return fmt.Errorf("redfish: the manager's Reset allows %v, neither GracefulRestart nor ForceRestart: %w", keys(allowed), bmc.ErrUnsupported)
		}
		_, err = c.write(ctx, http.MethodPost, t, doc{"ResetType": rt})
		return err
	}
	prefer, known := systemResets[kind]
	if !known {
		return fmt.Errorf("redfish: unknown reset %q: %w", kind, hostforge.ErrInvalid)
	}
	s, t, err := c.resetAction(ctx, "system", c.system, systemReset)
	if err != nil {
		return err
	}
	allowed, err := c.allowedResets(ctx, actionDoc(s, systemReset))
	if err != nil {
		return err
	}
	if rt, ok := choose(allowed, prefer...); ok {
		_, err = c.write(ctx, http.MethodPost, t, doc{"ResetType": rt})
		return err
	}
	if kind == firmware.ResetACPowerCycle {
		oem, _ := actionDoc(s, "Oem")["Oem"].(doc)
		for _, o := range oemACCycles {
			a, _ := oem[o.action].(doc)
			target := str(a, "target")
			if target == "" {
				continue
			}
			oa, err := c.allowedResets(ctx, a)
			if err != nil {
				return err
			}
			if _, ok := choose(oa, o.resetType); !ok {
				continue
			}
			_, err = c.write(ctx, http.MethodPost, target, doc{"ResetType": o.resetType})
			return err
		}
	}
	return fmt.Errorf("redfish: the system's Reset allows %v, none of %v, and no OEM action does it: %w", keys(allowed), prefer, bmc.ErrUnsupported)
}

// actionDoc is the action name of d's Actions ("Oem": the Actions object
// itself, whose Oem member holds the vendors' actions).
func actionDoc(d doc, name string) doc {
	a, _ := d["Actions"].(doc)
	if name == "Oem" {
		return a
	}
	t, _ := a[name].(doc)
	return t
}

// allowedResets returns the ResetTypes an action allows: its inline
// ResetType@Redfish.AllowableValues, else its ActionInfo's ResetType
// parameter; nil when the BMC lists none (an ActionInfo that is not
// there lists none).
func (c *client) allowedResets(ctx context.Context, a doc) (map[string]bool, error) {
	set := func(vs []any) map[string]bool {
		out := map[string]bool{}
		for _, v := range vs {
			if s, ok := v.(string); ok {
				out[s] = true
			}
		}
		return out
	}
	if vs := asSlice(a["ResetType@Redfish.AllowableValues"]); vs != nil {
		return set(vs), nil
	}
	info := str(a, "@Redfish.ActionInfo")
	if info == "" {
		return nil, nil
	}
	if err := c.follow(info); err != nil {
		return nil, err
	}
	d, err := c.get(ctx, info)
	if errors.Is(err, hostforge.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, p := range asSlice(d["Parameters"]) {
		if pm, ok := p.(doc); ok && str(pm, "Name") == "ResetType" {
			if vs := asSlice(pm["AllowableValues"]); vs != nil {
				return set(vs), nil
			}
		}
	}
	return nil, nil
}

// choose returns the first of prefer that allowed has (the first of all
// when allowed is nil: the BMC lists nothing).
func choose(allowed map[string]bool, prefer ...string) (string, bool) {
	for _, p := range prefer {
		if allowed == nil || allowed[p] {
			return p, true
		}
	}
	return "", false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
