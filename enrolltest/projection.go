package enrolltest

import (
	"context"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// SiteNodes lists the nodes one fake Ironic instance holds for the site's
// hosts, by node name, as an Ironic node listing would. The fake Ironic has
// no listing call of its own; this reads its nodes without counting calls.
type SiteNodes struct {
	Site     *fakes.Site
	Instance string
}

// ListNodes returns the instance's nodes of the site's hosts.
func (s SiteNodes) ListNodes(ctx context.Context) ([]ironic.Node, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ir := s.Site.Ironic[s.Instance]
	var out []ironic.Node
	if ir == nil {
		return out, nil
	}
	for _, h := range s.Site.HostNames() {
		if n, ok := ir.Node(h); ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// Projector projects the site's fake Ironic instances into its fake fleet
// manager's ledger (site.Proofs): the fleet manager's own view of each
// device's Ironic reference, independent of any enrollment result.
func Projector(site *fakes.Site) *enrollment.Projector {
	inst := map[string]enrollment.NodeLister{}
	for name := range site.Ironic {
		inst[name] = SiteNodes{Site: site, Instance: name}
	}
	return &enrollment.Projector{Instances: inst, Ledger: site.Proofs}
}
