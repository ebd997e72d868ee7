package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hostforge/hostforge"
)

// Inventory formats ParseInventory recognises.
const (
	// FormatIronic is Ironic's node inventory API: {"inventory", "plugin_data"}.
	FormatIronic = "ironic"
	// FormatInspector is ironic-inspector's introspection data: the inventory
	// under "inventory", the plugin data flattened at the top level.
	FormatInspector = "inspector"
	// FormatBare is an IPA inventory on its own, without plugin data.
	FormatBare = "inventory"
)

// Inventory is a host's inspection data.
type Inventory struct {
	Format       string       `json:"format"`
	CPU          CPU          `json:"cpu"`
	Memory       Memory       `json:"memory"`
	Disks        []Disk       `json:"disks"`
	Interfaces   []Interface  `json:"interfaces"`
	BMCAddress   string       `json:"bmc_address,omitempty"`
	BMCMAC       string       `json:"bmc_mac,omitempty"`
	SystemVendor SystemVendor `json:"system_vendor"`
	// BIOSVersion is the system firmware version, "" when not reported.
	BIOSVersion string `json:"bios_version,omitempty"`
	// PCIDevices are plugin_data.pci_devices; PCIReported says whether the
	// pci-devices collector ran at all (an empty list is still a report).
	PCIDevices  []PCIDevice `json:"pci_devices,omitempty"`
	PCIReported bool        `json:"pci_reported"`
	// PXEInterface is the MAC the host booted from, when reported.
	PXEInterface string `json:"pxe_interface,omitempty"`

	byMAC  map[string]int
	byName map[string]int
}

// CPU is what the host reports of its processors. Zero means not reported.
type CPU struct {
	// Count is the logical CPU count (IPA's cpu.count: threads, not cores).
	Count int `json:"count"`
	// Cores is the physical core count, from the extra-hardware data.
	Cores int `json:"cores,omitempty"`
	// Sockets is cpu.socket_count, or the extra-hardware physical CPU count.
	Sockets      int    `json:"sockets,omitempty"`
	Architecture string `json:"architecture,omitempty"`
	Model        string `json:"model,omitempty"`
}

// Memory is the host's memory.
type Memory struct {
	PhysicalMB int   `json:"physical_mb"`
	TotalBytes int64 `json:"total_bytes,omitempty"`
	// DIMMs are the populated modules (extra-hardware data); nil when not reported.
	DIMMs []DIMM `json:"dimms,omitempty"`
}

// DIMM is one populated memory module.
type DIMM struct {
	Bank    string `json:"bank"`
	Slot    string `json:"slot,omitempty"`
	SizeMB  int    `json:"size_mb"`
	Product string `json:"product,omitempty"`
	Vendor  string `json:"vendor,omitempty"`
	Serial  string `json:"serial,omitempty"`
}

// Place names the DIMM for an operator: its slot label, else its bank.
func (d DIMM) Place() string {
	if d.Slot != "" {
		return d.Slot
	}
	return d.Bank
}

// Disk is one block device.
type Disk struct {
	Name       string `json:"name"`
	Model      string `json:"model,omitempty"`
	Vendor     string `json:"vendor,omitempty"`
	SizeBytes  int64  `json:"size_bytes"`
	Rotational bool   `json:"rotational"`
	Serial     string `json:"serial,omitempty"`
	HCTL       string `json:"hctl,omitempty"`
	ByPath     string `json:"by_path,omitempty"`
}

// Interface is one network interface the ramdisk saw.
type Interface struct {
	Name string `json:"name"`
	MAC  string `json:"mac"`
	// HasCarrier is nil when the host did not report it.
	HasCarrier *bool  `json:"has_carrier,omitempty"`
	Vendor     string `json:"vendor,omitempty"`
	Product    string `json:"product,omitempty"`
	Driver     string `json:"driver,omitempty"`
	SpeedMbps  int    `json:"speed_mbps,omitempty"`
	PCIAddress string `json:"pci_address,omitempty"`
	// LLDPCollected is false when LLDP was not collected for this interface
	// (IPA ran without ipa-collect-lldp=1, and no processed data exists).
	LLDPCollected bool `json:"lldp_collected"`
	// LLDPRaw is the raw TLVs, when the host sent them.
	LLDPRaw []TLV `json:"lldp_raw,omitempty"`
	// LLDP is the neighbour heard, decoded from LLDPRaw or mapped from the
	// processed switch_* keys; nil when nothing was heard.
	LLDP *LLDP `json:"lldp,omitempty"`
	// LLDPSource says where LLDP came from: "inventory", "plugin_data.lldp_raw",
	// "parsed_lldp" or "lldp_processed".
	LLDPSource string `json:"lldp_source,omitempty"`
}

// SystemVendor is the DMI system identity.
type SystemVendor struct {
	Manufacturer string `json:"manufacturer,omitempty"`
	ProductName  string `json:"product_name,omitempty"`
	SerialNumber string `json:"serial_number,omitempty"`
}

// PCIDevice is one PCI function from IPA's pci-devices collector. Ids are
// lower-case hex without 0x.
type PCIDevice struct {
	VendorID  string `json:"vendor_id"`
	ProductID string `json:"product_id"`
	Class     string `json:"class,omitempty"`
	Bus       string `json:"bus,omitempty"`
}

// Interface returns the interface with that MAC (any case or separator).
func (inv *Inventory) InterfaceByMAC(mac string) (*Interface, bool) {
	m := normMAC(mac)
	if inv.byMAC != nil {
		i, ok := inv.byMAC[m]
		if !ok {
			return nil, false
		}
		return &inv.Interfaces[i], true
	}
	for i := range inv.Interfaces {
		if normMAC(inv.Interfaces[i].MAC) == m {
			return &inv.Interfaces[i], true
		}
	}
	return nil, false
}

// InterfaceByName returns the interface with that kernel name.
func (inv *Inventory) InterfaceByName(name string) (*Interface, bool) {
	if inv.byName != nil {
		i, ok := inv.byName[name]
		if !ok {
			return nil, false
		}
		return &inv.Interfaces[i], true
	}
	for i := range inv.Interfaces {
		if inv.Interfaces[i].Name == name {
			return &inv.Interfaces[i], true
		}
	}
	return nil, false
}

func (inv *Inventory) index() {
	inv.byMAC = make(map[string]int, len(inv.Interfaces))
	inv.byName = make(map[string]int, len(inv.Interfaces))
	for i, it := range inv.Interfaces {
		if it.MAC != "" {
			if _, dup := inv.byMAC[normMAC(it.MAC)]; !dup {
				inv.byMAC[normMAC(it.MAC)] = i
			}
		}
		if _, dup := inv.byName[it.Name]; !dup {
			inv.byName[it.Name] = i
		}
	}
}

// normMAC keys interfaces by hostforge.NormalizeMAC; junk keys lower-cased.
func normMAC(s string) string {
	m, _ := hostforge.NormalizeMAC(s)
	return m
}

// jstr reads a JSON string, number or boolean as text, and null or a
// structure as "" (inventories from different IPA versions disagree on types).
type jstr string

func (s *jstr) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0 || b[0] == 'n' || b[0] == '{' || b[0] == '[':
		*s = ""
	case b[0] == '"':
		// The decoder calling this has checked the string's syntax: one
		// without escapes and with valid UTF-8 is its bytes between the
		// quotes, as json.Unmarshal would return it, without a second
		// scan (an inventory is mostly such strings).
		if len(b) >= 2 && b[len(b)-1] == '"' {
			if in := b[1 : len(b)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
				*s = jstr(in)
				return nil
			}
		}
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = jstr(v)
	default:
		*s = jstr(b)
	}
	return nil
}

// jnum reads a JSON number or numeric string; null, junk and structures read as 0.
type jnum float64

func (n *jnum) UnmarshalJSON(b []byte) error {
	var s jstr
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(s)), 64)
	if err != nil || f != f || f > 1e18 || f < -1e18 {
		f = 0
	}
	*n = jnum(f)
	return nil
}

// jbool reads true/false (or "true"/"false", 1/0); null and junk read as unset.
type jbool struct {
	set, v bool
}

func (j *jbool) UnmarshalJSON(b []byte) error {
	var s jstr
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	switch strings.ToLower(strings.TrimSpace(string(s))) {
	case "true", "1", "yes":
		*j = jbool{true, true}
	case "false", "0", "no":
		*j = jbool{true, false}
	default:
		*j = jbool{}
	}
	return nil
}

func (j jbool) ptr() *bool {
	if !j.set {
		return nil
	}
	v := j.v
	return &v
}

type rawInventory struct {
	Interfaces []rawInterface `json:"interfaces"`
	CPU        struct {
		ModelName    jstr `json:"model_name"`
		Count        jnum `json:"count"`
		Architecture jstr `json:"architecture"`
		SocketCount  jnum `json:"socket_count"`
	} `json:"cpu"`
	Memory struct {
		PhysicalMB jnum `json:"physical_mb"`
		Total      jnum `json:"total"`
	} `json:"memory"`
	Disks        []rawDisk `json:"disks"`
	BMCAddress   jstr      `json:"bmc_address"`
	BMCMAC       jstr      `json:"bmc_mac"`
	SystemVendor struct {
		Manufacturer jstr `json:"manufacturer"`
		ProductName  jstr `json:"product_name"`
		SerialNumber jstr `json:"serial_number"`
		Firmware     struct {
			Version jstr `json:"version"`
		} `json:"firmware"`
	} `json:"system_vendor"`
	Boot struct {
		PXEInterface jstr `json:"pxe_interface"`
	} `json:"boot"`
}

type rawInterface struct {
	Name       jstr            `json:"name"`
	MAC        jstr            `json:"mac_address"`
	HasCarrier jbool           `json:"has_carrier"`
	Vendor     jstr            `json:"vendor"`
	Product    jstr            `json:"product"`
	Driver     jstr            `json:"driver"`
	Speed      jnum            `json:"speed_mbps"`
	PCIAddress jstr            `json:"pci_address"`
	LLDP       json.RawMessage `json:"lldp"`
}

type rawDisk struct {
	Name       jstr  `json:"name"`
	Model      jstr  `json:"model"`
	Vendor     jstr  `json:"vendor"`
	Size       jnum  `json:"size"`
	Rotational jbool `json:"rotational"`
	Serial     jstr  `json:"serial"`
	HCTL       jstr  `json:"hctl"`
	ByPath     jstr  `json:"by_path"`
}

// rawPlugin is the plugin data ParseInventory reads.
type rawPlugin struct {
	PCIDevices    json.RawMessage            `json:"pci_devices"`
	Extra         json.RawMessage            `json:"extra"`
	Data          json.RawMessage            `json:"data"`
	LLDPRaw       map[string]json.RawMessage `json:"lldp_raw"`
	ParsedLLDP    map[string]json.RawMessage `json:"parsed_lldp"`
	AllInterfaces map[string]json.RawMessage `json:"all_interfaces"`
}

// ParseInventory reads an inventory document in either format (see the
// package doc). A document that is not JSON, or not an inventory, is the
// failure INSPECTION_INVENTORY_INVALID; junk inside a well-formed inventory
// (a malformed LLDP pair, a value of an unexpected type) is tolerated.
func ParseInventory(b []byte) (Inventory, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return Inventory{}, InventoryInvalid.Wrap(err, "inspection data is not a JSON object")
	}
	var inv Inventory
	invRaw, pluginRaw := top["inventory"], json.RawMessage(nil)
	switch {
	case isObject(top["plugin_data"]) && isObject(invRaw):
		inv.Format, pluginRaw = FormatIronic, top["plugin_data"]
	case isObject(invRaw):
		inv.Format, pluginRaw = FormatInspector, b
	case len(top["interfaces"]) > 0 && (len(top["cpu"]) > 0 || len(top["memory"]) > 0):
		inv.Format, invRaw = FormatBare, b
	default:
		return Inventory{}, InventoryInvalid.New("inspection data has no inventory object (want Ironic's {inventory, plugin_data} or ironic-inspector's introspection data)")
	}
	var ri rawInventory
	if err := json.Unmarshal(invRaw, &ri); err != nil {
		return Inventory{}, InventoryInvalid.Wrap(err, "inspection inventory cannot be read")
	}
	var rp rawPlugin
	if pluginRaw != nil {
		if err := json.Unmarshal(pluginRaw, &rp); err != nil {
			return Inventory{}, InventoryInvalid.Wrap(err, "inspection plugin data cannot be read")
		}
	}

	inv.CPU = CPU{Count: int(ri.CPU.Count), Sockets: int(ri.CPU.SocketCount),
		Architecture: string(ri.CPU.Architecture), Model: string(ri.CPU.ModelName)}
	inv.Memory = Memory{PhysicalMB: int(ri.Memory.PhysicalMB), TotalBytes: int64(ri.Memory.Total)}
	inv.BMCAddress, inv.BMCMAC = string(ri.BMCAddress), string(ri.BMCMAC)
	inv.SystemVendor = SystemVendor{Manufacturer: string(ri.SystemVendor.Manufacturer),
		ProductName: string(ri.SystemVendor.ProductName), SerialNumber: string(ri.SystemVendor.SerialNumber)}
	inv.BIOSVersion = strings.TrimSpace(string(ri.SystemVendor.Firmware.Version))
	inv.PXEInterface = string(ri.Boot.PXEInterface)
	for _, d := range ri.Disks {
		inv.Disks = append(inv.Disks, Disk{Name: string(d.Name), Model: strings.TrimSpace(string(d.Model)),
			Vendor: strings.TrimSpace(string(d.Vendor)), SizeBytes: int64(d.Size), Rotational: d.Rotational.v,
			Serial: string(d.Serial), HCTL: string(d.HCTL), ByPath: string(d.ByPath)})
	}
	for _, ri := range ri.Interfaces {
		it := Interface{Name: string(ri.Name), MAC: normMAC(string(ri.MAC)), HasCarrier: ri.HasCarrier.ptr(),
			Vendor: strings.ToLower(string(ri.Vendor)), Product: strings.ToLower(string(ri.Product)),
			Driver: string(ri.Driver), SpeedMbps: int(ri.Speed), PCIAddress: string(ri.PCIAddress)}
		if raw := ri.LLDP; len(raw) > 0 && raw[0] == '[' {
			it.setRaw(raw, "inventory")
		}
		inv.Interfaces = append(inv.Interfaces, it)
	}
	inv.index()
	rp.applyLLDP(&inv)
	inv.PCIDevices, inv.PCIReported = parsePCI(rp.PCIDevices)
	extra := parseExtra(rp.Extra, rp.Data)
	extra.apply(&inv)
	return inv, nil
}

func isObject(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// setRaw decodes raw TLV pairs into the interface.
func (it *Interface) setRaw(raw json.RawMessage, source string) {
	tlvs, problems, err := ParseTLVPairs(raw)
	if err != nil {
		return
	}
	it.LLDPCollected, it.LLDPRaw, it.LLDPSource = true, tlvs, source
	if len(tlvs) == 0 && len(problems) == 0 {
		return // collected, nothing heard
	}
	l, _ := DecodeLLDP(tlvs)
	l.Problems = append(problems, l.Problems...)
	it.LLDP = &l
}

// applyLLDP fills interfaces without raw TLVs from plugin_data.lldp_raw, then
// from the processed switch_* keys.
func (rp *rawPlugin) applyLLDP(inv *Inventory) {
	for i := range inv.Interfaces {
		it := &inv.Interfaces[i]
		if len(it.LLDPRaw) > 0 {
			continue
		}
		if raw, ok := rp.LLDPRaw[it.Name]; ok && len(raw) > 0 && raw[0] == '[' {
			it.setRaw(raw, "plugin_data.lldp_raw")
			if len(it.LLDPRaw) > 0 {
				continue
			}
		}
		if p, ok := rp.ParsedLLDP[it.Name]; ok && isObject(p) {
			it.setProcessed(p, "parsed_lldp")
			continue
		}
		if a, ok := rp.AllInterfaces[it.Name]; ok && isObject(a) {
			var ai struct {
				Processed json.RawMessage `json:"lldp_processed"`
			}
			if json.Unmarshal(a, &ai) == nil && isObject(ai.Processed) {
				it.setProcessed(ai.Processed, "lldp_processed")
			}
		}
	}
}

// processedLLDP is ironic-inspector's / Ironic's parse-lldp output.
type processedLLDP struct {
	ChassisID  jstr  `json:"switch_chassis_id"`
	PortID     jstr  `json:"switch_port_id"`
	PortDesc   *jstr `json:"switch_port_description"`
	SystemName *jstr `json:"switch_system_name"`
	SystemDesc *jstr `json:"switch_system_description"`
	PVID       *jnum `json:"switch_port_untagged_vlan_id"`
	MTU        *jnum `json:"switch_port_mtu"`
	VLANs      []struct {
		ID   jnum `json:"id"`
		Name jstr `json:"name"`
	} `json:"switch_port_vlans"`
	MgmtAddresses []jstr `json:"switch_mgmt_addresses"`
	LAGEnabled    jbool  `json:"switch_port_link_aggregation_enabled"`
	LAGSupport    jbool  `json:"switch_port_link_aggregation_support"`
	LAGID         *jnum  `json:"switch_port_link_aggregation_id"`
}

// setProcessed maps processed switch_* keys onto an LLDP value.
func (it *Interface) setProcessed(raw json.RawMessage, source string) {
	var p processedLLDP
	if err := json.Unmarshal(raw, &p); err != nil {
		return
	}
	it.LLDPCollected, it.LLDPSource = true, source
	var l LLDP
	if c := string(p.ChassisID); c != "" {
		if hw, err := net.ParseMAC(c); err == nil && len(hw) == 6 {
			l.ChassisID = &ChassisID{ID{Subtype: 4, Raw: hw}}
		} else {
			l.ChassisID = &ChassisID{ID{Subtype: 7, Raw: []byte(c)}}
		}
	}
	if pid := string(p.PortID); pid != "" {
		l.PortID = &PortID{ID{Subtype: 5, Raw: []byte(pid)}}
	}
	str := func(j *jstr) *string {
		if j == nil {
			return nil
		}
		s := string(*j)
		return &s
	}
	num := func(j *jnum) *int {
		if j == nil {
			return nil
		}
		n := int(*j)
		return &n
	}
	l.PortDescription, l.SystemName, l.SystemDescription = str(p.PortDesc), str(p.SystemName), str(p.SystemDesc)
	l.PVID, l.MaxFrameSize = num(p.PVID), num(p.MTU)
	for _, v := range p.VLANs {
		l.VLANs = append(l.VLANs, VLAN{ID: int(v.ID), Name: string(v.Name)})
	}
	for _, m := range p.MgmtAddresses {
		if ip := net.ParseIP(string(m)); ip != nil {
			if v4 := ip.To4(); v4 != nil {
				l.ManagementAddresses = append(l.ManagementAddresses, ManagementAddress{Family: 1, Address: v4})
			} else {
				l.ManagementAddresses = append(l.ManagementAddresses, ManagementAddress{Family: 2, Address: ip.To16()})
			}
		}
	}
	if p.LAGID != nil {
		var st byte
		if p.LAGSupport.v {
			st |= 1
		}
		if p.LAGEnabled.v {
			st |= 2
		}
		l.LinkAggregation = &LinkAggregation{Status: st, PortID: uint32(*p.LAGID)}
	}
	if l.ChassisID == nil && l.PortID == nil && l.SystemName == nil && l.PortDescription == nil {
		return // collected, nothing heard
	}
	it.LLDP = &l
}

// parsePCI reads plugin_data.pci_devices.
func parsePCI(raw json.RawMessage) ([]PCIDevice, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var list []struct {
		VendorID  jstr `json:"vendor_id"`
		ProductID jstr `json:"product_id"`
		Class     jstr `json:"class"`
		Bus       jstr `json:"bus"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, false
	}
	out := make([]PCIDevice, 0, len(list))
	for _, d := range list {
		out = append(out, PCIDevice{VendorID: normPCIID(string(d.VendorID)), ProductID: normPCIID(string(d.ProductID)),
			Class: strings.ToLower(string(d.Class)), Bus: string(d.Bus)})
	}
	return out, true
}

// normPCIID lower-cases a PCI id and drops a 0x prefix.
func normPCIID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.TrimPrefix(s, "0x")
}

// extraHW is the extra-hardware data as category → item → key → value.
type extraHW map[string]map[string]map[string]any

// parseExtra reads the nested extra object, or builds it from the raw list of
// [category, item, key, value] quadruples.
func parseExtra(extra, data json.RawMessage) extraHW {
	out := extraHW{}
	if isObject(extra) {
		var m map[string]map[string]map[string]any
		if json.Unmarshal(extra, &m) == nil {
			return m
		}
		// A category or item that is not an object: read what is.
		var loose map[string]map[string]json.RawMessage
		if json.Unmarshal(extra, &loose) == nil {
			for c, items := range loose {
				for it, kv := range items {
					var vals map[string]any
					if json.Unmarshal(kv, &vals) == nil {
						out.set(c, it, vals)
					}
				}
			}
		}
		return out
	}
	var quads [][]any
	if json.Unmarshal(data, &quads) != nil {
		return out
	}
	for _, q := range quads {
		if len(q) != 4 {
			continue
		}
		c, ok1 := q[0].(string)
		it, ok2 := q[1].(string)
		k, ok3 := q[2].(string)
		if ok1 && ok2 && ok3 {
			out.set(c, it, map[string]any{k: q[3]})
		}
	}
	return out
}

func (e extraHW) set(cat, item string, kv map[string]any) {
	if e[cat] == nil {
		e[cat] = map[string]map[string]any{}
	}
	if e[cat][item] == nil {
		e[cat][item] = map[string]any{}
	}
	for k, v := range kv {
		e[cat][item][k] = v
	}
}

// bankNumber reads a memory item named bank<n> or bank:<n>.
func bankNumber(item string) (string, bool) {
	rest, ok := strings.CutPrefix(item, "bank")
	if !ok {
		return "", false
	}
	rest = strings.TrimPrefix(rest, ":")
	return rest, allDigits(rest)
}

// isPhysicalCPU reports whether a cpu item is named physical_<n>.
func isPhysicalCPU(item string) bool {
	rest, ok := strings.CutPrefix(item, "physical_")
	return ok && allDigits(rest)
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// apply fills what the inventory lacks from the extra-hardware data.
func (e extraHW) apply(inv *Inventory) {
	type bank struct {
		n int
		d DIMM
	}
	banks := make([]bank, 0, len(e["memory"]))
	for item, kv := range e["memory"] {
		num, ok := bankNumber(item)
		if !ok {
			continue
		}
		size := anyNum(kv["size"])
		if size <= 0 {
			continue // an empty slot
		}
		n, _ := strconv.Atoi(num)
		banks = append(banks, bank{n, DIMM{Bank: item, Slot: anyStr(kv["slot"]), SizeMB: int(size / (1 << 20)),
			Product: anyStr(kv["product"]), Vendor: anyStr(kv["vendor"]), Serial: anyStr(kv["serial"])}})
	}
	sort.Slice(banks, func(i, j int) bool { return banks[i].n < banks[j].n })
	inv.Memory.DIMMs = slices.Grow(inv.Memory.DIMMs, len(banks))
	for _, b := range banks {
		inv.Memory.DIMMs = append(inv.Memory.DIMMs, b.d)
	}
	if inv.CPU.Sockets == 0 {
		inv.CPU.Sockets = int(anyNum(e["cpu"]["physical"]["number"]))
	}
	cores := 0
	for item, kv := range e["cpu"] {
		if isPhysicalCPU(item) {
			cores += int(anyNum(kv["cores"]))
		}
	}
	inv.CPU.Cores = cores
	if inv.BIOSVersion == "" {
		inv.BIOSVersion = strings.TrimSpace(anyStr(e["firmware"]["bios"]["version"]))
	}
}

func anyNum(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err == nil && f == f {
			return f
		}
	}
	return 0
}

func anyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
