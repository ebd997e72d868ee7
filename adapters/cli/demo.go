package cli

import (
	"log/slog"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrollment/enrollfake"
	"github.com/hostforge/hostforge/fakes"
)

// demoSite is the site slug of the demo rack.
const demoSite = enrollfake.DemoSite

// newDemoSite builds the fake rack --demo runs against (enrollfake.DemoRack).
func newDemoSite() *fakes.Site { return enrollfake.DemoRack() }

// demoSiteConfig turns on every phase the fake site wires into exec, so the
// demo runs as much of the workflow as the fakes support.
func demoSiteConfig(exec *enrollment.Executor) enrollment.SiteConfig {
	cfg := enrollfake.DemoSiteConfig()
	cfg.ConfigureDHCP = exec.DHCP != nil
	cfg.ConfigureBMC = exec.BMC != nil
	cfg.IronicEnrol = len(exec.Ironic) > 0
	return cfg
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
