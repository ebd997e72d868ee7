package ironic

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/hostforge/hostforge/verify"
)

// LinkGuard is the frontend-link guard's state across calls: it starts when
// Ironic first reports the node powered on and lasts Timing.LinkBudget.
type LinkGuard struct {
	PoweredOnAt time.Time `json:"powered_on_at,omitzero"`
	Passed      bool      `json:"passed,omitempty"`
	// Samples are the observations since power on (the latest maxSamples).
	Samples []verify.LinkSample `json:"samples,omitempty"`
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
	if p.Links == nil {
		g.Passed = true
		log.Warn("no link reader configured; frontend-link guard skipped", "step", "link_guard")
		return nil
	}
	var macs []string
	for _, n := range spec.NICs {
		if n.MAC != "" {
			macs = append(macs, normMAC(n.MAC))
		}
	}
	states, err := p.Links.FrontendLinks(ctx, spec.BMCAddress, macs)
	if err != nil {
		f := LinkObservationFailed.Wrap(err, "node %s: reading frontend link state from BMC %s", spec.Name, spec.BMCAddress)
		f.Phase = phase
		return f
	}
	ports := make(map[string]verify.LinkState, len(macs))
	for _, m := range macs {
		st, ok := states[m]
		if !ok {
			st = verify.LinkUnknown
		}
		ports[m] = st
	}
	g.Samples = append(g.Samples, verify.LinkSample{At: now, Ports: ports})
	if len(g.Samples) > maxSamples {
		g.Samples = g.Samples[len(g.Samples)-maxSamples:]
	}
	switch verify.DecideLink(g.PoweredOnAt, p.timing().LinkBudget, g.Samples) {
	case verify.LinkPass:
		g.Passed = true
		g.Samples = nil
		log.Info("frontend link guard passed", "step", "link_guard", "links", ports)
	case verify.LinkAbort:
		f := LinkDown.New("node %s: every frontend link was DOWN for %s since power on (%s); check switch/cabling/optics",
			spec.Name, now.Sub(g.PoweredOnAt), describeLinks(spec, ports))
		f.Phase = phase
		return f
	}
	return nil
}

func describeLinks(spec NodeSpec, ports map[string]verify.LinkState) string {
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
