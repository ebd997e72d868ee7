package cli

import (
	"log/slog"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrollment/enrollfake"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// demoSite is the site slug of the demo rack.
const demoSite = "demo1"

// Ironic instances of the demo rack.
const (
	demoIronicGPU = "ironic-gpu"
	demoIronicCPU = "ironic-cpu"
)

// newDemoSite builds the fake rack --demo runs against: healthy hosts of
// each BMC vendor, and hosts broken the ways racks break, each failing with
// its own classified code and owner.
func newDemoSite() *fakes.Site {
	site := fakes.NewSite()
	site.AddIronic(demoIronicGPU)
	site.AddIronic(demoIronicCPU)
	ib := map[string]any{"infiniband": map[string]any{"rails": 8}}
	for _, h := range []fakes.HostSpec{
		{Name: "gpu-r1-u02", Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: ib, Vendor: "lenovo"},
		{Name: "gpu-r1-u06", Class: intent.ClassGPUCompute, Manufacturer: "NVIDIA", Model: "DGX H100", GPUType: "H100", Vendor: "ami"},
		{Name: "cpu-r1-u10", Class: intent.ClassCPUBaremetal, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell"},
		{Name: "cpu-r1-u11", Class: intent.ClassCPUBaremetal, Manufacturer: "Supermicro", Model: "SYS-821GE-TNHR", Vendor: "supermicro"},
		{Name: "hv-r1-u14", Class: intent.ClassHypervisor, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell", Status: intent.StatusActive},
		// Broken in NetBox.
		{Name: "sw-r1-u42", Class: intent.ClassSwitch},
		{Name: "gpu-r1-u20", Class: intent.ClassGPUCompute, Manufacturer: "Dell", Model: "PowerEdge XE9680", Vendor: "dell"},
		{Name: "cpu-r1-u22", Class: intent.ClassCPUBaremetal, Status: intent.StatusOffline},
		// Broken in the rack: NetBox is right, the cables are not.
		{Name: "cpu-r1-u24", Class: intent.ClassCPUBaremetal, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell"},
	} {
		site.AddHost(h)
	}
	if h, ok := site.Host("cpu-r1-u24"); ok && len(h.NICs) >= 2 {
		a, b := &h.NICs[0], &h.NICs[1]
		a.Switch, a.Port, b.Switch, b.Port = b.Switch, b.Port, a.Switch, a.Port
	}
	return site
}

// demoSiteConfig turns on every phase the fake site wires into exec, so the
// demo runs as much of the workflow as the fakes support.
func demoSiteConfig(exec *enrollment.Executor) enrollment.SiteConfig {
	return enrollment.SiteConfig{
		ConfigureDHCP: exec.DHCP != nil,
		ConfigureBMC:  exec.BMC != nil,
		IronicEnrol:   len(exec.Ironic) > 0,
		IronicInstances: map[string]string{
			intent.ClassGPUCompute:   demoIronicGPU,
			intent.ClassCPUBaremetal: demoIronicCPU,
			intent.ClassHypervisor:   demoIronicCPU,
		},
		EnrolProject: "baremetal-enrol",
	}
}

// demoSystems wires the demo rack.
func demoSystems(log *slog.Logger) *systems {
	site := newDemoSite()
	exec := enrollfake.Executor(site, log)
	return &systems{
		site:       demoSite,
		netbox:     site.NetBox,
		lister:     site.NetBox,
		fleet:      site.FleetManager,
		exec:       exec,
		clock:      site.Clock,
		siteConfig: demoSiteConfig(exec),
		pcReady:    true,
		log:        log,
		demo:       site,
	}
}
