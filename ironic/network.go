package ironic

import (
	"context"
	"errors"

	"github.com/hostforge/hostforge"
)

// ensureNetworking creates the node's portgroup and ports from the spec, or
// reuses them. With repairOnly it creates nothing and only records a
// missing local_link_connection on existing ports (the repair the spec
// allows on a MANAGEABLE node of a skip_cable_verification host).
//
// Rules:
//   - one portgroup when the spec has a bond (MAC of the first NIC,
//     mode/miimon/xmit_hash_policy from the bond); create-only: an existing
//     portgroup is reused as-is;
//   - one port per NIC with a MAC, in the portgroup when there is one; PXE
//     only on the first NIC's port;
//   - local_link_connection from the NetBox cable with the placeholder
//     switch_id; an uncabled NIC of a skip_cable_verification host gets none;
//   - an existing port of this node is reused; the only change made to it is
//     recording a missing local_link_connection when NetBox has the cable;
//   - a MAC whose port belongs to another node, or to a portgroup other
//     than this node's, fails.
//
// Reads: a node this attempt created has no ports or portgroup yet, so
// nothing is looked up before creating them; an existing node's ports are
// read in one list. A MAC is looked up across all nodes only when Ironic
// refuses its port as a duplicate (to name the node that holds it), or, in
// repairOnly, when the node does not have it.
func (p *Phases) ensureNetworking(ctx context.Context, spec NodeSpec, node Node, phase string, repairOnly, created bool) ([]string, error) {
	log := p.log(spec.Name, phase)
	var changes []string
	var pgUUID string
	if spec.Bond != nil {
		var pgs []Portgroup
		if !created {
			var err error
			if pgs, err = p.Client.ListPortgroups(ctx, node.UUID); err != nil {
				return nil, p.classify(ctx, phase, spec.Name, err, "listing portgroups of node %s", spec.Name)
			}
		}
		if len(pgs) > 0 {
			pgUUID = pgs[0].UUID
		} else if !repairOnly {
			props := map[string]any{}
			if spec.Bond.Miimon > 0 {
				props["miimon"] = spec.Bond.Miimon
			}
			if spec.Bond.XmitHashPolicy != "" {
				props["xmit_hash_policy"] = spec.Bond.XmitHashPolicy
			}
			pg, err := p.Client.CreatePortgroup(ctx, Portgroup{
				NodeUUID: node.UUID, Name: spec.Name + "-bond0", Address: normMAC(spec.NICs[0].MAC),
				Mode: spec.Bond.Mode, Properties: props,
			})
			if err != nil {
				return changes, p.classify(ctx, phase, spec.Name, err, "creating the portgroup of node %s", spec.Name)
			}
			pgUUID = pg.UUID
			changes = append(changes, "portgroup "+pg.Address)
			log.Info("portgroup created", "step", "networking", "mode", pg.Mode, "address", pg.Address)
		}
	}
	have := map[string]Port{}
	if !created {
		ports, err := p.Client.ListPorts(ctx, node.UUID)
		if err != nil {
			return nil, p.classify(ctx, phase, spec.Name, err, "listing ports of node %s", spec.Name)
		}
		for _, pt := range ports {
			have[normMAC(pt.Address)] = pt
		}
	}
	// reuse checks a port found for the NIC and records its missing link.
	reuse := func(nic NIC, mac string, existing Port, llc map[string]string) error {
		if existing.NodeUUID != node.UUID {
			return PortConflict.At(phase).New("node %s: MAC %s of %s belongs to another Ironic node (%s)", spec.Name, mac, nic.Name, existing.NodeUUID)
		}
		if existing.PortgroupUUID != "" && existing.PortgroupUUID != pgUUID && pgUUID != "" {
			return PortConflict.At(phase).New("node %s: MAC %s of %s belongs to portgroup %s, not the node's portgroup %s", spec.Name, mac, nic.Name, existing.PortgroupUUID, pgUUID)
		}
		if len(existing.LocalLinkConnection) == 0 && llc != nil {
			ops := []PatchOp{Add("/local_link_connection", llc)}
			if _, err := p.Client.UpdatePort(ctx, existing.UUID, ops); err != nil {
				return p.classify(ctx, phase, spec.Name, err, "recording the link of port %s", mac)
			}
			changes = append(changes, "link "+mac)
			log.Info("port link recorded", "step", "networking", "mac", mac, "switch", nic.Switch, "port", nic.Port)
		}
		return nil
	}
	for i, nic := range spec.NICs {
		if nic.MAC == "" {
			continue
		}
		mac := normMAC(nic.MAC)
		var llc map[string]string
		if nic.Cabled() {
			llc = nic.LocalLinkConnection()
		}
		if existing, ok := have[mac]; ok {
			if err := reuse(nic, mac, existing, llc); err != nil {
				return changes, err
			}
			continue
		}
		if repairOnly {
			// Not on this node: on another one it is a conflict.
			existing, err := p.Client.PortByAddress(ctx, mac)
			switch {
			case isNotFound(err):
				continue
			case err != nil:
				return changes, p.classify(ctx, phase, spec.Name, err, "looking up port %s", mac)
			}
			if err := reuse(nic, mac, existing, llc); err != nil {
				return changes, err
			}
			continue
		}
		port := Port{NodeUUID: node.UUID, PortgroupUUID: pgUUID, Address: mac, PXEEnabled: i == 0, LocalLinkConnection: llc}
		_, err := p.Client.CreatePort(ctx, port)
		if err != nil && errors.Is(err, hostforge.ErrConflict) && !IsNodeLocked(err) {
			// The MAC has a port already: another node's, or this node's
			// made by an earlier attempt whose answer was lost.
			existing, lerr := p.Client.PortByAddress(ctx, mac)
			if lerr == nil {
				if err := reuse(nic, mac, existing, llc); err != nil {
					return changes, err
				}
				continue
			}
			if !isNotFound(lerr) {
				return changes, p.classify(ctx, phase, spec.Name, lerr, "looking up port %s", mac)
			}
		}
		if err != nil {
			return changes, p.classify(ctx, phase, spec.Name, err, "creating the port of %s (%s)", nic.Name, mac)
		}
		changes = append(changes, "port "+mac)
		log.Info("port created", "step", "networking", "mac", mac, "pxe", port.PXEEnabled, "switch", nic.Switch, "port", nic.Port)
	}
	return changes, nil
}
