// Package enrolltest wires a fake Site into an enrollment Executor: every
// phase backed by the Site's in-memory systems. Tests, the quickstart and the
// fleet simulator use it so they all run the same world.
package enrolltest

import (
	"log/slog"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
)

// Executor returns an executor whose clients are the site's fakes.
func Executor(site *fakes.Site, log *slog.Logger) *enrollment.Executor {
	e := &enrollment.Executor{
		NetBox:       site.NetBox,
		FleetManager: site.FleetManager,
		Vault:        site.Vault,
		Log:          log,
	}
	wirePhases(site, e)
	return e
}

// wirePhases connects the DHCP, BMC and Ironic phases to the site's fakes.
func wirePhases(site *fakes.Site, e *enrollment.Executor) {
	e.DHCP = dhcp.New(site.DHCP, site.DHCP.Config(), e.Log)
	e.BMC = &bmc.Configurator{Connector: site.BMCs, Vault: site.Vault, Clock: site.Clock, Log: e.Log}
	e.Ironic = ironicPhases(site, e.Log)
}
