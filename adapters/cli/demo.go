package cli

import (
	"log/slog"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// demoSite is the site slug of the demo rack.
const demoSite = enrolltest.DemoSite

// newDemoSite builds the fake rack --demo runs against (enrolltest.DemoRack).
// Tests replace it to run the demo on a rack with faults.
var newDemoSite = func() *fakes.Site { return enrolltest.DemoRack() }

// demoSiteConfig turns on every phase the fake site wires into exec, so the
// demo runs as much of the workflow as the fakes support.
func demoSiteConfig(exec *enrollment.Executor) enrollment.SiteConfig {
	cfg := enrolltest.DemoSiteConfig()
	cfg.ConfigureDHCP = exec.DHCP != nil
	cfg.ConfigureBMC = exec.BMC != nil
	cfg.IronicEnrol = len(exec.Ironic) > 0
	return cfg
}

// demoSystems wires the demo rack. Its fake vault registers what it hands
// out in secrets, as the file vault does for real systems, and every step
// leaves scrubbed of them.
func demoSystems(log *slog.Logger, secrets *hostforge.Secrets) *systems {
	site := newDemoSite()
	exec := enrolltest.Executor(site, log)
	scrubDemo(exec, site, secrets)
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

// scrubDemo makes the fake-wired executor of site keep secrets like the
// real wiring does: the vault the phases read registers every secret field
// in secrets, the BMC phase registers what it generates, and every step's
// error leaves scrubbed.
func scrubDemo(exec *enrollment.Executor, site *fakes.Site, secrets *hostforge.Secrets) {
	if secrets == nil {
		return
	}
	v := secrets.Vault(site.Vault)
	exec.Vault, exec.Secrets = v, secrets
	if c, ok := exec.BMC.(*bmc.Configurator); ok {
		c.Vault, c.Secrets = v, secrets
	}
	for _, p := range exec.Ironic {
		if ph, ok := p.(*ironic.Phases); ok {
			ph.Credentials = ironic.VaultCredentials{Vault: v}
		}
	}
}
