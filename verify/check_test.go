package verify_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/verify"
)

func TestSwitchNamesMatch(t *testing.T) {
	for _, tc := range []struct {
		netbox, lldp string
		want         bool
	}{
		{"leaf-3", "leaf-3", true},
		{"leaf-3", "LEAF-3", true},
		{"leaf-3", "leaf-3.dc1.example.net", true},
		{"leaf-3.dc1.example.net", "leaf-3", true},
		{"leaf-3.dc1", "leaf-3.dc1.example.net", true},
		{"leaf-3.dc1.example.net.", "leaf-3.dc1.example.net", true},
		{"f20-3-1", "f20-3-1f.iad3", false}, // the prefix must end at a dot
		{"leaf-3", "leaf-30", false},
		{"leaf-3.dc1", "leaf-3.dc2", false},
		{"leaf-3", "", false},
		{"", "", false},
	} {
		if got := verify.SwitchNamesMatch(tc.netbox, tc.lldp); got != tc.want {
			t.Errorf("SwitchNamesMatch(%q, %q) = %v, want %v", tc.netbox, tc.lldp, got, tc.want)
		}
	}
	if verify.PortNamesMatch("", "") || !verify.PortNamesMatch("Ethernet1/4", " ethernet1/4") || verify.PortNamesMatch("Eth1/4", "Ethernet1/4") {
		t.Error("PortNamesMatch: empty names never match, case is ignored, abbreviations are not expanded")
	}
}

// cumulusHost is a host whose eth0 hears the Cumulus frame in
// testdata/lldp-cumulus.json: system leaf-3.dc1.example.net, port ID swp1,
// port description "host-a1 eth0".
func cumulusHost(t *testing.T, extra string) verify.Inventory {
	t.Helper()
	lldp, err := os.ReadFile(filepath.Join("testdata", "lldp-cumulus.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf(`{"inventory": {"interfaces": [
		{"name": "eth0", "mac_address": "44:a8:42:00:00:01", "has_carrier": true, "lldp": %s, "vendor": "0x15b3", "speed_mbps": 100000},
		{"name": "eth1", "mac_address": "44:a8:42:00:00:02", "has_carrier": true, "lldp": []%s}
	], "cpu": {"count": 8, "architecture": "x86_64"}, "system_vendor": {"serial_number": "SN1"}}, "plugin_data": {}}`, lldp, extra)
	inv, err := verify.ParseInventory([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestCheckLLDPCases(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cables []verify.Cable
		skip   bool
		extra  string // appended after eth1's lldp
		want   []string
		action []string
	}{
		{name: "cumulus: port ID is the port, short NetBox name", cables: []verify.Cable{{Interface: "eth0", MAC: "44:A8:42:00:00:01", Switch: "leaf-3", Port: "swp1"}}},
		{name: "port matched by description", cables: []verify.Cable{{Interface: "eth0", MAC: "44-a8-42-00-00-01", Switch: "leaf-3.dc1.example.net", Port: "host-a1 eth0"}}},
		{name: "matched by name without a MAC", cables: []verify.Cable{{Interface: "eth0", Switch: "leaf-3", Port: "swp1"}}},
		{
			name:   "port alone never matches",
			cables: []verify.Cable{{Interface: "eth0", MAC: "44:a8:42:00:00:01", Switch: "leaf-4", Port: "swp1"}},
			want:   []string{"lldp eth0"},
			action: []string{"switch leaf-4 port swp1: NetBox expects host h1 eth0 (44:a8:42:00:00:01) here", "saw switch leaf-3.dc1.example.net port swp1"},
		},
		{
			name:   "switch alone never matches",
			cables: []verify.Cable{{Interface: "eth0", MAC: "44:a8:42:00:00:01", Switch: "leaf-3", Port: "swp2"}},
			want:   []string{"lldp eth0"},
			action: []string{"move the cable to switch leaf-3 port swp2"},
		},
		{
			name:   "nothing heard on a cabled port",
			cables: []verify.Cable{{Interface: "eth1", MAC: "44:a8:42:00:00:02", Switch: "leaf-3", Port: "swp2"}},
			want:   []string{"lldp eth1"},
			action: []string{"switch leaf-3 port swp2: host h1 eth1", "heard no LLDP"},
		},
		{
			name:   "interface missing from the host",
			cables: []verify.Cable{{Interface: "eth9", MAC: "44:a8:42:00:00:09", Switch: "leaf-3", Port: "swp9"}},
			want:   []string{"lldp eth9"},
			action: []string{"switch leaf-3 port swp9", "no interface with that MAC"},
		},
		{name: "uncabled and missing: consistent", cables: []verify.Cable{{Interface: "eth9", MAC: "44:a8:42:00:00:09"}}},
		{name: "uncabled and silent: consistent", cables: []verify.Cable{{Interface: "eth1", MAC: "44:a8:42:00:00:02"}}},
		{
			name:   "uncabled in NetBox but a switch is heard",
			cables: []verify.Cable{{Interface: "eth0", MAC: "44:a8:42:00:00:01"}},
			want:   []string{"lldp eth0"},
			action: []string{"NetBox records no cable but LLDP saw switch leaf-3.dc1.example.net port swp1", "record that cable"},
		},
		{
			name:   "LLDP not collected",
			cables: []verify.Cable{{Interface: "eth2", MAC: "44:a8:42:00:00:03", Switch: "leaf-3", Port: "swp3"}},
			extra:  `}, {"name": "eth2", "mac_address": "44:a8:42:00:00:03", "lldp": null`,
			want:   []string{"lldp eth2"},
			action: []string{"ipa-collect-lldp=1"},
		},
		{
			name:   "skip_cable_verification skips LLDP, not carrier",
			skip:   true,
			cables: []verify.Cable{{Interface: "eth0", MAC: "44:a8:42:00:00:01", Switch: "leaf-9", Port: "swp9"}, {Interface: "eth2", MAC: "44:a8:42:00:00:03", Switch: "leaf-3", Port: "swp3"}},
			extra:  `}, {"name": "eth2", "mac_address": "44:a8:42:00:00:03", "has_carrier": false, "lldp": null`,
			want:   []string{"carrier eth2"},
			action: []string{"switch leaf-3 port swp3: host h1 eth2 (44:a8:42:00:00:03) has no link"},
		},
		{
			name:   "no carrier is reported once, not again by LLDP",
			cables: []verify.Cable{{Interface: "eth2", MAC: "44:a8:42:00:00:03", Switch: "leaf-3", Port: "swp3"}, {Interface: "eth1", MAC: "44:a8:42:00:00:02"}},
			extra:  `}, {"name": "eth2", "mac_address": "44:a8:42:00:00:03", "has_carrier": false, "lldp": []`,
			want:   []string{"carrier eth2"},
		},
		{
			name:   "unreported carrier passes",
			cables: []verify.Cable{{Interface: "eth2", MAC: "44:a8:42:00:00:03"}},
			extra:  `}, {"name": "eth2", "mac_address": "44:a8:42:00:00:03", "has_carrier": null, "lldp": []`,
		},
		{
			name:   "every mismatch, in check order",
			cables: []verify.Cable{{Interface: "eth0", MAC: "44:a8:42:00:00:01", Switch: "leaf-4", Port: "swp1"}, {Interface: "eth2", MAC: "44:a8:42:00:00:03"}},
			extra:  `}, {"name": "eth2", "mac_address": "44:a8:42:00:00:03", "has_carrier": false`,
			want:   []string{"carrier eth2", "lldp eth0"},
			action: []string{"has no link and NetBox records no cable"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := cumulusHost(t, tc.extra)
			exp, err := verify.ExpectationsFrom("h1", nil, tc.cables, tc.skip)
			if err != nil {
				t.Fatal(err)
			}
			rep := verify.Check(inv, exp)
			var got []string
			for _, m := range rep.Mismatches {
				got = append(got, m.Check+" "+m.Subject)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("mismatches %v, want %v:\n%s", got, tc.want, dump(rep))
			}
			for _, a := range tc.action {
				found := false
				for _, m := range rep.Mismatches {
					found = found || strings.Contains(m.Action, a)
				}
				if !found {
					t.Errorf("no action says %q:\n%s", a, dump(rep))
				}
			}
			if len(tc.want) > 0 && !verify.CablingMismatch.Is(rep.Err()) {
				t.Errorf("Err() = %v, want INSPECTION_CABLING_MISMATCH", rep.Err())
			}
		})
	}
}

// TestCheckR7615ThreeSwitchesSamePort: all three R7615 NICs hear Ethernet1/4,
// on three different switches; swapping the NetBox switches of two cables
// must fail both even though every port name matches.
func TestCheckR7615ThreeSwitchesSamePort(t *testing.T) {
	h := realHosts[0]
	d := loadDoc(t, h)
	exp := loadExpect(t, h.expect)
	exp.Cables[0].Switch, exp.Cables[1].Switch = exp.Cables[1].Switch, exp.Cables[0].Switch
	rep := verify.Check(d.parse(t), exp)
	if len(rep.Mismatches) != 2 || rep.Mismatches[0].Subject != "NIC.Integrated.1-1" || rep.Mismatches[1].Subject != "NIC.Integrated.1-2" {
		t.Fatalf("want two LLDP mismatches:\n%s", dump(rep))
	}
}

func hwInventory(t *testing.T, plugin string) verify.Inventory {
	t.Helper()
	doc := `{"inventory": {
		"interfaces": [
			{"name": "eth0", "mac_address": "aa:bb:cc:00:00:01", "has_carrier": true, "vendor": "0x15b3", "speed_mbps": 10000, "pci_address": "0000:3b:00.0"},
			{"name": "eth1", "mac_address": "aa:bb:cc:00:00:02", "has_carrier": true, "vendor": "0x8086", "speed_mbps": -1}],
		"cpu": {"count": 64, "architecture": "aarch64"},
		"memory": {"physical_mb": 32768},
		"disks": [{"name": "/dev/nvme0n1", "model": "Dell Ent NVMe", "size": 100000000000, "serial": "S1"}],
		"system_vendor": {"serial_number": "Not Specified"}},
	 "plugin_data": ` + plugin + `}`
	inv, err := verify.ParseInventory([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestCheckHardwareCases(t *testing.T) {
	dimms := `{"extra": {"memory": {"bank:0": {"size": 17179869184, "slot": "A1"}, "bank:1": {"size": 8589934592, "slot": "A2"}, "bank:2": {"description": "[empty]"}}},
	           "pci_devices": [{"vendor_id": "0x10DE", "product_id": "26BA", "bus": "0000:17:00.0"}, {"vendor_id": "10de", "product_id": "26b9", "bus": "0000:18:00.0"}]}`
	cables := []verify.Cable{{Interface: "eth0", MAC: "aa:bb:cc:00:00:01", Switch: "leaf-1", Port: "swp1"}, {Interface: "eth1", MAC: "aa:bb:cc:00:00:02"}}
	for _, tc := range []struct {
		name       string
		plugin     string
		validation string
		want       []string
		action     []string
	}{
		{name: "cpu", plugin: `{}`, validation: `{"cpu": {"architecture": "x86_64", "count": 32, "cores": 16, "sockets": 2}}`,
			want:   []string{"cpu cpu.architecture", "cpu cpu.count", "cpu cpu.cores", "cpu cpu.sockets"},
			action: []string{"host h1 reports 64 logical CPUs", "did not report the physical cores", "extra-hardware collector"}},
		{name: "nics", plugin: `{}`, validation: `{"nics": {"count": 3, "vendors": ["0x15B3"], "min_speed_mbps": 25000}}`,
			want:   []string{"nics nics.count", "nics eth1", "nics eth0"},
			action: []string{"interface eth1 (aa:bb:cc:00:00:02, PCI slot unknown)", "switch leaf-1 port swp1 (host h1 eth0"}},
		{name: "disks", plugin: `{}`, validation: `{"disks": {"count": 2, "min_size_gb": 200}}`,
			want:   []string{"disks disks.count", "disks /dev/nvme0n1"},
			action: []string{"disk /dev/nvme0n1 (serial S1) is smaller"}},
		{name: "memory without DIMM data", plugin: `{}`, validation: `{"memory": {"physical_mb": 32768, "dimm_count": 2}}`,
			want: []string{"memory memory"}, action: []string{"extra-hardware collector"}},
		{name: "memory DIMMs inconsistent", plugin: dimms, validation: `{"memory": {"physical_mb": 32768, "dimm_size_mb": 16384}}`,
			want: []string{"memory memory"}, action: []string{"DIMM sizes, DIMM consistency", "wrong size: A2"}},
		{name: "bios unreported fails an allow list", plugin: `{}`, validation: `{"bios": {"allow": ["2.*"]}}`,
			want: []string{"bios bios"}, action: []string{"did not report the BIOS version"}},
		{name: "bios unreported passes a block list", plugin: `{}`, validation: `{"bios": {"block": ["2.0"]}}`},
		{name: "bios from extra not allowed", plugin: `{"extra": {"firmware": {"bios": {"version": "1.2"}}}}`, validation: `{"bios": {"allow": ["2.*", "1.3"]}}`,
			want: []string{"bios bios"}, action: []string{"BIOS 1.2 is not on NetBox's allow list"}},
		{name: "gpus without pci data", plugin: `{}`, validation: `{"gpus": []}`,
			want: []string{"gpu pci_devices"}, action: []string{"pci-devices collector"}},
		{name: "gpus: named count, unexpected accelerator", plugin: dimms, validation: `{"gpus": [{"vendor_id": "10de", "device_id": "26b9", "count": 2, "name": "L40S 48GB"}]}`,
			want: []string{"gpu 10de:26b9", "gpu 10de:26ba"}, action: []string{"expects 2 L40S 48GB", "a GPU NetBox does not expect is fitted (NVIDIA Corporation L20, 10de:26ba)"}},
		{name: "gpus: none expected, none fitted", plugin: `{"pci_devices": [{"vendor_id": "8086", "product_id": "1521"}]}`, validation: `{"gpus": []}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v map[string]any
			if err := json.Unmarshal([]byte(tc.validation), &v); err != nil {
				t.Fatal(err)
			}
			exp, err := verify.ExpectationsFrom("h1", v, cables, true)
			if err != nil {
				t.Fatal(err)
			}
			rep := verify.Check(hwInventory(t, tc.plugin), exp)
			var got []string
			for _, m := range rep.Mismatches {
				got = append(got, m.Check+" "+m.Subject)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("mismatches %v, want %v:\n%s", got, tc.want, dump(rep))
			}
			for _, a := range tc.action {
				found := false
				for _, m := range rep.Mismatches {
					found = found || strings.Contains(m.Action, a)
				}
				if !found {
					t.Errorf("no action says %q:\n%s", a, dump(rep))
				}
			}
			if len(tc.want) > 0 {
				f, ok := hostforge.AsFailure(rep.Err())
				if !ok || f.Code != verify.HardwareMismatch.Code || !strings.Contains(f.Message, fmt.Sprintf("%d inspection mismatch", len(tc.want))) {
					t.Errorf("Err() = %v", rep.Err())
				}
			}
		})
	}
}
