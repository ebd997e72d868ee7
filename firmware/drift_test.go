package firmware_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hostforge/hostforge/firmware"
)

func TestInstalled(t *testing.T) {
	cases := []struct {
		name string
		e    firmware.InventoryEntry
		want bool
	}{
		{"Enabled", firmware.InventoryEntry{ID: "BMC-Primary", State: "Enabled"}, true},
		{"no Status (AMI MegaRAC)", firmware.InventoryEntry{ID: "HostBMC_0"}, true},
		{"Disabled (Lenovo pending)", firmware.InventoryEntry{ID: "UEFI", State: "Disabled"}, false},
		{"StandbySpare (Lenovo backup bank)", firmware.InventoryEntry{ID: "BMC-Backup", State: "StandbySpare"}, false},
		{"Pending in the Id though Enabled", firmware.InventoryEntry{ID: "BMC-Primary-Pending", State: "Enabled"}, false},
		{"Staging image (Supermicro)", firmware.InventoryEntry{ID: "Staging_BMC", State: "Enabled"}, false},
		{"Staged in the Name", firmware.InventoryEntry{ID: "3", Name: "Staged BIOS image", State: "Enabled"}, false},
		{"a word merely containing pending is no tell", firmware.InventoryEntry{ID: "Suspending_Controller", State: "Enabled"}, true},
		{"state compared case-insensitively", firmware.InventoryEntry{ID: "BIOS", State: "enabled"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.e.Installed(); got != c.want {
				t.Fatalf("Installed(%+v) = %v, want %v", c.e, got, c.want)
			}
		})
	}
}

const driftCatalog = `
vendor = "Acme"
model = "X1"
ordering = ["bmc", "uefi", "cx7", "gpu"]
[components.bmc]
current_version_reported_as = "^BMC-Primary"
known_firmware = [ { version = "1.2", default = true } ]
[components.uefi]
current_version_reported_as = "^UEFI$"
known_firmware = [ { version = "2.0", default = true } ]
[components.cx7]
current_version_reported_as = "^CX7_[0-9]+$"
known_firmware = [ { version = "28.47", default = true } ]
[components.gpu]
current_version_reported_as = "^GPU"
known_firmware = [ { version = "95.1" } ]
`

func TestEvaluate(t *testing.T) {
	m := model(t, mustParse(t, "drift.toml", driftCatalog), "Acme", "X1")
	entry := func(id, v string) firmware.InventoryEntry {
		return firmware.InventoryEntry{ID: id, Version: v, State: "Enabled"}
	}
	cases := []struct {
		name    string
		entries []firmware.InventoryEntry
		want    map[firmware.ComponentType]firmware.Status
	}{
		{"all at the default", []firmware.InventoryEntry{entry("BMC-Primary", "1.2"), entry("UEFI", "2.0"), entry("CX7_0", "28.47"), entry("GPU1", "95.0")},
			map[firmware.ComponentType]firmware.Status{"bmc": "ok", "uefi": "ok", "cx7": "ok", "gpu": "no-default"}},
		{"1.2.0 is not 1.2", []firmware.InventoryEntry{entry("BMC-Primary", "1.2.0"), entry("UEFI", "2.0"), entry("CX7_0", "28.47")},
			map[firmware.ComponentType]firmware.Status{"bmc": "drifted", "uefi": "ok", "cx7": "ok", "gpu": "no-default"}},
		{"newer firmware is drift", []firmware.InventoryEntry{entry("BMC-Primary", "1.2"), entry("UEFI", "3.0"), entry("CX7_0", "28.47")},
			map[firmware.ComponentType]firmware.Status{"bmc": "ok", "uefi": "drifted", "cx7": "ok", "gpu": "no-default"}},
		{"any of several cards differing is drift", []firmware.InventoryEntry{entry("BMC-Primary", "1.2"), entry("UEFI", "2.0"), entry("CX7_0", "28.47"), entry("CX7_1", "28.39"), entry("CX7_2", "28.47")},
			map[firmware.ComponentType]firmware.Status{"bmc": "ok", "uefi": "ok", "cx7": "drifted", "gpu": "no-default"}},
		{"no matching entry is unmatched", []firmware.InventoryEntry{entry("BMC-Primary", "1.2"), entry("UEFI", "2.0")},
			map[firmware.ComponentType]firmware.Status{"bmc": "ok", "uefi": "ok", "cx7": "unmatched", "gpu": "no-default"}},
		{"a pending image is not installed firmware", []firmware.InventoryEntry{entry("BMC-Primary", "1.2"), {ID: "BMC-Primary-Pending", Version: "-*", State: "Disabled"}, entry("UEFI", "2.0"), entry("CX7_0", "28.47")},
			map[firmware.ComponentType]firmware.Status{"bmc": "ok", "uefi": "ok", "cx7": "ok", "gpu": "no-default"}},
		{"only a pending image matches: unmatched", []firmware.InventoryEntry{{ID: "BMC-Primary-Pending", Version: "1.2", State: "Disabled"}, entry("UEFI", "2.0"), entry("CX7_0", "28.47")},
			map[firmware.ComponentType]firmware.Status{"bmc": "unmatched", "uefi": "ok", "cx7": "ok", "gpu": "no-default"}},
		{"an unanchored matcher finds the Id anywhere", []firmware.InventoryEntry{entry("BMC-Primary2", "1.1"), entry("UEFI", "2.0"), entry("CX7_0", "28.47")},
			map[firmware.ComponentType]firmware.Status{"bmc": "drifted", "uefi": "ok", "cx7": "ok", "gpu": "no-default"}},
		{"a null version is drift", []firmware.InventoryEntry{entry("BMC-Primary", ""), entry("UEFI", "2.0"), entry("CX7_0", "28.47")},
			map[firmware.ComponentType]firmware.Status{"bmc": "drifted", "uefi": "ok", "cx7": "ok", "gpu": "no-default"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := map[firmware.ComponentType]firmware.Status{}
			var order []firmware.ComponentType
			for _, d := range m.Evaluate(m.Readings(c.entries)) {
				got[d.Component] = d.Status
				order = append(order, d.Component)
				if d.Reported == nil {
					t.Errorf("%s: reported is nil, want an empty list", d.Component)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("statuses %v, want %v", got, c.want)
			}
			if !reflect.DeepEqual(order, []firmware.ComponentType{"bmc", "uefi", "cx7", "gpu"}) {
				t.Fatalf("components in %v, want the ordering", order)
			}
		})
	}
}

// Unmatched and no-default never start work; the first drifted component
// in the ordering does.
func TestNeedsWork(t *testing.T) {
	m := model(t, mustParse(t, "drift.toml", driftCatalog), "Acme", "X1")
	e := func(id, v string) firmware.InventoryEntry { return firmware.InventoryEntry{ID: id, Version: v} }
	if c, _, ok := m.NeedsWork(m.Readings([]firmware.InventoryEntry{e("BMC-Primary", "1.2"), e("UEFI", "2.0"), e("GPU1", "1")})); ok {
		t.Fatalf("unmatched cx7 and default-less gpu started work on %s", c)
	}
	c, entry, ok := m.NeedsWork(m.Readings([]firmware.InventoryEntry{e("BMC-Primary", "1.2"), e("UEFI", "1.0"), e("CX7_0", "1")}))
	if !ok || c != firmware.UEFI || entry.Version != "2.0" {
		t.Fatalf("NeedsWork = %s %+v %v, want uefi 2.0 (first in ordering)", c, entry, ok)
	}
}

func TestDriftReportJSON(t *testing.T) {
	cat := mustParse(t, "drift.toml", driftCatalog)
	r := firmware.Drift(cat, firmware.Inventory{Identity: firmware.Identity{Manufacturer: "Other", Model: "Y"}})
	b, _ := json.Marshal(r)
	if string(b) != `{"vendor":"Other","model":"Y","in_catalog":false,"drifted":false,"components":[]}` {
		t.Fatalf("model without a catalog entry: %s", b)
	}
	r = firmware.Drift(cat, firmware.Inventory{
		Identity: firmware.Identity{Manufacturer: "ACME", Model: "x1"},
		Entries:  []firmware.InventoryEntry{{ID: "BMC-Primary", Version: "1.1"}, {ID: "GPU1", Version: "9"}},
	})
	b, _ = json.Marshal(r)
	want := `{"vendor":"Acme","model":"X1","in_catalog":true,"drifted":true,"components":[` +
		`{"component":"bmc","status":"drifted","desired":"1.2","reported":[{"id":"BMC-Primary","version":"1.1"}]},` +
		`{"component":"uefi","status":"unmatched","desired":"2.0","reported":[]},` +
		`{"component":"cx7","status":"unmatched","desired":"28.47","reported":[]},` +
		`{"component":"gpu","status":"no-default","desired":null,"reported":[{"id":"GPU1","version":"9"}]}]}`
	if string(b) != want {
		t.Fatalf("report\n got %s\nwant %s", b, want)
	}
	if u := r.Unmatched(); !reflect.DeepEqual(u, []firmware.ComponentType{"uefi", "cx7"}) {
		t.Fatalf("Unmatched = %v", u)
	}
	// Unmatched alone is not drift.
	r = firmware.Drift(cat, firmware.Inventory{Identity: firmware.Identity{Manufacturer: "Acme", Model: "X1"}})
	if r.Drifted {
		t.Fatal("an inventory matching nothing is drifted")
	}
}
