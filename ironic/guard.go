package ironic

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/link"
)

// LinkGuard is the frontend-link guard's state across calls: it starts when
// Ironic first reports the node powered on and lasts Timing.LinkBudget.
type LinkGuard struct {
	PoweredOnAt time.Time `json:"powered_on_at,omitzero"`
	Passed      bool      `json:"passed,omitempty"`
	// Samples are the observations since power on (the latest maxSamples).
	Samples []link.Sample `json:"samples,omitempty"`
}

const maxSamples = 64

// guardLinks takes one link sample once the node is powered on and applies
// the three-state rule: any UP passes, UNKNOWN fails open, all DOWN for the
// whole budget fails with LinkDown. A BMC that cannot observe links fails
// the attempt with LinkObservationFailed.
func (p *Phases) guardLinks(ctx context.Context, spec NodeSpec, node Node, g *LinkGuard, phase string, now time.Time) error {
	if g.Passed || node.PowerState != PowerOn {
		return nil
	}
	log := p.log(spec.Name, phase)
	if g.PoweredOnAt.IsZero() {
		g.PoweredOnAt = now
	}
	if p.NoLinkGuard {
		g.Passed = true
		log.Warn("frontend-link guard turned off (NoLinkGuard); a host with dead optics will hang in Ironic instead", "step", "link_guard")
		return nil
	}
	if p.Links == nil {
		return LinkGuardUnwired.At(phase).New("node %s: the Ironic phases have no link reader; wire one (or set NoLinkGuard to opt out explicitly)", spec.Name)
	}
	var macs []string
	for _, n := range spec.NICs {
		if n.MAC != "" {
			macs = append(macs, normMAC(n.MAC))
		}
	}
	// The device travels with the read: the Redfish connector picks the
	// BMC's TLS trust (a per-device pin) by it.
	states, err := p.Links.FrontendLinks(hostforge.WithDevice(ctx, spec.Name), spec.BMCAddress, spec.CredentialItem, macs)
	if err != nil {
		f := LinkObservationFailed.At(phase).Wrap(err, "node %s: reading frontend link state from BMC %s", spec.Name, spec.BMCAddress)
		return f
	}
	ports := make(map[string]link.State, len(macs))
	for _, m := range macs {
		st, ok := states[m]
		if !ok {
			st = link.Unknown
		}
		ports[m] = st
	}
	g.Samples = append(g.Samples, link.Sample{At: now, Ports: ports})
	if len(g.Samples) > maxSamples {
		g.Samples = g.Samples[len(g.Samples)-maxSamples:]
	}
	switch link.Decide(g.PoweredOnAt, p.timing().LinkBudget, g.Samples) {
	case link.Pass:
		g.Passed = true
		g.Samples = nil
		log.Info("frontend link guard passed", "step", "link_guard", "links", ports)
	case link.Abort:
		f := LinkDown.At(phase).New("node %s: every frontend link was DOWN for %s since power on (%s); check switch/cabling/optics",
			spec.Name, now.Sub(g.PoweredOnAt), describeLinks(spec, ports))
		return f
	}
	return nil
}

func describeLinks(spec NodeSpec, ports map[string]link.State) string {
	var parts []string
	for _, n := range spec.NICs {
		if st, ok := ports[normMAC(n.MAC)]; ok && n.MAC != "" {
			where := "uncabled in NetBox"
			if n.Cabled() {
				where = n.Switch + " " + n.Port
			}
			parts = append(parts, n.Name+" ("+where+") "+string(st))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
