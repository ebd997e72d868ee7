package enrolltest

import (
	"log/slog"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/retirement"
)

// RetireExecutor returns a retirement executor whose clients are the
// site's fakes: the same world Executor enrolls into.
func RetireExecutor(site *fakes.Site, log *slog.Logger) *retirement.Executor {
	e := &retirement.Executor{
		NetBox: site.NetBox,
		DHCP:   dhcp.New(site.DHCP, site.DHCP.Config(), log),
		BMC:    &bmc.Retirer{Connector: site.BMCs, Vault: site.Vault, Clock: site.Clock, Log: log},
		Ledger: site.Proofs,
		Ironic: map[string]retirement.IronicRetirement{},
		Log:    log,
	}
	for name, p := range ironicPhases(site, log) {
		e.Ironic[name] = p.(*ironic.Phases)
	}
	return e
}

// RetireSiteConfig is the retirement settings of a site configured as cfg
// (its gates, Ironic routing and monitoring item), with the ledger.
func RetireSiteConfig(cfg enrollment.SiteConfig) retirement.SiteConfig {
	cfg = cfg.WithDefaults()
	return retirement.SiteConfig{
		ConfigureDHCP: cfg.ConfigureDHCP, ConfigureBMC: cfg.ConfigureBMC, IronicEnrol: cfg.IronicEnrol,
		IronicInstances: cfg.IronicInstances, MonitoringItem: cfg.MonitoringItem, Ledger: true,
		NodeLockMaxWait: cfg.NodeLockMaxWait.D(), EraseDeadline: cfg.CleaningDeadline.D(), MaxAttempts: cfg.MaxAttempts,
	}
}
