package cli

import (
	"log/slog"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
)

// demoSite is the site slug of the demo rack.
const demoSite = enrolltest.DemoSite

// newDemoSite builds the fake rack --demo runs against (enrolltest.DemoRack).
func newDemoSite() *fakes.Site { return enrolltest.DemoRack() }

// demoSiteConfig turns on every phase the fake site wires into exec, so the
// demo runs as much of the workflow as the fakes support.
func demoSiteConfig(exec *enrollment.Executor) enrollment.SiteConfig {
	cfg := enrolltest.DemoSiteConfig()
	cfg.ConfigureDHCP = exec.DHCP != nil
	cfg.ConfigureBMC = exec.BMC != nil
	cfg.IronicEnrol = len(exec.Ironic) > 0
	return cfg
}

// demoSystems wires the demo rack.
func demoSystems(log *slog.Logger) *systems {
	site := newDemoSite()
	exec := enrolltest.Executor(site, log)
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
