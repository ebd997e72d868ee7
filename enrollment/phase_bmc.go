package enrollment

import (
	"context"
	"time"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/flow"
)

// StepConfigureBMC is phase 2's step.
const StepConfigureBMC = "configure_bmc"

// BMCPhase configures one host's BMC (package bmc).
type BMCPhase interface {
	Configure(ctx context.Context, t bmc.Target) (bmc.Result, error)
}

func (e *Executor) bmcSteps() []flow.Step {
	return []flow.Step{flow.Bind(StepConfigureBMC, bmcAttempt, e.ConfigureBMC)}
}

// ConfigureBMC runs phase 2.
func (e *Executor) ConfigureBMC(ctx context.Context, in bmc.Target) (bmc.Result, error) {
	if e.BMC == nil {
		return bmc.Result{}, NotImplemented.New("BMC phase: no BMCPhase in the executor")
	}
	return e.BMC.Configure(ctx, in)
}

// bmcTarget maps the plan to phase 2's input. started is when this run
// of the phase started (the runtime's time, deterministic under replay):
// it is the run's identity for a forced cold reset.
func bmcTarget(req Request, p Plan, started time.Time) bmc.Target {
	t := bmc.Target{
		Device:        p.Device.Name,
		Address:       p.Device.OOBIP,
		NTPServers:    p.NTPServers,
		SyslogServers: p.SyslogServers,
		RestrictBoot:  req.Snapshot.Site.BootRestricted(),
		ForceRestart:  req.Params.ForceBMCRestart,
		// WithDefaults fills the site's item names; a request built by hand
		// without them gets the defaults too.
		AdminItem:      AdminItem(p.Device.Name),
		FactoryItem:    req.Snapshot.Site.WithDefaults().FactoryItem,
		MonitoringItem: req.Snapshot.Site.WithDefaults().MonitoringItem,
		// A host retired earlier is reached with its archived credential.
		ArchivedItem: bmc.ArchivedItem(AdminItem(p.Device.Name)),
	}
	if p.ProvisioningNIC != nil {
		t.ProvisioningMAC = p.ProvisioningNIC.MAC
	}
	if t.ForceRestart {
		t.RunID = req.Device + "@" + started.UTC().Format(time.RFC3339Nano)
	}
	return t
}
