package fakes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
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

// chassisID is the six bytes of the switch's chassis MAC, derived from its
// name (a locally administered unicast address).
func chassisID(name string) []byte {
	sum := sha256.Sum256([]byte(name))
	return []byte{0x02 | sum[0]&0xfc, sum[1], sum[2], sum[3], sum[4], sum[5]}
}

// lldpTLVs are the raw TLVs a NIC hears from the switch port it is really
// cabled to (Cumulus style: port ID subtype 5 = interface name, port
// description = the connected host), as IPA's JSON: [[type, "hex"], …,
// [0, ""]]. An empty list when the NIC is not cabled.
func lldpTLVs(host string, nic PhysNIC) json.RawMessage {
	if nic.Switch == "" || nic.Port == "" || nic.Link == "down" {
		return json.RawMessage("[]")
	}
	mac := chassisID(nic.Switch)
	b := make([]byte, 0, 160)
	b = append(b, '[')
	tlv := func(typ int, v []byte) {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(typ), 10)
		b = append(b, `,"`...)
		b = hex.AppendEncode(b, v)
		b = append(b, `"],`...)
	}
	tlv(1, append([]byte{4}, mac...))
	tlv(2, append([]byte{5}, nic.Port...))
	tlv(3, []byte{0, 120})
	tlv(4, []byte(host))
	tlv(5, []byte(nic.Switch))
	return append(b, `[0,""]]`...)
}

// The inspection data's shapes, typed rather than maps (the fleet
// simulator renders one per inspected host), fields in the order
// encoding/json gives a map's keys, so the bytes are those a rendering of
// maps gives (TestInventoryJSON).
type (
	invDoc struct {
		Inventory  invInventory `json:"inventory"`
		PluginData invPlugin    `json:"plugin_data"`
	}
	invInventory struct {
		BMCAddress   string         `json:"bmc_address"`
		BMCMAC       string         `json:"bmc_mac"`
		Boot         invBoot        `json:"boot"`
		CPU          invCPU         `json:"cpu"`
		Disks        []invDisk      `json:"disks"`
		Interfaces   []invInterface `json:"interfaces"`
		Memory       invMemory      `json:"memory"`
		SystemVendor invVendor      `json:"system_vendor"`
	}
	invBoot struct {
		CurrentBootMode string  `json:"current_boot_mode"`
		PXEInterface    *string `json:"pxe_interface,omitempty"`
	}
	invCPU struct {
		Architecture string   `json:"architecture"`
		Count        int      `json:"count"`
		Flags        []string `json:"flags"`
		Frequency    string   `json:"frequency"`
		ModelName    string   `json:"model_name"`
		SocketCount  int      `json:"socket_count"`
	}
	invDisk struct {
		Model      string `json:"model"`
		Name       string `json:"name"`
		Rotational bool   `json:"rotational"`
		Serial     string `json:"serial"`
		Size       int64  `json:"size"`
		Vendor     string `json:"vendor"`
	}
	invInterface struct {
		ClientID    *string         `json:"client_id"`
		Driver      string          `json:"driver"`
		HasCarrier  bool            `json:"has_carrier"`
		IPv4Address *string         `json:"ipv4_address"`
		LLDP        json.RawMessage `json:"lldp"`
		MACAddress  string          `json:"mac_address"`
		Name        string          `json:"name"`
		PCIAddress  string          `json:"pci_address"`
		Product     string          `json:"product"`
		SpeedMbps   int             `json:"speed_mbps"`
		Vendor      string          `json:"vendor"`
	}
	invMemory struct {
		PhysicalMB int   `json:"physical_mb"`
		Total      int64 `json:"total"`
	}
	invVendor struct {
		Firmware     invFirmware `json:"firmware"`
		Manufacturer string      `json:"manufacturer"`
		ProductName  string      `json:"product_name"`
		SerialNumber string      `json:"serial_number"`
	}
	invFirmware struct {
		Vendor  string `json:"vendor"`
		Version string `json:"version"`
	}
	invPlugin struct {
		Extra      invExtra `json:"extra"`
		PCIDevices []invPCI `json:"pci_devices"`
	}
	invExtra struct {
		CPU      map[string]any     `json:"cpu"`
		Firmware invExtraFirmware   `json:"firmware"`
		Memory   map[string]invDIMM `json:"memory"`
	}
	invExtraFirmware struct {
		BIOS invFirmware `json:"bios"`
	}
	invDIMM struct {
		Product string `json:"product"`
		Size    int64  `json:"size"`
		Slot    string `json:"slot"`
		Vendor  string `json:"vendor"`
	}
	invSocket struct {
		Cores   int    `json:"cores"`
		Product string `json:"product"`
		Threads int    `json:"threads"`
	}
	invPCI struct {
		Bus       string `json:"bus"`
		Class     string `json:"class"`
		ProductID string `json:"product_id"`
		VendorID  string `json:"vendor_id"`
	}
)

// InventoryJSON renders the inspection data Ironic returns for a host
// ({"inventory", "plugin_data"}, Ironic's node inventory API): its NICs with
// raw LLDP naming the switch and port each is REALLY wired to, its CPUs,
// memory and DIMMs (extra-hardware data), disks, BIOS version and PCI
// functions. A miscabled host therefore fails LLDP verification.
func InventoryJSON(h *Host) []byte {
	hw := h.Hardware
	threads := hw.ThreadsPer
	if threads == 0 {
		threads = 1
	}
	inv := invInventory{
		BMCAddress: h.OOBIP,
		BMCMAC:     h.BMCMAC,
		Boot:       invBoot{CurrentBootMode: "uefi"},
		CPU: invCPU{Architecture: hw.Arch, Count: hw.Sockets * hw.CoresPerCPU * threads, Flags: []string{"fpu", "lm", "svm"},
			Frequency: "3250.0000", ModelName: hw.CPUModel, SocketCount: hw.Sockets},
		Memory: invMemory{PhysicalMB: hw.MemoryMB, Total: int64(hw.MemoryMB) * (1 << 20) * 97 / 100},
		SystemVendor: invVendor{Firmware: invFirmware{Vendor: hw.SystemVendor, Version: hw.BIOSVersion},
			Manufacturer: hw.SystemVendor, ProductName: hw.ProductName, SerialNumber: "SN-" + h.Name},
	}
	for i, nic := range h.NICs {
		inv.Interfaces = append(inv.Interfaces, invInterface{
			Name: nic.Name, MACAddress: strings.ToLower(nic.MAC), HasCarrier: nic.Link != "down",
			Vendor: "0x15b3", Product: "0x1017", Driver: "mlx5_core", SpeedMbps: 25000,
			PCIAddress: fmt.Sprintf("0000:%02x:00.0", 0x41+i),
			LLDP:       lldpTLVs(h.Name, nic),
		})
	}
	if len(h.NICs) > 0 {
		pxe := strings.ToLower(h.NICs[0].MAC)
		inv.Boot.PXEInterface = &pxe
	}
	for _, d := range hw.Disks {
		inv.Disks = append(inv.Disks, invDisk{Name: d.Name, Model: d.Model, Size: d.SizeBytes, Rotational: d.Rotational, Serial: d.Serial})
	}
	memory := make(map[string]invDIMM, len(hw.DIMMs))
	for i, d := range hw.DIMMs {
		memory["bank:"+strconv.Itoa(i)] = invDIMM{Size: int64(d.SizeMB) << 20, Slot: d.Slot, Product: "M321R4GA3BB6-CQK", Vendor: "Samsung"}
	}
	cpu := map[string]any{"physical": map[string]int{"number": hw.Sockets}}
	for s := 0; s < hw.Sockets; s++ {
		cpu["physical_"+strconv.Itoa(s)] = invSocket{Cores: hw.CoresPerCPU, Threads: hw.CoresPerCPU * threads, Product: hw.CPUModel}
	}
	pci := []invPCI{}
	for _, p := range hw.PCI {
		pci = append(pci, invPCI{VendorID: p.VendorID, ProductID: p.ProductID, Class: p.Class, Bus: p.Address})
	}
	doc := invDoc{Inventory: inv, PluginData: invPlugin{PCIDevices: pci, Extra: invExtra{
		Memory: memory, CPU: cpu, Firmware: invExtraFirmware{BIOS: invFirmware{Version: hw.BIOSVersion, Vendor: hw.SystemVendor}},
	}}}
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
