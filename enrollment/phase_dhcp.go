package enrollment

import (
	"context"

	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/flow"
)

// StepConfigureDHCP is phase 1's step.
const StepConfigureDHCP = "configure_dhcp"

// DHCPPhase configures the DHCP server for one host (package dhcp).
type DHCPPhase interface {
	Configure(ctx context.Context, e dhcp.Entry) (dhcp.Result, error)
}

// dhcp.Phase is the implementation; adapters/ssh or fakes.DHCPServer dial it.
var _ DHCPPhase = (*dhcp.Phase)(nil)

func (e *Executor) dhcpSteps() []flow.Step {
	return []flow.Step{flow.Bind(StepConfigureDHCP, dhcpAttempt, e.ConfigureDHCP)}
}

// ConfigureDHCP runs phase 1.
func (e *Executor) ConfigureDHCP(ctx context.Context, in dhcp.Entry) (dhcp.Result, error) {
	if e.DHCP == nil {
		return dhcp.Result{}, NotImplemented.New("DHCP phase: no DHCPPhase in the executor")
	}
	return e.DHCP.Configure(ctx, in)
}

// dhcpEntry maps the plan to phase 1's input.
func dhcpEntry(p Plan) (dhcp.Entry, error) {
	d := p.Device
	var mac string
	for _, i := range d.Interfaces {
		if i.MgmtOnly && i.MAC != "" {
			mac = i.MAC
			break
		}
	}
	if mac == "" {
		return dhcp.Entry{}, invalid(d.Name, "interfaces", "no management-only interface with a MAC address; DHCP needs the BMC's MAC")
	}
	return dhcp.Entry{Hostname: d.Name, MAC: mac, IP: d.OOBIP}, nil
}
