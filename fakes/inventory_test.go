package fakes_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/fakes"
)

// referenceInventory renders the inspection data with encoding/json from
// maps: what InventoryJSON writes out directly must be byte for byte this.
func referenceInventory(h *fakes.Host) []byte {
	hw := h.Hardware
	var ifaces []map[string]any
	for i, nic := range h.NICs {
		var lldp json.RawMessage
		if b := fakes.InventoryJSON(&fakes.Host{Name: h.Name, NICs: []fakes.PhysNIC{nic}}); true {
			// The LLDP list is the one part rendered the same way by both:
			// take it from a one-NIC document.
			var doc struct {
				Inventory struct {
					Interfaces []struct {
						LLDP json.RawMessage `json:"lldp"`
					} `json:"interfaces"`
				} `json:"inventory"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				panic(err)
			}
			lldp = doc.Inventory.Interfaces[0].LLDP
		}
		ifaces = append(ifaces, map[string]any{
			"name": nic.Name, "mac_address": strings.ToLower(nic.MAC), "has_carrier": nic.Link != "down",
			"vendor": "0x15b3", "product": "0x1017", "driver": "mlx5_core", "speed_mbps": 25000,
			"pci_address": fmt.Sprintf("0000:%02x:00.0", 0x41+i), "lldp": lldp, "ipv4_address": nil, "client_id": nil,
		})
	}
	var disks []map[string]any
	for _, d := range hw.Disks {
		disks = append(disks, map[string]any{"name": d.Name, "model": d.Model, "size": d.SizeBytes, "rotational": d.Rotational, "serial": d.Serial, "vendor": ""})
	}
	threads := max(hw.ThreadsPer, 1)
	boot := map[string]any{"current_boot_mode": "uefi"}
	if len(h.NICs) > 0 {
		boot["pxe_interface"] = strings.ToLower(h.NICs[0].MAC)
	}
	memory := map[string]any{}
	for i, d := range hw.DIMMs {
		memory[fmt.Sprintf("bank:%d", i)] = map[string]any{"size": int64(d.SizeMB) << 20, "slot": d.Slot, "product": "M321R4GA3BB6-CQK", "vendor": "Samsung"}
	}
	cpu := map[string]any{"physical": map[string]any{"number": hw.Sockets}}
	for s := 0; s < hw.Sockets; s++ {
		cpu[fmt.Sprintf("physical_%d", s)] = map[string]any{"cores": hw.CoresPerCPU, "threads": hw.CoresPerCPU * threads, "product": hw.CPUModel}
	}
	pci := []map[string]any{}
	for _, p := range hw.PCI {
		pci = append(pci, map[string]any{"vendor_id": p.VendorID, "product_id": p.ProductID, "class": p.Class, "bus": p.Address})
	}
	b, err := json.Marshal(map[string]any{
		"inventory": map[string]any{
			"interfaces": ifaces, "disks": disks, "bmc_address": h.OOBIP, "bmc_mac": h.BMCMAC, "boot": boot,
			"cpu": map[string]any{"model_name": hw.CPUModel, "count": hw.Sockets * hw.CoresPerCPU * threads, "architecture": hw.Arch,
				"socket_count": hw.Sockets, "frequency": "3250.0000", "flags": []string{"fpu", "lm", "svm"}},
			"memory": map[string]any{"physical_mb": hw.MemoryMB, "total": int64(hw.MemoryMB) * (1 << 20) * 97 / 100},
			"system_vendor": map[string]any{"manufacturer": hw.SystemVendor, "product_name": hw.ProductName, "serial_number": "SN-" + h.Name,
				"firmware": map[string]any{"vendor": hw.SystemVendor, "version": hw.BIOSVersion}},
		},
		"plugin_data": map[string]any{"pci_devices": pci, "extra": map[string]any{
			"memory": memory, "cpu": cpu, "firmware": map[string]any{"bios": map[string]any{"version": hw.BIOSVersion, "vendor": hw.SystemVendor}},
		}},
	})
	if err != nil {
		panic(err)
	}
	return b
}

func TestInventoryJSON(t *testing.T) {
	site := fakes.NewSite()
	var hosts []*fakes.Host
	hosts = append(hosts, site.AddHost(fakes.HostSpec{Name: "plain"}), site.AddHost(fakes.HostSpec{Name: "four-nics", NICs: 4}))
	gpu := site.AddHost(fakes.HostSpec{Name: "gpu-1", GPUType: "H100"})
	gpu.Hardware.PCI = append(gpu.Hardware.PCI, fakes.PCIDevice{VendorID: "10de", ProductID: "2330", Class: "0302", Address: "0000:18:00.0"})
	down := site.AddHost(fakes.HostSpec{Name: "dead-optic"})
	down.NICs[1].Link = "down"
	bare := site.AddHost(fakes.HostSpec{Name: "no-nics"})
	bare.NICs, bare.Hardware.Disks, bare.Hardware.DIMMs = nil, nil, nil
	odd := site.AddHost(fakes.HostSpec{Name: "odd"})
	odd.Hardware.ProductName, odd.Hardware.SystemVendor = `R<7615> "&" é \ tab	`, "Dell\u2028Inc."
	odd.Hardware.Sockets, odd.Hardware.DIMMs = 12, append(odd.Hardware.DIMMs, odd.Hardware.DIMMs...)
	hosts = append(hosts, gpu, down, bare, odd)
	for _, h := range hosts {
		got, want := fakes.InventoryJSON(h), referenceInventory(h)
		if string(got) != string(want) {
			t.Errorf("%s: InventoryJSON\n%s\nencoding/json\n%s", h.Name, got, want)
		}
	}
}
