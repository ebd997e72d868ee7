package enrolltest

import (
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// DemoSite is the demo rack's site slug.
const DemoSite = "lab1"

// Ironic instances of the demo rack.
const (
	DemoIronicGPU = "ironic-gpu"
	DemoIronicCPU = "ironic-cpu"
)

// DemoRack builds the fake rack the quickstart, the CLI's --demo and the
// Temporal example enrol: healthy hosts of each BMC vendor, and hosts broken
// the ways racks break, each failing with its own classified code and owner.
//
//	host               what is wrong                                  expected outcome
//	gpu-r1-u02         nothing (Lenovo XCC, GB300, InfiniBand)        available
//	gpu-r1-u06         nothing (AMI MegaRAC, H100, no ztp)            available
//	cpu-r1-u10         nothing (Dell iDRAC)                           available
//	cpu-r1-u11         nothing (Supermicro)                           available
//	hv-r1-u14          nothing (hypervisor, already active)           available
//	bad-noclass-u16    role without a device_class                    IRONIC_ROUTING_UNRESOLVED
//	bad-switch-u17     a SWITCH no Ironic instance manages            IRONIC_ROUTING_UNRESOLVED
//	bad-offline-u18    NetBox status offline                          NETBOX_STATUS_INELIGIBLE
//	bad-nogputype-u20  GPU device type without gpu_type               PLATFORM_CLASS_UNRESOLVABLE
//	bad-ztp-u24        ztp block without an infiniband section        PLATFORM_CLASS_UNRESOLVABLE
//	gpu-divergent-u28  NetBox platform_class differs (kept, warned)   available
//	bad-miscabled-u30  a patch cable moved to another switch port     INSPECTION_CABLING_MISMATCH
//	bad-optics-u32     every frontend optic dead                      IRONIC_FRONTEND_LINK_DOWN
func DemoRack() *fakes.Site {
	site := fakes.NewSite()
	site.AddIronic(DemoIronicGPU)
	site.AddIronic(DemoIronicCPU)
	ib := map[string]any{"infiniband": map[string]any{"rails": 8}}
	for _, h := range []fakes.HostSpec{
		{Name: "gpu-r1-u02", Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: ib, Vendor: "lenovo"},
		{Name: "gpu-r1-u06", Class: intent.ClassGPUCompute, Manufacturer: "NVIDIA", Model: "DGX H100", GPUType: "H100", Vendor: "ami"},
		{Name: "cpu-r1-u10", Class: intent.ClassCPUBaremetal, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell"},
		{Name: "cpu-r1-u11", Class: intent.ClassCPUBaremetal, Manufacturer: "Supermicro", Model: "SYS-821GE-TNHR", Vendor: "supermicro"},
		{Name: "hv-r1-u14", Class: intent.ClassHypervisor, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell", Status: intent.StatusActive},
		// Broken in NetBox, each in its own way.
		{Name: "bad-noclass-u16", NoClass: true},
		{Name: "bad-switch-u17", Class: intent.ClassSwitch},
		{Name: "bad-offline-u18", Status: intent.StatusOffline},
		{Name: "bad-nogputype-u20", Class: intent.ClassGPUCompute, Manufacturer: "Dell", Model: "PowerEdge XE9680"},
		{Name: "bad-ztp-u24", Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: map[string]any{}, Vendor: "lenovo"},
		{Name: "gpu-divergent-u28", Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: ib, PlatformClass: "GB200_LENOVOHG635N_IB_01", Vendor: "lenovo"},
	} {
		site.AddHost(h)
	}
	// Broken on site, while NetBox is right.
	moved := site.AddHost(fakes.HostSpec{Name: "bad-miscabled-u30", Class: intent.ClassCPUBaremetal, Vendor: "dell"})
	moved.NICs[1].Port = "swp60"
	dead := site.AddHost(fakes.HostSpec{Name: "bad-optics-u32", Class: intent.ClassCPUBaremetal, Vendor: "dell"})
	for i := range dead.NICs {
		dead.NICs[i].Link = "down"
	}
	return site
}

// DemoSiteConfig is the demo site's configuration: every phase on.
func DemoSiteConfig() enrollment.SiteConfig {
	return enrollment.SiteConfig{
		ConfigureDHCP: true,
		ConfigureBMC:  true,
		IronicEnrol:   true,
		IronicInstances: map[string]string{
			intent.ClassGPUCompute:   DemoIronicGPU,
			intent.ClassCPUBaremetal: DemoIronicCPU,
			intent.ClassHypervisor:   DemoIronicCPU,
		},
		EnrolProject: "baremetal-enrol",
	}
}
