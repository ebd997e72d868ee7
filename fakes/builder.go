package fakes

import (
	"fmt"
	"sort"

	"github.com/hostforge/hostforge/intent"
)

// Roles the builder creates, by device class. A role's custom field
// device_class carries the class; RoleUnclassified has none.
const (
	RoleGPUCompute   = "gpu-compute"
	RoleCPUBaremetal = "cpu-baremetal"
	RoleHypervisor   = "hypervisor"
	RoleSwitch       = "switch"
	RoleUnclassified = "unclassified"
)

// HostSpec describes a host to add. Zero fields take the defaults noted.
type HostSpec struct {
	Name string
	// Status defaults to staged.
	Status intent.Status
	// Class is the device class (intent.ClassGPUCompute, ...); default
	// CPU_BAREMETAL. NoClass gives the device a role without device_class.
	Class   string
	NoClass bool
	// Manufacturer and Model default to Dell / PowerEdge R7615.
	Manufacturer, Model string
	// GPUType is the device type's custom field gpu_type.
	GPUType string
	// ZTP, when HasZTP, is the config context's ztp block (any JSON value).
	HasZTP bool
	ZTP    any
	// PlatformClass pre-populates custom_fields.platform_class.
	PlatformClass string
	// NICs is the number of frontend NICs (default 2), of type NICType
	// (default 25gbase-x-sfp28), cabled round-robin to the site's leaf switches.
	NICs    int
	NICType string
	// NoBond leaves ironic_settings without a bond.
	NoBond bool
	// NoOOB leaves the device without an out-of-band address.
	NoOOB bool
	// ConfigContext entries are merged over the generated ones (a nil value
	// deletes a key).
	ConfigContext map[string]any
	// Vendor is the BMC vendor: "dell", "lenovo", "ami" or "supermicro"
	// (default from the manufacturer).
	Vendor string
	// Switches, when set, are the leaf switches this host's NICs are cabled
	// to round-robin (default: every switch of the site).
	Switches []string
}

// Host is a host's physical truth: what is really there, which NetBox may or
// may not record correctly.
type Host struct {
	Name   string
	Spec   HostSpec
	OOBIP  string
	BMCMAC string
	NICs   []PhysNIC
	// Hardware is what inspection finds.
	Hardware Hardware
}

// PhysNIC is a NIC as wired.
type PhysNIC struct {
	Name, MAC string
	// Switch and Port are where the cable really goes.
	Switch, Port string
	// Link is "up", "down" or "unknown" as the BMC reports it.
	Link string
}

// SwitchNames returns the leaf switches hosts are cabled to.
func (s *Site) SwitchNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.switches...)
}

// Host returns a host's physical truth.
func (s *Site) Host(name string) (*Host, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.hosts[name]
	return h, ok
}

// HostNames lists hosts in the order they were added.
func (s *Site) HostNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.hostOrder...)
}

// AddSwitch adds a leaf switch with 64 interfaces (swp1..swp64).
func (s *Site) AddSwitch(name string) {
	_ = s.NetBox.Update(func(st *NetBoxState) error {
		role := ensureRole(st, RoleSwitch, intent.ClassSwitch)
		dt := ensureDeviceType(st, "Nvidia", "SN5600", "")
		d := &NBDevice{ID: st.id(), Name: name, Status: string(intent.StatusActive), RoleID: role.ID, DeviceTypeID: dt.ID, SiteID: s.siteID(st)}
		st.AddDevice(d)
		for p := 1; p <= 64; p++ {
			i := &NBInterface{ID: st.id(), DeviceID: d.ID, Name: fmt.Sprintf("swp%d", p), Type: "100gbase-x-qsfp28", Enabled: true}
			st.AddInterface(i)
		}
		return nil
	})
	s.mu.Lock()
	s.switches = append(s.switches, name)
	s.mu.Unlock()
}

func (s *Site) siteID(st *NetBoxState) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.siteIDv == 0 {
		site := &NBSite{ID: st.id(), Name: "Lab 1", Slug: "lab1"}
		st.Sites[site.ID] = site
		s.siteIDv = site.ID
	}
	return s.siteIDv
}

func ensureRole(st *NetBoxState, slug, class string) *NBRole {
	for _, r := range st.Roles {
		if r.Slug == slug {
			return r
		}
	}
	r := &NBRole{ID: st.id(), Name: slug, Slug: slug, CustomFields: map[string]any{}}
	if class != "" {
		r.CustomFields["device_class"] = class
	} else {
		r.CustomFields["device_class"] = nil
	}
	st.Roles[r.ID] = r
	return r
}

func ensureDeviceType(st *NetBoxState, mfr, model, gpu string) *NBDeviceType {
	var m *NBManufacturer
	for _, x := range st.Manufacturers {
		if x.Name == mfr {
			m = x
		}
	}
	if m == nil {
		m = &NBManufacturer{ID: st.id(), Name: mfr, Slug: slugify(mfr)}
		st.Manufacturers[m.ID] = m
	}
	for _, dt := range st.DeviceTypes {
		if dt.ManufacturerID == m.ID && dt.Model == model && cfString(dt.CustomFields, "gpu_type") == gpu {
			return dt
		}
	}
	dt := &NBDeviceType{ID: st.id(), ManufacturerID: m.ID, Model: model, Slug: slugify(mfr + "-" + model), CustomFields: map[string]any{"gpu_type": nil}}
	if gpu != "" {
		dt.CustomFields["gpu_type"] = gpu
	}
	st.DeviceTypes[dt.ID] = dt
	return dt
}

func slugify(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b = append(b, c)
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			if len(b) > 0 && b[len(b)-1] != '-' {
				b = append(b, '-')
			}
		}
	}
	return string(b)
}

// AddHost adds a host to NetBox and records its physical truth. Frontend NICs
// are cabled round-robin to the leaf switches (add switches first; with none,
// two leaves leaf-1 and leaf-2 are added). It returns the host.
func (s *Site) AddHost(spec HostSpec) *Host {
	if len(s.SwitchNames()) == 0 {
		s.AddSwitch("leaf-1")
		s.AddSwitch("leaf-2")
	}
	if spec.Status == "" {
		spec.Status = intent.StatusStaged
	}
	if spec.Class == "" && !spec.NoClass {
		spec.Class = intent.ClassCPUBaremetal
	}
	if spec.Manufacturer == "" {
		spec.Manufacturer = "Dell"
	}
	if spec.Model == "" {
		spec.Model = "PowerEdge R7615"
	}
	if spec.NICs == 0 {
		spec.NICs = 2
	}
	if spec.NICType == "" {
		spec.NICType = "25gbase-x-sfp28"
	}
	switches := s.SwitchNames()
	if len(spec.Switches) > 0 {
		switches = spec.Switches
	}
	s.mu.Lock()
	s.hostSeq++
	n := s.hostSeq
	if s.hosts == nil {
		s.hosts = map[string]*Host{}
		s.nextPort = map[string]int{}
	}
	s.mu.Unlock()

	h := &Host{Name: spec.Name, Spec: spec, BMCMAC: mac(0x0a, n, 0), Hardware: DefaultHardware(spec.Manufacturer, spec.Model)}
	if !spec.NoOOB {
		h.OOBIP = fmt.Sprintf("10.10.%d.%d", n/250, n%250+2)
	}
	_ = s.NetBox.Update(func(st *NetBoxState) error {
		roleSlug, class := roleFor(spec)
		role := ensureRole(st, roleSlug, class)
		dt := ensureDeviceType(st, spec.Manufacturer, spec.Model, spec.GPUType)
		d := &NBDevice{
			ID: st.id(), Name: spec.Name, Status: string(spec.Status), RoleID: role.ID, DeviceTypeID: dt.ID,
			SiteID: s.siteID(st), Serial: fmt.Sprintf("SN%06d", n),
			CustomFields: map[string]any{"platform_class": nil},
		}
		if spec.PlatformClass != "" {
			d.CustomFields["platform_class"] = spec.PlatformClass
		}
		if h.OOBIP != "" {
			d.OOBIP = h.OOBIP + "/16"
		}
		st.AddDevice(d)
		bmc := &NBInterface{ID: st.id(), DeviceID: d.ID, Name: "bmc", Type: "1000base-t", MAC: h.BMCMAC, MgmtOnly: true, Enabled: true}
		st.AddInterface(bmc)
		var bond *NBInterface
		if !spec.NoBond {
			bond = &NBInterface{ID: st.id(), DeviceID: d.ID, Name: "bond0", Type: "lag", Enabled: true}
			st.AddInterface(bond)
		}
		for k := 0; k < spec.NICs; k++ {
			nic := PhysNIC{Name: fmt.Sprintf("eth%d", k), MAC: mac(0x0c, n, k), Switch: switches[k%len(switches)], Link: "up"}
			i := &NBInterface{ID: st.id(), DeviceID: d.ID, Name: nic.Name, Type: spec.NICType, MAC: nic.MAC, Enabled: true}
			if bond != nil {
				i.LAGID = bond.ID
			}
			st.AddInterface(i)
			sw := st.DeviceByName(nic.Switch)
			s.mu.Lock()
			s.nextPort[nic.Switch]++
			port := s.nextPort[nic.Switch]
			s.mu.Unlock()
			nic.Port = fmt.Sprintf("swp%d", port)
			for _, si := range st.DeviceInterfaces(sw.ID) {
				if si.Name == nic.Port {
					c := &NBCable{ID: st.id(), Status: "connected",
						A: []NBTermination{{ObjectType: intent.PeerKindInterface, ObjectID: i.ID}},
						B: []NBTermination{{ObjectType: intent.PeerKindInterface, ObjectID: si.ID}}}
					st.Cables[c.ID] = c
					i.CableID, si.CableID = c.ID, c.ID
				}
			}
			h.NICs = append(h.NICs, nic)
		}
		d.ConfigContext = hostConfigContext(spec, h.Hardware)
		return nil
	})
	s.mu.Lock()
	s.hosts[spec.Name] = h
	s.hostOrder = append(s.hostOrder, spec.Name)
	s.mu.Unlock()
	s.BMCs.addHost(h)
	return h
}

func roleFor(spec HostSpec) (slug, class string) {
	switch {
	case spec.NoClass:
		return RoleUnclassified, ""
	case spec.Class == intent.ClassGPUCompute:
		return RoleGPUCompute, spec.Class
	case spec.Class == intent.ClassHypervisor:
		return RoleHypervisor, spec.Class
	case spec.Class == intent.ClassSwitch:
		return RoleSwitch, spec.Class
	case spec.Class == intent.ClassCPUBaremetal:
		return RoleCPUBaremetal, spec.Class
	}
	return slugify(spec.Class), spec.Class
}

// hostConfigContext renders the config context a well-configured site gives a host.
func hostConfigContext(spec HostSpec, hw Hardware) map[string]any {
	ironic := map[string]any{
		"driver":         "redfish",
		"interface_type": spec.NICType,
		"interfaces": map[string]any{
			"boot": "redfish-virtual-media", "deploy": "direct", "inspect": "inspector",
			"management": "redfish", "power": "redfish", "raid": "agent", "network": "noop",
		},
		"resource_class": "baremetal",
		"cpu_arch":       "x86_64",
		"capabilities":   map[string]any{"boot_mode": "uefi"},
	}
	if !spec.NoBond {
		ironic["bond"] = map[string]any{"mode": "802.3ad", "miimon": 100, "xmit_hash_policy": "layer3+4"}
	}
	cc := map[string]any{
		"ironic_settings": ironic,
		"ntp-servers":     []any{"10.0.0.11", "10.0.0.12"},
		"syslog-servers":  []any{"10.0.0.21"},
		// inspection_validation agrees with the host's Hardware (schema: verify/doc.go).
		"inspection_validation": inspectionValidation(spec, hw),
	}
	if spec.HasZTP {
		cc["ztp"] = spec.ZTP
	}
	keys := make([]string, 0, len(spec.ConfigContext))
	for k := range spec.ConfigContext {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := spec.ConfigContext[k]; v == nil {
			delete(cc, k)
		} else {
			cc[k] = v
		}
	}
	return cloneJSON(cc)
}

func mac(kind byte, host, nic int) string {
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", kind, (host>>8)&0xff, host&0xff, nic&0xff, 0x01)
}
