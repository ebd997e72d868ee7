package ironic

import (
	"context"
	"sort"
	"strings"

	"github.com/hostforge/hostforge"
)

// ipmiInterface is the ipmi hardware type's replacement for a Redfish or
// iDRAC interface ("" leaves the interface as is).
var ipmiInterface = map[string]string{
	"boot":       "ipxe",
	"management": "ipmitool",
	"power":      "ipmitool",
	"vendor":     "ipmitool",
	"bios":       "no-bios",
	"inspect":    "inspector",
	"raid":       "agent",
	"console":    "no-console",
	"firmware":   "no-firmware",
}

// SwitchResult says what the Redfish→IPMI switch did.
type SwitchResult struct {
	Node     NodeStatus `json:"node"`
	Switched bool       `json:"switched"`
	// Skipped says why nothing was done.
	Skipped string `json:"skipped,omitempty"`
}

// SwitchToIPMI flips an unowned MANAGEABLE node whose driver is redfish or
// idrac to the ipmi driver, with the per-host credential (phase 6). Any
// other node is left alone. A locked node is a wait.
func (p *Phases) SwitchToIPMI(ctx context.Context, spec NodeSpec) (SwitchResult, error) {
	out, err := p.switchToIPMI(ctx, spec)
	return out, hostforge.Classified(err)
}

func (p *Phases) switchToIPMI(ctx context.Context, spec NodeSpec) (SwitchResult, error) {
	const phase = PhaseSwitchIPMI
	if err := spec.Validate(); err != nil {
		return SwitchResult{}, err
	}
	log := p.log(spec.Name, phase)
	node, err := p.Client.GetNode(ctx, spec.Name, preludeFields...)
	if err != nil {
		return SwitchResult{}, p.classify(ctx, phase, spec.Name, err, "reading node %s", spec.Name)
	}
	out := SwitchResult{Node: status(node)}
	switch {
	case node.InstanceUUID != "":
		out.Skipped = "owned by instance " + node.InstanceUUID
	case node.ProvisionState != StateManageable:
		out.Skipped = "provision state " + node.ProvisionState
	case node.Driver != "redfish" && node.Driver != "idrac":
		out.Skipped = "driver " + node.Driver
	}
	if out.Skipped != "" {
		log.Info("driver switch skipped", "step", "switch_to_ipmi", "reason", out.Skipped)
		return out, nil
	}
	if spec.BMCAddress == "" {
		return out, InputInvalid.New("node %q: bmc_address: the ipmi driver needs the BMC's address (NetBox oob_ip)", spec.Name)
	}
	cred, err := p.credential(ctx, spec)
	if err != nil {
		return out, err
	}
	ops := []PatchOp{Replace("/driver", "ipmi"), Replace("/driver_info", spec.driverInfo("ipmi", cred))}
	ifaces := make([]string, 0, len(node.Interfaces))
	for iface := range node.Interfaces {
		ifaces = append(ifaces, iface)
	}
	sort.Strings(ifaces)
	for _, iface := range ifaces {
		cur := node.Interfaces[iface]
		want, ok := ipmiInterface[iface]
		if ok && (strings.HasPrefix(cur, "redfish") || strings.HasPrefix(cur, "idrac")) {
			ops = append(ops, Replace("/"+iface+"_interface", want))
		}
	}
	n, err := p.Client.UpdateNode(ctx, node.UUID, ops)
	if err != nil {
		return out, p.classify(ctx, phase, spec.Name, err, "switching node %s to the ipmi driver", spec.Name)
	}
	log.Info("driver switched to ipmi", "step", "switch_to_ipmi", "from", node.Driver)
	out.Node, out.Switched = status(n), true
	return out, nil
}
