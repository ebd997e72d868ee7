package redfishemu

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Actions take only the values their resource allows. A parameter's
// allowable values are the action's inline <Parameter>@Redfish.
// AllowableValues, or the Parameters of the ActionInfo resource its
// @Redfish.ActionInfo names — whichever the tree shows: a real capture's
// DGX lists ComputerSystem.Reset's values only in its ActionInfo. A value
// outside them is refused 400 ActionParameterValueNotInList and changes
// nothing, as a BMC refuses it.

// actionOf finds the action whose target is p: its resource's Actions or
// Actions.Oem entry; nil when the tree has none.
func (e *Emulator) actionOf(p string) map[string]any {
	i := strings.Index(p, "/Actions/")
	if i < 0 {
		return nil
	}
	res := e.docs[p[:i]]
	if res == nil {
		return nil
	}
	acts, _ := res["Actions"].(map[string]any)
	find := func(m map[string]any) map[string]any {
		for k, v := range m {
			a, ok := v.(map[string]any)
			if !ok || !strings.HasPrefix(k, "#") {
				continue
			}
			if t, _ := a["target"].(string); clean(t) == p {
				return a
			}
		}
		return nil
	}
	if a := find(acts); a != nil {
		return a
	}
	oem, _ := acts["Oem"].(map[string]any)
	return find(oem)
}

// allowable returns the values the action allows for param; nil when the
// tree lists none.
func (e *Emulator) allowable(action map[string]any, param string) []string {
	strs := func(v any) []string {
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if l := strs(action[param+"@Redfish.AllowableValues"]); l != nil {
		return l
	}
	info, _ := action["@Redfish.ActionInfo"].(string)
	d := e.docs[clean(info)]
	if d == nil {
		return nil
	}
	ps, _ := d["Parameters"].([]any)
	for _, x := range ps {
		if pm, ok := x.(map[string]any); ok && pm["Name"] == param {
			return strs(pm["AllowableValues"])
		}
	}
	return nil
}

// refusedAction answers a POST to an action whose string parameters take
// a value the action does not allow; st is 0 when it is allowed.
func (e *Emulator) refusedAction(p string, body map[string]any) (int, map[string]string, any) {
	a := e.actionOf(p)
	if a == nil {
		return 0, nil, nil
	}
	for k, v := range body {
		s, ok := v.(string)
		if !ok || strings.HasPrefix(k, "@") {
			continue
		}
		if allowed := e.allowable(a, k); allowed != nil && !slices.Contains(allowed, s) {
			return redfishError(http.StatusBadRequest, "Base.1.8.ActionParameterValueNotInList",
				fmt.Sprintf("The value %q for the parameter %s is not in the list of acceptable values (%s).", s, k, strings.Join(allowed, ", ")))
		}
	}
	return 0, nil, nil
}

// lenovoSystemReset is XCC's OEM action whose ResetType ACPowerCycle cycles
// the system's AC power (it comes back on).
const lenovoSystemReset = "/Actions/Oem/LenovoComputerSystem.SystemReset"
