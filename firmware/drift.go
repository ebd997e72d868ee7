package firmware

import (
	"strings"
	"unicode"
)

// InventoryEntry is one member of a BMC's firmware inventory
// (UpdateService/FirmwareInventory).
type InventoryEntry struct {
	// ID is the member's Id: what catalog matchers are searched in.
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Version as reported; empty when the BMC reports none (null).
	Version string `json:"version"`
	// State is Status.State; empty when the member has no Status (AMI
	// MegaRAC omits it).
	State string `json:"state,omitempty"`
}

// Inventory is a host's identity and firmware inventory, in the BMC's
// collection order.
type Inventory struct {
	Identity Identity         `json:"identity"`
	Entries  []InventoryEntry `json:"entries"`
}

// Installed reports whether the entry is installed firmware, the only kind
// drift looks at. An entry is left out before matching when
//
//   - its Status.State is present and is not Enabled (Lenovo's
//     BMC-Primary-Pending and UEFI-Pending are Disabled, BMC-Backup is
//     StandbySpare); a member without Status counts as installed; or
//   - it is a staged or pending image: a word of its Id or Name is
//     "pending", "staged" or "staging" (Supermicro's Staging_BMC reports
//     Enabled).
//
// NICo's own ^BMC-Primary matcher hits BMC-Primary-Pending (Version "-*"),
// so without this rule a Lenovo host with a staged image would never look
// compliant.
func (e InventoryEntry) Installed() bool {
	if e.State != "" && !strings.EqualFold(e.State, "Enabled") {
		return false
	}
	return !stagedWord(e.ID) && !stagedWord(e.Name)
}

func stagedWord(s string) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		switch strings.ToLower(w) {
		case "pending", "staged", "staging":
			return true
		}
	}
	return false
}

// Reading is one installed inventory entry that answers for a component.
type Reading struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

// Reported is the reported versions map: per catalog component, every
// installed entry whose Id its matcher finds, in inventory order.
// Components whose matcher finds nothing are absent.
type Reported map[ComponentType][]Reading

// Readings returns the reported map of the model's components over the
// inventory entries, leaving out entries that are not installed firmware.
func (m *Model) Readings(entries []InventoryEntry) Reported {
	out := Reported{}
	for _, e := range entries {
		if !e.Installed() {
			continue
		}
		for t, c := range m.Components {
			if c.Matches(e.ID) {
				out[t] = append(out[t], Reading{ID: e.ID, Version: e.Version})
			}
		}
	}
	return out
}

// Status is a component's drift status.
type Status string

// Drift statuses.
const (
	// StatusOK: every matching installed entry reports the default version.
	StatusOK Status = "ok"
	// StatusDrifted: at least one matching entry reports another version
	// (older, newer or written differently: "1.2" is not "1.2.0").
	StatusDrifted Status = "drifted"
	// StatusUnmatched: the matcher finds no installed entry. The component
	// is flagged for the operator and is never by itself a reason to start
	// an update (there is nothing the workflow could install or verify).
	StatusUnmatched Status = "unmatched"
	// StatusNoDefault: the component has no default version; it is ignored.
	StatusNoDefault Status = "no-default"
)

// ComponentDrift is one component's line of a drift report.
type ComponentDrift struct {
	Component ComponentType `json:"component"`
	Status    Status        `json:"status"`
	// Desired is the default version; null when the component has none.
	Desired *string `json:"desired"`
	// Reported lists the matching installed entries (never null).
	Reported []Reading `json:"reported"`
}

// Evaluate compares the desired versions with a reported map, one line per
// component in EffectiveOrdering. Drift is exact string equality, never an
// ordering of versions.
func (m *Model) Evaluate(rep Reported) []ComponentDrift {
	out := make([]ComponentDrift, 0, len(m.Components))
	for _, t := range m.EffectiveOrdering() {
		c, ok := m.Components[t]
		if !ok {
			continue
		}
		d := ComponentDrift{Component: t, Reported: append([]Reading{}, rep[t]...)}
		def, hasDefault := c.Default()
		switch {
		case !hasDefault:
			d.Status = StatusNoDefault
		case len(d.Reported) == 0:
			d.Status = StatusUnmatched
		default:
			d.Status = StatusOK
			for _, r := range d.Reported {
				if r.Version != def.Version {
					d.Status = StatusDrifted
					break
				}
			}
		}
		if hasDefault {
			v := def.Version
			d.Desired = &v
		}
		out = append(out, d)
	}
	return out
}

// wanted is one component's desired version.
type wanted struct {
	c       ComponentType
	version string
}

// wanted lists the model's components that have a default.
func (m *Model) wanted() []wanted {
	var out []wanted
	for _, t := range ComponentTypes {
		if c, ok := m.Components[t]; ok {
			if def, ok := c.Default(); ok {
				out = append(out, wanted{t, def.Version})
			}
		}
	}
	return out
}

// summary reports, without building the report, whether any component is
// drifted and whether any is unmatched: the update manager's question for
// every host on every pass. It agrees with Evaluate.
func summary(want []wanted, rep Reported) (drifted, unmatched bool) {
	for _, w := range want {
		reads := rep[w.c]
		if len(reads) == 0 {
			unmatched = true
			continue
		}
		for _, r := range reads {
			if r.Version != w.version {
				drifted = true
				break
			}
		}
	}
	return drifted, unmatched
}

// NeedsWork returns the first component in the effective ordering whose
// status is drifted, and its default entry.
func (m *Model) NeedsWork(rep Reported) (ComponentType, Entry, bool) {
	for _, d := range m.Evaluate(rep) {
		if d.Status == StatusDrifted {
			e, _ := m.Components[d.Component].Default()
			return d.Component, e, true
		}
	}
	return "", Entry{}, false
}

// Report is the drift of one host against the catalog: the JSON object of
// 'hostforge firmware drift -o json'.
type Report struct {
	Vendor string `json:"vendor"`
	Model  string `json:"model"`
	// InCatalog says a catalog model matched the host: false for a host
	// whose model has no entry, which is then neither drifted nor
	// compliant (its components are empty).
	InCatalog bool `json:"in_catalog"`
	// Drifted is true when any component is drifted.
	Drifted bool `json:"drifted"`
	// Components is empty (never null) for a model without a catalog entry.
	Components []ComponentDrift `json:"components"`
}

// Unmatched lists the components whose status is unmatched.
func (r Report) Unmatched() []ComponentType {
	var out []ComponentType
	for _, c := range r.Components {
		if c.Status == StatusUnmatched {
			out = append(out, c.Component)
		}
	}
	return out
}

// Drift reports the host's drift against the catalog. A host whose model
// has no catalog entry is not drifted and has no components; its vendor
// is then its family's name (Dell, Lenovo, AMI, Supermicro) or its
// manufacturer as reported. Otherwise vendor and model are the catalog
// entry's.
func Drift(cat *Catalog, inv Inventory) Report {
	m, ok := cat.ForHost(inv.Identity)
	if !ok {
		v := inv.Identity.Manufacturer
		if n, known := familyNames[Family(v)]; known {
			v = n
		}
		if v == "" {
			v = familyNames[string(inv.Identity.BMCVendor)]
		}
		return Report{Vendor: v, Model: inv.Identity.Model, Components: []ComponentDrift{}}
	}
	r := Report{Vendor: m.Vendor, Model: m.Model, InCatalog: true, Components: m.Evaluate(m.Readings(inv.Entries))}
	for _, c := range r.Components {
		if c.Status == StatusDrifted {
			r.Drifted = true
		}
	}
	return r
}
