package verify_test

import (
	"strings"
	"testing"

	"github.com/hostforge/hostforge/verify"
)

func TestParseInventoryFormats(t *testing.T) {
	for _, tc := range []struct {
		name, path                 string
		format                     string
		ifaces, disks, count       int
		bios, bmc, vendor, product string
		physMB                     int
	}{
		{"ironic api ref", "ironic-api-ref/node-inventory-response.json", verify.FormatIronic, 1, 0, 1, "", "", "", "", 0},
		{"inspector api ref", "ironic-inspector-api-ref/api-v1-data-introspection-response.json", verify.FormatInspector, 2, 1, 2, "", "192.167.2.134", "Bochs", "Bochs", 2048},
		{"r320", "metal3-docs/dell-r320-inspector-data-lldp.json", verify.FormatInspector, 4, 1, 16, "2.3.3", "10.9.10.109", "Dell Inc.", "PowerEdge R320 (SKU=NotProvided;ModelName=PowerEdge R320)", 81920},
		{"kvm", "metal3-docs/kvm-vm-inspector-data.json", verify.FormatInspector, 2, 1, 2, "", "0.0.0.0", "Red Hat", "KVM", 6144},
		{"r7615", "understack/dell-r7615-inventory-raw-lldp.json", verify.FormatIronic, 6, 1, 32, "1.6.10", "10.46.96.165", "Dell Inc.", "PowerEdge R7615 (SKU=0AF7;ModelName=PowerEdge R7615)", 98304},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := append([]string{"ipa-inventory"}, strings.Split(tc.path, "/")...)
			inv, err := verify.ParseInventory(readReal(t, p...))
			if err != nil {
				t.Fatal(err)
			}
			got := []any{inv.Format, len(inv.Interfaces), len(inv.Disks), inv.CPU.Count, inv.BIOSVersion, inv.BMCAddress, inv.SystemVendor.Manufacturer, inv.SystemVendor.ProductName, inv.Memory.PhysicalMB}
			want := []any{tc.format, tc.ifaces, tc.disks, tc.count, tc.bios, tc.bmc, tc.vendor, tc.product, tc.physMB}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("field %d = %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
}

func TestParseInventorySources(t *testing.T) {
	// A bare inventory, LLDP from plugin_data.lldp_raw and parsed_lldp,
	// extra-hardware data as raw quadruples, and loosely typed values.
	inv, err := verify.ParseInventory([]byte(`{
		"interfaces": [
			{"name": "a", "mac_address": "AA-BB-CC-00-00-01", "has_carrier": "true", "lldp": null},
			{"name": "b", "mac_address": "aa:bb:cc:00:00:02", "has_carrier": 0, "speed_mbps": "25000"}],
		"cpu": {"count": "4", "architecture": "x86_64", "socket_count": null},
		"memory": {"physical_mb": 1024},
		"disks": [{"name": "/dev/sda", "size": "1000", "rotational": 1, "model": 7}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := inv.InterfaceByMAC("aa:bb:cc:00:00:01")
	b, _ := inv.InterfaceByName("b")
	if inv.Format != verify.FormatBare || a == nil || *a.HasCarrier != true || *b.HasCarrier != false || b.SpeedMbps != 25000 || inv.CPU.Count != 4 ||
		inv.Disks[0].SizeBytes != 1000 || !inv.Disks[0].Rotational || inv.Disks[0].Model != "7" || a.LLDPCollected {
		t.Errorf("bare inventory read as %+v", inv)
	}
	if _, ok := inv.InterfaceByName("zz"); ok {
		t.Error("found a missing interface")
	}

	inv, err = verify.ParseInventory([]byte(`{
		"inventory": {"interfaces": [
			{"name": "a", "mac_address": "aa:bb:cc:00:00:01", "lldp": null},
			{"name": "b", "mac_address": "aa:bb:cc:00:00:02", "lldp": []},
			{"name": "c", "mac_address": "aa:bb:cc:00:00:03"}]},
		"plugin_data": {
			"lldp_raw": {"a": [[5, "6c6561662d31"], [2, "0573777031"]]},
			"parsed_lldp": {"b": {"switch_system_name": "leaf-2", "switch_port_id": "swp2", "switch_chassis_id": "44:a8:42:00:00:09",
				"switch_port_vlans": [{"id": 10, "name": "prov"}], "switch_mgmt_addresses": ["10.0.0.1", "fe80::1", "junk"],
				"switch_port_link_aggregation_id": 5, "switch_port_link_aggregation_enabled": true, "switch_port_mtu": 9216},
				"c": {"switch_chassis_id": "not-a-mac", "switch_port_description": "d"}},
			"data": [["memory", "bank:1", "size", 1073741824], ["memory", "bank:1", "slot", "B1"], ["memory", "bank0", "size", "2147483648"],
				["cpu", "physical", "number", 2], ["cpu", "physical_0", "cores", 4], ["cpu", "physical_1", "cores", 4],
				["firmware", "bios", "version", " 3.1 "], ["junk"], [1, 2, 3, 4]]}}`))
	if err != nil {
		t.Fatal(err)
	}
	ia, _ := inv.InterfaceByName("a")
	ib, _ := inv.InterfaceByName("b")
	ic, _ := inv.InterfaceByName("c")
	if ia.LLDPSource != "plugin_data.lldp_raw" || ia.LLDP.Name() != "leaf-1" || ia.LLDP.Port() != "swp1" {
		t.Errorf("lldp_raw: %+v", ia)
	}
	if ib.LLDPSource != "parsed_lldp" || ib.LLDP.Name() != "leaf-2" || ib.LLDP.Port() != "swp2" || ib.LLDP.ChassisID.String() != "44:a8:42:00:00:09" ||
		len(ib.LLDP.ManagementAddresses) != 2 || ib.LLDP.ManagementAddresses[1].String() != "fe80::1" || !ib.LLDP.LinkAggregation.Enabled() || *ib.LLDP.MaxFrameSize != 9216 {
		t.Errorf("parsed_lldp: %+v", ib.LLDP)
	}
	if ic.LLDP.ChassisID.String() != "not-a-mac" || ic.LLDP.Description() != "d" {
		t.Errorf("parsed_lldp with a local chassis id: %+v", ic.LLDP)
	}
	if len(inv.Memory.DIMMs) != 2 || inv.Memory.DIMMs[0].Place() != "bank0" || inv.Memory.DIMMs[1].Place() != "B1" || inv.Memory.DIMMs[1].SizeMB != 1024 {
		t.Errorf("DIMMs from data quadruples: %+v", inv.Memory.DIMMs)
	}
	if inv.CPU.Sockets != 2 || inv.CPU.Cores != 8 || inv.BIOSVersion != "3.1" {
		t.Errorf("cpu/bios from data quadruples: %+v %q", inv.CPU, inv.BIOSVersion)
	}
}

func TestParseInventoryInvalid(t *testing.T) {
	for _, tc := range []struct{ name, doc, says string }{
		{"not JSON", `{`, "not a JSON object"},
		{"a list", `[]`, "not a JSON object"},
		{"no inventory", `{"foo": 1}`, "no inventory object"},
		{"interfaces not a list", `{"inventory": {"interfaces": {"eth0": {}}}}`, "cannot be read"},
		{"plugin data wrong shape", `{"inventory": {}, "plugin_data": {"lldp_raw": []}}`, "plugin data cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := verify.ParseInventory([]byte(tc.doc))
			if !verify.InventoryInvalid.Is(err) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %v, want INSPECTION_INVENTORY_INVALID saying %q", err, tc.says)
			}
		})
	}
}
