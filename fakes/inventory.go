package fakes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// DefaultHardware is the hardware the builder gives a host of this model:
// two 32-core sockets, 16 × 32 GiB DIMMs, two NVMe disks. GPU hosts get
// their PCI functions from the HostSpec (see AddHost).
func DefaultHardware(manufacturer, model string) Hardware {
	if manufacturer == "" {
		manufacturer = "Dell Inc."
	}
	if model == "" {
		model = "PowerEdge R7615"
	}
	hw := Hardware{
		Arch: "x86_64", Sockets: 2, CoresPerCPU: 32, ThreadsPer: 2,
		CPUModel:     "AMD EPYC 9354 32-Core Processor",
		BIOSVersion:  "1.6.3",
		SystemVendor: manufacturer, ProductName: model,
	}
	for i := 0; i < 16; i++ {
		hw.DIMMs = append(hw.DIMMs, DIMM{Slot: fmt.Sprintf("DIMM.Socket.%c%d", 'A'+rune(i/8), i%8+1), SizeMB: 32768})
	}
	hw.MemoryMB = 16 * 32768
	for i := 0; i < 2; i++ {
		hw.Disks = append(hw.Disks, Disk{Name: fmt.Sprintf("/dev/nvme%dn1", i), Model: "Dell Ent NVMe CM6 RI 1.92TB",
			SizeBytes: 1920383410176, Serial: fmt.Sprintf("S6XXNX0T%06d", i+1)})
	}
	return hw
}

// switchChassisMAC is a switch's stable LLDP chassis ID.
func switchChassisMAC(name string) string {
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", 0x02|sum[0]&0xfc, sum[1], sum[2], sum[3], sum[4], sum[5])
}

func tlv(typ int, b []byte) []any { return []any{typ, hex.EncodeToString(b)} }

// lldpTLVs are the raw TLVs a NIC hears from the switch port it is really
// cabled to (Cumulus style: port ID subtype 5 = interface name, port
// description = the connected host). nil when the NIC is not cabled.
func lldpTLVs(host string, nic PhysNIC) [][]any {
	if nic.Switch == "" || nic.Port == "" || nic.Link == "down" {
		return [][]any{}
	}
	chassis := strings.ReplaceAll(switchChassisMAC(nic.Switch), ":", "")
	mac, _ := hex.DecodeString(chassis)
	return [][]any{
		tlv(1, append([]byte{4}, mac...)),
		tlv(2, append([]byte{5}, nic.Port...)),
		tlv(3, []byte{0, 120}),
		tlv(4, []byte(host)),
		tlv(5, []byte(nic.Switch)),
		{0, ""},
	}
}

// InventoryJSON renders the inspection data Ironic returns for a host
// ({"inventory", "plugin_data"}, Ironic's node inventory API): its NICs with
// raw LLDP naming the switch and port each is REALLY wired to, its CPUs,
// memory and DIMMs (extra-hardware data), disks, BIOS version and PCI
// functions. A miscabled host therefore fails LLDP verification.
func InventoryJSON(h *Host) []byte {
	hw := h.Hardware
	var ifaces []map[string]any
	for i, nic := range h.NICs {
		carrier := nic.Link != "down"
		ifaces = append(ifaces, map[string]any{
			"name": nic.Name, "mac_address": strings.ToLower(nic.MAC), "has_carrier": carrier,
			"vendor": "0x15b3", "product": "0x1017", "driver": "mlx5_core", "speed_mbps": 25000,
			"pci_address":  fmt.Sprintf("0000:%02x:00.0", 0x41+i),
			"lldp":         lldpTLVs(h.Name, nic),
			"ipv4_address": nil, "client_id": nil,
		})
	}
	var disks []map[string]any
	for _, d := range hw.Disks {
		disks = append(disks, map[string]any{"name": d.Name, "model": d.Model, "size": d.SizeBytes, "rotational": d.Rotational, "serial": d.Serial, "vendor": ""})
	}
	threads := hw.ThreadsPer
	if threads == 0 {
		threads = 1
	}
	inv := map[string]any{
		"interfaces": ifaces,
		"cpu": map[string]any{
			"model_name": hw.CPUModel, "count": hw.Sockets * hw.CoresPerCPU * threads, "architecture": hw.Arch,
			"socket_count": hw.Sockets, "frequency": "3250.0000", "flags": []string{"fpu", "lm", "svm"},
		},
		"memory":        map[string]any{"physical_mb": hw.MemoryMB, "total": int64(hw.MemoryMB) * (1 << 20) * 97 / 100},
		"disks":         disks,
		"bmc_address":   h.OOBIP,
		"bmc_mac":       h.BMCMAC,
		"system_vendor": map[string]any{"manufacturer": hw.SystemVendor, "product_name": hw.ProductName, "serial_number": "SN-" + h.Name, "firmware": map[string]any{"vendor": hw.SystemVendor, "version": hw.BIOSVersion}},
		"boot":          map[string]any{"current_boot_mode": "uefi"},
	}
	if len(h.NICs) > 0 {
		inv["boot"].(map[string]any)["pxe_interface"] = strings.ToLower(h.NICs[0].MAC)
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
	doc := map[string]any{
		"inventory": inv,
		"plugin_data": map[string]any{
			"pci_devices": pci,
			"extra": map[string]any{
				"memory":   memory,
				"cpu":      cpu,
				"firmware": map[string]any{"bios": map[string]any{"version": hw.BIOSVersion, "vendor": hw.SystemVendor}},
			},
		},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic("fakes: inventory does not marshal: " + err.Error())
	}
	return b
}

// inspectionValidation is the config context's inspection_validation block
// that a host with this hardware passes (schema: package verify's doc).
func inspectionValidation(spec HostSpec, hw Hardware) map[string]any {
	threads := hw.ThreadsPer
	if threads == 0 {
		threads = 1
	}
	models := []any{}
	seen := map[string]bool{}
	for _, d := range hw.Disks {
		if !seen[d.Model] {
			seen[d.Model] = true
			models = append(models, d.Model)
		}
	}
	v := map[string]any{
		"cpu": map[string]any{
			"architecture": hw.Arch, "count": hw.Sockets * hw.CoresPerCPU * threads,
			"cores": hw.Sockets * hw.CoresPerCPU, "sockets": hw.Sockets,
		},
		"nics":  map[string]any{"count": spec.NICs},
		"disks": map[string]any{"count": len(hw.Disks), "models": models},
		"memory": map[string]any{
			"physical_mb": hw.MemoryMB, "dimm_count": len(hw.DIMMs),
		},
		"bios": map[string]any{"allow": []any{hw.BIOSVersion}},
	}
	if len(hw.DIMMs) > 0 {
		v["memory"].(map[string]any)["dimm_size_mb"] = hw.DIMMs[0].SizeMB
	}
	return v
}
