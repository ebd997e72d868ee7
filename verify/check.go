package verify

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Check names, in the order Check runs them (the spec's order).
const (
	CheckCarrier = "carrier"
	CheckCPU     = "cpu"
	CheckNICs    = "nics"
	CheckDisks   = "disks"
	CheckMemory  = "memory"
	CheckBIOS    = "bios"
	CheckGPU     = "gpu"
	CheckLLDP    = "lldp"
)

// Mismatch is one check that failed for one subject.
type Mismatch struct {
	// Check is one of the Check* names.
	Check string `json:"check"`
	// Subject is what failed: an interface, a disk, "cpu.count", a GPU id.
	Subject string `json:"subject"`
	// Expected is what NetBox says; Observed is what the host reported.
	Expected string `json:"expected"`
	Observed string `json:"observed"`
	// Action is the operator's next step, naming the place to go.
	Action string `json:"action"`
}

// Report lists every mismatch, in check order.
type Report struct {
	Device     string     `json:"device"`
	Mismatches []Mismatch `json:"mismatches,omitempty"`
}

// OK reports whether every check passed.
func (r Report) OK() bool { return len(r.Mismatches) == 0 }

// Err returns nil when OK, else a *hostforge.Failure listing every mismatch:
// INSPECTION_CABLING_MISMATCH when the first mismatch is a carrier or LLDP
// one, INSPECTION_HARDWARE_MISMATCH otherwise.
func (r Report) Err() error {
	if r.OK() {
		return nil
	}
	spec := HardwareMismatch
	if c := r.Mismatches[0].Check; c == CheckCarrier || c == CheckLLDP {
		spec = CablingMismatch
	}
	var b strings.Builder
	for i, m := range r.Mismatches {
		fmt.Fprintf(&b, "; %d) [%s %s] NetBox: %s; host: %s; action: %s", i+1, m.Check, m.Subject, m.Expected, m.Observed, m.Action)
	}
	return spec.New("device %s: %d inspection mismatch(es)%s", r.Device, len(r.Mismatches), b.String())
}

// Check runs every check in the spec's order and reports every mismatch.
func Check(inv Inventory, exp Expectations) Report {
	if inv.byMAC == nil {
		inv.index()
	}
	c := checker{inv: &inv, exp: &exp, rep: Report{Device: exp.Device}}
	c.front = make([]*Interface, len(exp.Cables))
	c.noCarrier = make([]bool, len(exp.Cables))
	for i, cb := range exp.Cables {
		if cb.MAC != "" {
			c.front[i], _ = inv.InterfaceByMAC(cb.MAC)
		} else {
			c.front[i], _ = inv.InterfaceByName(cb.Interface)
		}
	}
	c.host = "host " + exp.Device
	if s := strings.TrimSpace(inv.SystemVendor.SerialNumber); s != "" && !strings.EqualFold(s, "Not Specified") {
		c.host += " (serial " + s + ")"
	}
	c.carrier()
	c.cpu()
	c.nics()
	c.disks()
	c.memory()
	c.bios()
	c.gpus()
	c.lldp()
	return c.rep
}

type checker struct {
	inv       *Inventory
	exp       *Expectations
	rep       Report
	front     []*Interface // the inventory interface of each cable, nil when absent
	noCarrier []bool       // cables the carrier check reported
	host      string       // "host NAME (serial S)" for hardware actions
}

func (c *checker) add(check, subject, expected, observed, action string) {
	c.rep.Mismatches = append(c.rep.Mismatches, Mismatch{Check: check, Subject: subject, Expected: expected, Observed: observed, Action: action})
}

// ifLabel names a frontend interface by its NetBox name, with the kernel's
// name and MAC when they add something.
func ifLabel(cb Cable, it *Interface) string {
	name := cb.Interface
	if name == "" && it != nil {
		name = it.Name
	}
	var extra []string
	if it != nil && it.Name != "" && it.Name != name {
		extra = append(extra, it.Name)
	}
	if mac := cb.MAC; mac != "" {
		extra = append(extra, normMAC(mac))
	} else if it != nil && it.MAC != "" {
		extra = append(extra, it.MAC)
	}
	if len(extra) > 0 {
		return name + " (" + strings.Join(extra, ", ") + ")"
	}
	return name
}

func (c *checker) carrier() {
	for i, cb := range c.exp.Cables {
		it := c.front[i]
		if it == nil || it.HasCarrier == nil || *it.HasCarrier {
			continue
		}
		c.noCarrier[i] = true
		label := ifLabel(cb, it)
		var action string
		if cb.Cabled() {
			action = fmt.Sprintf("switch %s port %s: host %s %s has no link: check the cable, the optics at both ends and that the switch port is enabled, then rerun",
				cb.Switch, cb.Port, c.exp.Device, label)
		} else {
			action = fmt.Sprintf("%s interface %s has no link and NetBox records no cable for it: cable it to its switch port and record the cable in NetBox, then rerun", c.host, label)
		}
		c.add(CheckCarrier, cb.Interface, "link up on frontend interface "+cb.Interface, label+" reports has_carrier false", action)
	}
}

func orNone(n int) string {
	if n == 0 {
		return "not reported"
	}
	return strconv.Itoa(n)
}

func (c *checker) cpu() {
	e := c.exp.CPU
	if e == nil {
		return
	}
	got := c.inv.CPU
	fix := "check that every CPU is seated and enabled in the BIOS (and SMT set as intended), or fix inspection_validation.cpu in NetBox, then rerun"
	if e.Architecture != "" && !strings.EqualFold(e.Architecture, got.Architecture) {
		obs := got.Architecture
		if obs == "" {
			obs = "not reported"
		}
		c.add(CheckCPU, "cpu.architecture", e.Architecture, obs, fmt.Sprintf("%s: the CPU architecture differs from NetBox: the device type or its inspection_validation.cpu.architecture is wrong; fix NetBox, then rerun", c.host))
	}
	for _, f := range []struct {
		key, what, collector string
		want                 *int
		got                  int
	}{
		{"count", "logical CPUs", "", e.Count, got.Count},
		{"cores", "physical cores", "extra-hardware", e.Cores, got.Cores},
		{"sockets", "CPU sockets", "extra-hardware", e.Sockets, got.Sockets},
	} {
		if f.want == nil || *f.want == f.got {
			continue
		}
		action := fmt.Sprintf("%s reports %s %s: %s", c.host, orNone(f.got), f.what, fix)
		if f.got == 0 {
			action = fmt.Sprintf("%s: inspection did not report the %s: enable IPA's %s collector for this site, or remove cpu.%s from inspection_validation, then rerun with force_inspection=true", c.host, f.what, orDefault(f.collector, "default"), f.key)
		}
		c.add(CheckCPU, "cpu."+f.key, fmt.Sprintf("%d %s", *f.want, f.what), orNone(f.got)+" "+f.what, action)
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (c *checker) nics() {
	e := c.exp.NICs
	if e == nil {
		return
	}
	if e.Count != nil && *e.Count != len(c.inv.Interfaces) {
		names := make([]string, 0, len(c.inv.Interfaces))
		for _, it := range c.inv.Interfaces {
			names = append(names, it.Name)
		}
		c.add(CheckNICs, "nics.count", fmt.Sprintf("%d network interfaces", *e.Count),
			fmt.Sprintf("%d: %s", len(names), strings.Join(names, ", ")),
			fmt.Sprintf("%s: the number of NICs differs from NetBox: check that every network card is seated and enabled in the BIOS, or fix inspection_validation.nics.count, then rerun", c.host))
	}
	if len(e.Vendors) > 0 {
		for _, it := range c.inv.Interfaces {
			if contains(e.Vendors, it.Vendor) {
				continue
			}
			c.add(CheckNICs, it.Name, "NIC vendor one of "+strings.Join(e.Vendors, ", "),
				fmt.Sprintf("%s (%s) vendor %s product %s", it.Name, it.MAC, orDefault(it.Vendor, "not reported"), orDefault(it.Product, "?")),
				fmt.Sprintf("%s interface %s (%s, PCI %s): a NIC of an unexpected vendor is fitted: replace it with the model NetBox expects, or add its vendor to inspection_validation.nics.vendors, then rerun", c.host, it.Name, it.MAC, orDefault(it.PCIAddress, "slot unknown")))
		}
	}
	if e.MinSpeedMbps != nil {
		for i, cb := range c.exp.Cables {
			it := c.front[i]
			if it == nil || c.noCarrier[i] || it.SpeedMbps <= 0 || it.SpeedMbps >= *e.MinSpeedMbps {
				continue
			}
			place := c.host + " interface " + ifLabel(cb, it)
			if cb.Cabled() {
				place = fmt.Sprintf("switch %s port %s (host %s %s)", cb.Switch, cb.Port, c.exp.Device, ifLabel(cb, it))
			}
			c.add(CheckNICs, cb.Interface, fmt.Sprintf("link at ≥ %d Mb/s", *e.MinSpeedMbps), fmt.Sprintf("%s at %d Mb/s", ifLabel(cb, it), it.SpeedMbps),
				fmt.Sprintf("%s: the link negotiated below the expected speed: check the optic or DAC type and the switch port's speed setting, then rerun", place))
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func diskLabel(d Disk) string {
	var parts []string
	if d.Serial != "" {
		parts = append(parts, "serial "+d.Serial)
	}
	if d.HCTL != "" {
		parts = append(parts, "hctl "+d.HCTL)
	}
	if len(parts) == 0 {
		return d.Name
	}
	return d.Name + " (" + strings.Join(parts, ", ") + ")"
}

func (c *checker) disks() {
	e := c.exp.Disks
	if e == nil {
		return
	}
	if e.Count != nil && *e.Count != len(c.inv.Disks) {
		names := make([]string, 0, len(c.inv.Disks))
		for _, d := range c.inv.Disks {
			names = append(names, d.Name+" "+orDefault(d.Model, "?"))
		}
		c.add(CheckDisks, "disks.count", fmt.Sprintf("%d disks", *e.Count), fmt.Sprintf("%d: %s", len(names), strings.Join(names, ", ")),
			fmt.Sprintf("%s: the number of disks differs from NetBox: check every drive bay and the RAID controller's virtual disks, or fix inspection_validation.disks.count, then rerun", c.host))
	}
	for _, d := range c.inv.Disks {
		if len(e.Models) > 0 && !contains(e.Models, d.Model) {
			c.add(CheckDisks, d.Name, "disk model one of "+strings.Join(e.Models, ", "), fmt.Sprintf("%s model %q", diskLabel(d), d.Model),
				fmt.Sprintf("%s disk %s: model %q is not one NetBox allows: replace the drive (or rebuild the controller's virtual disk) with an allowed model, or add the model to inspection_validation.disks.models, then rerun",
					c.host, diskLabel(d), d.Model))
		}
		if e.MinSizeGB != nil && d.SizeBytes < int64(*e.MinSizeGB)*1e9 {
			c.add(CheckDisks, d.Name, fmt.Sprintf("disk ≥ %d GB", *e.MinSizeGB), fmt.Sprintf("%s of %d GB", diskLabel(d), d.SizeBytes/1e9),
				fmt.Sprintf("%s disk %s is smaller than NetBox expects: replace the drive or fix the RAID controller's virtual disk, then rerun", c.host, diskLabel(d)))
		}
	}
}

func (c *checker) memory() {
	e := c.exp.Memory
	if e == nil {
		return
	}
	mem := c.inv.Memory
	var want, bad []string
	if e.PhysicalMB != nil {
		want = append(want, fmt.Sprintf("%d MB", *e.PhysicalMB))
		if *e.PhysicalMB != mem.PhysicalMB {
			bad = append(bad, "size")
		}
	}
	if e.DIMMCount != nil {
		want = append(want, fmt.Sprintf("%d DIMMs", *e.DIMMCount))
		if len(mem.DIMMs) != *e.DIMMCount {
			bad = append(bad, "DIMM count")
		}
	}
	var odd []string
	if e.DIMMSizeMB != nil {
		want = append(want, fmt.Sprintf("every DIMM %d MB", *e.DIMMSizeMB))
		for _, d := range mem.DIMMs {
			if d.SizeMB != *e.DIMMSizeMB {
				odd = append(odd, d.Place())
			}
		}
		if len(odd) > 0 || mem.DIMMs == nil {
			bad = append(bad, "DIMM sizes")
		}
	}
	sum := 0
	for _, d := range mem.DIMMs {
		sum += d.SizeMB
	}
	if len(mem.DIMMs) > 0 && mem.PhysicalMB > 0 && sum != mem.PhysicalMB {
		want = append(want, "DIMMs adding up to physical memory")
		bad = append(bad, "DIMM consistency")
	}
	if len(bad) == 0 {
		return
	}
	obs := fmt.Sprintf("%s MB", orNone(mem.PhysicalMB))
	var slots []string
	if mem.DIMMs == nil {
		obs += ", DIMMs not reported"
	} else {
		for _, d := range mem.DIMMs {
			slots = append(slots, fmt.Sprintf("%s %d MB", d.Place(), d.SizeMB))
		}
		obs += fmt.Sprintf(" in %d DIMMs adding up to %d MB: %s", len(mem.DIMMs), sum, strings.Join(slots, ", "))
	}
	action := fmt.Sprintf("%s: memory differs from NetBox (%s): a slot missing from the populated slots the host reports is empty or its DIMM failed training — reseat or replace it and check the BMC's event log", c.host, strings.Join(bad, ", "))
	if mem.DIMMs == nil {
		action = fmt.Sprintf("%s: memory differs from NetBox (%s): a DIMM is missing or failed training — find its slot in the BMC's memory inventory and event log, reseat or replace it", c.host, strings.Join(bad, ", "))
	}
	if len(odd) > 0 {
		action += fmt.Sprintf("; slots with a DIMM of the wrong size: %s", strings.Join(odd, ", "))
	}
	if mem.DIMMs == nil && (e.DIMMCount != nil || e.DIMMSizeMB != nil) {
		action = fmt.Sprintf("%s: inspection did not report DIMMs: enable IPA's extra-hardware collector for this site, or remove the DIMM keys from inspection_validation.memory, then rerun with force_inspection=true", c.host)
		if e.PhysicalMB != nil && *e.PhysicalMB != mem.PhysicalMB {
			action += "; the memory size differs too: check the DIMMs on site"
		}
	} else {
		action += ", or fix inspection_validation.memory in NetBox; then rerun"
	}
	c.add(CheckMemory, "memory", strings.Join(want, ", "), obs, action)
}

// versionMatch matches a BIOS version against a pattern; a trailing * is a prefix match.
func versionMatch(pattern, v string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(strings.ToLower(v), strings.ToLower(p))
	}
	return strings.EqualFold(pattern, v)
}

func (c *checker) bios() {
	e := c.exp.BIOS
	if e == nil {
		return
	}
	v := c.inv.BIOSVersion
	if v == "" {
		if len(e.Allow) > 0 {
			c.add(CheckBIOS, "bios", "BIOS one of "+strings.Join(e.Allow, ", "), "not reported",
				fmt.Sprintf("%s: inspection did not report the BIOS version: use an IPA that reports system_vendor.firmware or enable the extra-hardware collector, then rerun with force_inspection=true", c.host))
		}
		return
	}
	for _, b := range e.Block {
		if versionMatch(b, v) {
			exp := "BIOS not " + strings.Join(e.Block, ", ")
			if len(e.Allow) > 0 {
				exp += "; one of " + strings.Join(e.Allow, ", ")
			}
			c.add(CheckBIOS, "bios", exp, "BIOS "+v+" (blocked by "+b+")",
				fmt.Sprintf("%s: BIOS %s is on NetBox's block list: update the BIOS through the BMC to an allowed version%s, then rerun", c.host, v, allowHint(e.Allow)))
			return
		}
	}
	if len(e.Allow) == 0 {
		return
	}
	for _, a := range e.Allow {
		if versionMatch(a, v) {
			return
		}
	}
	c.add(CheckBIOS, "bios", "BIOS one of "+strings.Join(e.Allow, ", "), "BIOS "+v,
		fmt.Sprintf("%s: BIOS %s is not on NetBox's allow list: update the BIOS through the BMC to an allowed version%s, or add it to inspection_validation.bios.allow, then rerun", c.host, v, allowHint(e.Allow)))
}

func allowHint(allow []string) string {
	if len(allow) == 0 {
		return ""
	}
	return " (" + strings.Join(allow, ", ") + ")"
}

func (c *checker) gpus() {
	if !c.exp.CheckGPUs {
		return
	}
	if !c.inv.PCIReported {
		c.add(CheckGPU, "pci_devices", describeGPUs(c.exp.GPUs), "no pci_devices in the inspection data",
			fmt.Sprintf("%s: GPUs can only be counted from plugin_data.pci_devices: enable IPA's pci-devices collector (ipa-inspection-collectors) for this site, then rerun with force_inspection=true", c.host))
		return
	}
	type seen struct {
		n     int
		buses []string
	}
	got := map[string]*seen{}
	for _, d := range c.inv.PCIDevices {
		k := d.VendorID + ":" + d.ProductID
		if got[k] == nil {
			got[k] = &seen{}
		}
		got[k].n++
		if d.Bus != "" {
			got[k].buses = append(got[k].buses, d.Bus)
		}
	}
	expected := map[string]bool{}
	for _, g := range c.exp.GPUs {
		k := g.VendorID + ":" + g.DeviceID
		expected[k] = true
		s := got[k]
		if s == nil {
			s = &seen{}
		}
		if s.n == g.Count {
			continue
		}
		name := gpuName(g.VendorID, g.DeviceID, g.Name)
		obs := fmt.Sprintf("%d %s", s.n, name)
		if len(s.buses) > 0 {
			obs += " at " + strings.Join(s.buses, ", ")
		}
		c.add(CheckGPU, k, fmt.Sprintf("%d %s", g.Count, name), obs,
			fmt.Sprintf("%s: NetBox expects %d %s GPU(s) (%s), the host reports %d: reseat or replace the missing GPU (check its riser, power cables and the BMC's PCIe inventory), or fix inspection_validation.gpus, then rerun",
				c.host, g.Count, name, k, s.n))
	}
	var extra []string
	for k := range got {
		v, d, _ := strings.Cut(k, ":")
		if !expected[k] && acceleratorName(v, d) != "" {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		v, d, _ := strings.Cut(k, ":")
		name := gpuName(v, d, "")
		c.add(CheckGPU, k, "no "+name, fmt.Sprintf("%d %s at %s", got[k].n, name, strings.Join(got[k].buses, ", ")),
			fmt.Sprintf("%s: a GPU NetBox does not expect is fitted (%s, %s): remove it or fix the device type / inspection_validation.gpus in NetBox, then rerun", c.host, name, k))
	}
}

func gpuName(vendor, device, name string) string {
	if name != "" {
		return name
	}
	if n := acceleratorName(vendor, device); n != "" {
		return n
	}
	return vendor + ":" + device
}

func describeGPUs(gs []GPUExpect) string {
	if len(gs) == 0 {
		return "no GPUs"
	}
	var parts []string
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%d %s", g.Count, gpuName(g.VendorID, g.DeviceID, g.Name)))
	}
	return strings.Join(parts, ", ")
}

// SwitchNamesMatch reports whether NetBox's switch name and the LLDP system
// name name the same switch: equal ignoring case and a trailing dot, or one is
// the leading DNS labels of the other ("leaf-3" and "leaf-3.dc1.example.net").
func SwitchNamesMatch(netbox, lldp string) bool {
	a := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(netbox), "."))
	b := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(lldp), "."))
	if a == "" || b == "" {
		return false
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || strings.HasPrefix(b, a+".")
}

// PortNamesMatch reports whether NetBox's port name equals an LLDP port ID or
// port description, ignoring case and surrounding space.
func PortNamesMatch(netbox, lldp string) bool {
	a, b := strings.TrimSpace(netbox), strings.TrimSpace(lldp)
	return a != "" && strings.EqualFold(a, b)
}

// sawText renders what an interface's LLDP saw.
func sawText(l *LLDP) string {
	name := l.Name()
	if name == "" {
		name = "(no system name"
		if l.ChassisID != nil {
			name += ", chassis " + l.ChassisID.String()
		}
		name += ")"
	}
	s := "switch " + name + " port " + orDefault(l.Port(), "(no port ID)")
	if d := l.Description(); d != "" && d != l.Port() {
		s += " (port description " + strconv.Quote(d) + ")"
	}
	return s
}

func (c *checker) lldp() {
	if c.exp.SkipCableVerification {
		return
	}
	for i, cb := range c.exp.Cables {
		if c.noCarrier[i] {
			continue // the carrier mismatch is the root cause; no LLDP can be heard
		}
		it := c.front[i]
		if it != nil && cb.Cabled() && it.LLDP != nil && SwitchNamesMatch(cb.Switch, it.LLDP.Name()) &&
			(PortNamesMatch(cb.Port, it.LLDP.Port()) || PortNamesMatch(cb.Port, it.LLDP.Description())) {
			continue // the common case, without building any text
		}
		label := ifLabel(cb, it)
		want := "switch " + cb.Switch + " port " + cb.Port
		switch {
		case it == nil:
			if !cb.Cabled() {
				continue // nothing recorded, nothing reported: consistent
			}
			c.add(CheckLLDP, cb.Interface, want+" on "+label, "the host reports no such interface",
				fmt.Sprintf("switch %s port %s: NetBox expects host %s %s here, but the host reports no interface with that MAC: fix the MAC in NetBox, or check that the NIC is seated and enabled in the BIOS, then rerun",
					cb.Switch, cb.Port, c.exp.Device, label))
		case !cb.Cabled():
			if it.LLDP == nil {
				continue
			}
			c.add(CheckLLDP, cb.Interface, "no cable on "+label, "LLDP saw "+sawText(it.LLDP),
				fmt.Sprintf("%s interface %s: NetBox records no cable but LLDP saw %s: record that cable in NetBox (or unplug it if it does not belong), then rerun", c.host, label, sawText(it.LLDP)))
		case !it.LLDPCollected:
			c.add(CheckLLDP, cb.Interface, want+" on "+label, "LLDP not collected",
				fmt.Sprintf("switch %s port %s: host %s %s cannot be verified: the inspection ramdisk ran without LLDP collection (ipa-collect-lldp=1); enable it for this site or set skip_cable_verification for this host, then rerun with force_inspection=true",
					cb.Switch, cb.Port, c.exp.Device, label))
		case it.LLDP == nil:
			c.add(CheckLLDP, cb.Interface, want+" on "+label, "no LLDP neighbour heard",
				fmt.Sprintf("switch %s port %s: host %s %s has link but heard no LLDP: check that the cable really lands on this port and that LLDP is enabled on it, then rerun",
					cb.Switch, cb.Port, c.exp.Device, label))
		default:
			saw := sawText(it.LLDP)
			c.add(CheckLLDP, cb.Interface, want+" on "+label, "LLDP saw "+saw,
				fmt.Sprintf("switch %s port %s: NetBox expects host %s %s here, but LLDP on %s saw %s: move the cable to switch %s port %s, or fix the cable in NetBox if NetBox is stale, then rerun",
					cb.Switch, cb.Port, c.exp.Device, label, orDefault(it.Name, cb.Interface), saw, cb.Switch, cb.Port))
		}
	}
}

// Verifier is the Ironic phases' inventory verifier: it reads an inventory
// as Ironic returns it and the Expectations as JSON, and checks one against
// the other.
type Verifier struct{}

// VerifyInventory parses both and runs Check. A mismatch is the Failure
// Check reports; an inventory or expectations that cannot be read is a plain
// error, for the caller to classify.
func (Verifier) VerifyInventory(inventory []byte, expect json.RawMessage) error {
	var exp Expectations
	if len(expect) > 0 {
		if err := json.Unmarshal(expect, &exp); err != nil {
			return fmt.Errorf("expectations do not decode: %w", err)
		}
	}
	inv, err := ParseInventory(inventory)
	if err != nil {
		// Not a verification verdict: the caller decides what an unreadable
		// inventory means (Ironic reinspects), so the cause stays unwrapped.
		return fmt.Errorf("the inventory cannot be parsed: %s", err.Error())
	}
	return Check(inv, exp).Err()
}
