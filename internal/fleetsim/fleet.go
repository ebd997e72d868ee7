package fleetsim

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// hostsPerLeafPair is how many hosts share a pair of leaf switches.
const hostsPerLeafPair = 16

// SiteSlug is the simulated site's slug.
const SiteSlug = "sim1"

// Breakage is how a broken host is broken. Some breakages live in NetBox
// (the data cannot produce a platform class), the others in the physical
// truth behind an unchanged NetBox record, where only inspection finds them.
type Breakage string

// The breakages the simulator plants.
const (
	Healthy Breakage = ""
	// Miscabled swaps the first two frontend NICs' real switch ports; NetBox
	// still records the original cables, so LLDP disagrees.
	Miscabled Breakage = "miscabled"
	// DeadOptic takes the last frontend NIC's link down: no carrier, no LLDP.
	DeadOptic Breakage = "dead_optic"
	// WrongDIMMs pulls one DIMM: inspection finds less memory than NetBox's
	// inspection_validation expects.
	WrongDIMMs Breakage = "wrong_dimms"
	// BlockedBIOS runs a BIOS version on the inspection_validation block list.
	BlockedBIOS Breakage = "blocked_bios"
	// NoGPUType is a GPU compute host whose device type has no gpu_type.
	NoGPUType Breakage = "no_gpu_type"
	// BadZTP is a GPU host whose ztp block is present but has no infiniband section.
	BadZTP Breakage = "bad_ztp"
)

// Breakages lists every breakage, in a fixed order.
var Breakages = []Breakage{Miscabled, DeadOptic, WrongDIMMs, BlockedBIOS, NoGPUType, BadZTP}

// NetBoxBreakage reports whether the breakage is in NetBox's data (found
// before any host-touching phase) rather than in the physical truth (found
// only by Ironic inspection).
func (b Breakage) NetBoxBreakage() bool { return b == NoGPUType || b == BadZTP }

// AuditTag is a tag every simulated device carries before enrollment; it is
// not enrollment's and must survive it.
const AuditTag = "rack-audited"

// BlockedBIOSVersion is the BIOS version every simulated host's
// inspection_validation blocks.
const BlockedBIOSVersion = "0.9.1"

// Config describes a simulated fleet.
type Config struct {
	// Hosts is the number of hosts (default 1,000).
	Hosts int
	// Broken is the share of hosts, 0..1, that are broken; each broken host
	// gets one breakage, chosen by the seed.
	Broken float64
	// Breakages restricts the breakages drawn (default: all of Breakages).
	Breakages []Breakage
	// Seed makes the fleet (and everything drawn from it) repeatable.
	Seed uint64
	// Divergent is the share of healthy hosts whose NetBox platform_class is
	// already populated with a value that differs from the computed key.
	Divergent float64
	// FactoryReset is the share, 0..1, of hosts whose BMC answers on its
	// factory credential, so the BMC phase rotates its admin password: half
	// of them are new (no per-host credential in the vault yet), the other
	// half were factory-reset as a remediation (the vault still holds a
	// per-host password the BMC refuses). Supermicro BMCs, which have no
	// password setup, are never drawn.
	FactoryReset float64
	// ApplyOnReset is the share, 0..1, of those factory-reset BMCs that
	// apply a password change only on their next cold reset.
	ApplyOnReset float64
}

// Profile is one kind of host in the mix.
type Profile struct {
	Name string
	Spec fakes.HostSpec
}

var infiniband = map[string]any{"infiniband": map[string]any{"rails": 8}}

// Profiles is the fleet's mix of vendors, GPU/CPU hosts and bonds, drawn
// round-robin by the seed.
var Profiles = []Profile{
	{"lenovo-gb300-ib", fakes.HostSpec{Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: infiniband, Vendor: "lenovo", NICs: 4}},
	{"ami-h100", fakes.HostSpec{Class: intent.ClassGPUCompute, Manufacturer: "NVIDIA", Model: "DGX H100", GPUType: "H100", Vendor: "ami", NICs: 2}},
	{"dell-h200-ib", fakes.HostSpec{Class: intent.ClassGPUCompute, Manufacturer: "Dell", Model: "PowerEdge XE9680", GPUType: "H200", HasZTP: true, ZTP: infiniband, Vendor: "dell", NICs: 4}},
	{"dell-cpu", fakes.HostSpec{Class: intent.ClassCPUBaremetal, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell", NICs: 2}},
	{"smc-cpu-nobond", fakes.HostSpec{Class: intent.ClassCPUBaremetal, Manufacturer: "Supermicro", Model: "SYS-621C-TN12R", Vendor: "supermicro", NICs: 2, NoBond: true}},
	{"dell-hv-active", fakes.HostSpec{Class: intent.ClassHypervisor, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell", NICs: 2, Status: intent.StatusActive}},
}

// Fleet is a built fake site and what the simulator planted in it.
type Fleet struct {
	Config Config
	Site   *fakes.Site
	// Clock is the fleet's shared virtual time over Site.Clock.
	Clock *SimClock
	// Names lists the hosts in the order they were added.
	Names []string
	// Broken maps a broken host to its breakage.
	Broken map[string]Breakage
	// Profile maps each host to its profile name.
	Profile map[string]string
	// FactoryReset maps each host whose BMC starts on its factory
	// credential to "new" or "remediated" (see Config.FactoryReset).
	FactoryReset map[string]string
	// ApplyOnReset lists the hosts whose BMC applies a password change on
	// its next cold reset.
	ApplyOnReset map[string]bool
}

// SiteConfig is the simulated site's configuration with every phase on;
// Gate turns off the phases an executor cannot run yet.
func SiteConfig() enrollment.SiteConfig {
	return enrollment.SiteConfig{
		ConfigureDHCP: true,
		ConfigureBMC:  true,
		IronicEnrol:   true,
		IronicInstances: map[string]string{
			intent.ClassGPUCompute:   "ironic-gpu",
			intent.ClassCPUBaremetal: "ironic-cpu",
			intent.ClassHypervisor:   "ironic-cpu",
		},
		EnrolProject: "baremetal-enrol",
	}
}

// Gate turns off each phase whose implementation the executor lacks, so a
// simulation measures what is wired instead of failing NOT_IMPLEMENTED.
func Gate(cfg enrollment.SiteConfig, exec *enrollment.Executor) enrollment.SiteConfig {
	cfg.ConfigureDHCP = cfg.ConfigureDHCP && exec.DHCP != nil
	cfg.ConfigureBMC = cfg.ConfigureBMC && exec.BMC != nil
	if cfg.IronicEnrol {
		for _, inst := range cfg.IronicInstances {
			if exec.Ironic[inst] == nil {
				cfg.IronicEnrol = false
			}
		}
	}
	return cfg
}

// Build creates the fleet: a fake site of cfg.Hosts hosts.
func Build(cfg Config) (*Fleet, error) {
	if cfg.Hosts <= 0 {
		cfg.Hosts = 1000
	}
	if cfg.Broken < 0 || cfg.Broken > 1 {
		return nil, fmt.Errorf("fleetsim: broken share %v is outside 0..1", cfg.Broken)
	}
	if cfg.Divergent < 0 || cfg.Divergent > 1 {
		return nil, fmt.Errorf("fleetsim: divergent share %v is outside 0..1", cfg.Divergent)
	}
	if cfg.FactoryReset < 0 || cfg.FactoryReset > 1 || cfg.ApplyOnReset < 0 || cfg.ApplyOnReset > 1 {
		return nil, fmt.Errorf("fleetsim: factory-reset share %v or apply-on-reset share %v is outside 0..1", cfg.FactoryReset, cfg.ApplyOnReset)
	}
	kinds := cfg.Breakages
	if len(kinds) == 0 {
		kinds = Breakages
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x666c656574))
	site := fakes.NewSite()
	for _, inst := range SiteConfig().IronicInstances {
		site.AddIronic(inst)
	}
	f := &Fleet{Config: cfg, Site: site, Clock: NewSimClock(site.Clock), Broken: map[string]Breakage{}, Profile: map[string]string{},
		FactoryReset: map[string]string{}, ApplyOnReset: map[string]bool{}}
	nBroken := int(float64(cfg.Hosts)*cfg.Broken + 0.5)
	broken := map[int]bool{}
	for _, i := range rng.Perm(cfg.Hosts)[:nBroken] {
		broken[i] = true
	}
	width := len(fmt.Sprint(cfg.Hosts))
	for i := 0; i < cfg.Hosts; i++ {
		p := Profiles[rng.IntN(len(Profiles))]
		spec := p.Spec
		spec.Name = fmt.Sprintf("sim-%0*d", width, i)
		kind := Healthy
		if broken[i] {
			kind = kinds[rng.IntN(len(kinds))]
		}
		if kind == NoGPUType || kind == BadZTP {
			if spec.Class != intent.ClassGPUCompute {
				p = Profiles[0]
				spec = p.Spec
				spec.Name = fmt.Sprintf("sim-%0*d", width, i)
			}
			if kind == NoGPUType {
				spec.GPUType = ""
			} else {
				spec.HasZTP, spec.ZTP = true, map[string]any{}
			}
		}
		if kind == Healthy && cfg.Divergent > 0 && rng.Float64() < cfg.Divergent {
			spec.PlatformClass = "LEGACY_" + squash(spec.Manufacturer) + "_01"
		}
		// One leaf pair per 16 hosts: at most two NICs of a host land on
		// a leaf, so every cable ends on one of its 64 real ports.
		if i%hostsPerLeafPair == 0 {
			for k := 1; k <= 2; k++ {
				site.AddSwitch(fmt.Sprintf("leaf-%d", 2*(i/hostsPerLeafPair)+k))
			}
		}
		spec.Switches = []string{fmt.Sprintf("leaf-%d", 2*(i/hostsPerLeafPair)+1), fmt.Sprintf("leaf-%d", 2*(i/hostsPerLeafPair)+2)}
		h := site.AddHost(spec)
		if !plant(site, h, kind) {
			kind = Healthy // the fake hardware has nothing to break this way
		}
		f.Names = append(f.Names, spec.Name)
		f.Profile[spec.Name] = p.Name
		if kind != Healthy {
			f.Broken[spec.Name] = kind
		}
	}
	f.resetBMCs()
	return f, nil
}

// resetBMCs puts the drawn share of BMCs on their factory credential. It
// draws from its own stream, so a fleet without factory-reset BMCs is the
// fleet the same seed always built.
func (f *Fleet) resetBMCs() {
	if f.Config.FactoryReset <= 0 {
		return
	}
	rng := rand.New(rand.NewPCG(f.Config.Seed, 0x7265736574))
	for _, name := range f.Names {
		h, _ := f.Site.Host(name)
		m, ok := f.Site.BMCs.Of(name)
		if !ok || h == nil || m.Vendor() == "supermicro" || rng.Float64() >= f.Config.FactoryReset {
			continue
		}
		m.FactoryReset()
		if rng.IntN(2) == 0 {
			f.Site.Vault.Delete(fakes.AdminItem(name))
			f.FactoryReset[name] = "new"
		} else {
			f.FactoryReset[name] = "remediated" // the vault's per-host password is stale
		}
		if rng.Float64() < f.Config.ApplyOnReset {
			m.ApplyPasswordOnReset()
			f.ApplyOnReset[name] = true
		}
	}
}

// plant gives the host its inspection_validation expectations (from its
// healthy hardware) and then breaks its physical truth. It reports whether
// the breakage could be planted.
func plant(site *fakes.Site, h *fakes.Host, kind Breakage) bool {
	hw := h.Hardware
	iv := map[string]any{"bios": map[string]any{"block": []any{BlockedBIOSVersion}}}
	if len(hw.DIMMs) > 0 {
		iv["memory"] = map[string]any{"physical_mb": hw.MemoryMB, "dimm_count": len(hw.DIMMs)}
	}
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		d := st.DeviceByName(h.Name)
		if d == nil {
			return nil
		}
		d.ConfigContext["inspection_validation"] = iv
		if is, ok := d.ConfigContext["ironic_settings"].(map[string]any); ok && len(hw.Disks) > 0 {
			is["root_device"] = map[string]any{"serial": hw.Disks[0].Serial} // the OS-disk pin
		}
		// Data enrollment does not own, which it must leave as it is.
		d.TagIDs = append(d.TagIDs, st.EnsureTag(AuditTag).ID)
		d.CustomFields["asset_tag"] = "AT-" + h.Name
		return nil
	})
	switch kind {
	case Miscabled:
		if len(h.NICs) < 2 {
			return false
		}
		a, b := &h.NICs[0], &h.NICs[1]
		a.Switch, a.Port, b.Switch, b.Port = b.Switch, b.Port, a.Switch, a.Port
	case DeadOptic:
		if len(h.NICs) == 0 {
			return false
		}
		h.NICs[len(h.NICs)-1].Link = "down"
	case WrongDIMMs:
		n := len(h.Hardware.DIMMs)
		if n == 0 {
			return false
		}
		h.Hardware.MemoryMB -= h.Hardware.DIMMs[n-1].SizeMB
		h.Hardware.DIMMs = h.Hardware.DIMMs[:n-1]
	case BlockedBIOS:
		h.Hardware.BIOSVersion = BlockedBIOSVersion
	}
	return true
}

// squash upper-cases and keeps letters and digits.
func squash(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			b = append(b, c-'a'+'A')
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			b = append(b, c)
		}
	}
	return string(b)
}

// BrokenNames lists the broken hosts, sorted.
func (f *Fleet) BrokenNames() []string {
	out := make([]string, 0, len(f.Broken))
	for n := range f.Broken {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
