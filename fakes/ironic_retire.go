package fakes

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/ironic"
)

// The fake Ironic's manual cleaning and deletions, as Ironic 2023.1 does
// them (ironic.Decommissioner):
//
//   - Clean is accepted only from MANAGEABLE, outside maintenance (400
//     otherwise), with at least one step. The node goes to cleaning
//     (locked for Timing.Cleaning). A step the node's interfaces do not
//     have fails the clean before any step runs: clean failed, last_error
//     naming the step, maintenance untouched. Steps the agent runs (the
//     deploy interface's erase steps on an agent deploy interface, an
//     agent RAID interface's) boot the ramdisk: clean wait for
//     Timing.CleanWait, then MANAGEABLE, powered off — or clean failed
//     with maintenance set when a step fails (FailCleaning), and hanging
//     until Timing.CleanCallbackTimeout on a host whose links are all down.
//     Out-of-band steps (a fake or redfish RAID or BIOS interface) run in
//     cleaning and the node is MANAGEABLE when its lock is released.
//   - DeleteNode refuses (409) a node with an instance, or one in a state
//     other than enroll, manageable, available and adopt failed, unless it
//     is in maintenance; the node's ports and portgroups go with it.
//   - DeletePort and DeletePortgroup take the node's lock (409 while it is
//     held); a portgroup with ports is refused (400).

var _ ironic.Decommissioner = (*Ironic)(nil)

// agentDeploy lists the deploy interfaces whose clean steps the Ironic
// Python Agent runs on the host.
var agentDeploy = map[string]bool{"direct": true, "agent": true, "ramdisk": true, "ansible": true}

// cleanStepsOf are the manual clean steps a node's interfaces offer, and
// whether each needs the ramdisk.
func cleanStepsOf(ifs map[string]string) map[string]bool {
	steps := map[string]bool{}
	if agentDeploy[ifs["deploy"]] {
		steps["deploy.erase_devices"] = true
		steps["deploy.erase_devices_metadata"] = true
	}
	switch ifs["raid"] {
	case "agent":
		steps["raid.create_configuration"] = true
		steps["raid.delete_configuration"] = true
	case "fake", "redfish", "idrac-redfish":
		steps["raid.create_configuration"] = false
		steps["raid.delete_configuration"] = false
	}
	switch ifs["bios"] {
	case "fake", "redfish", "idrac-redfish":
		steps["bios.factory_reset"] = false
		steps["bios.apply_configuration"] = false
		steps["bios.cache_bios_settings"] = false
	}
	return steps
}

// Clean starts a manual clean.
func (f *Ironic) Clean(ctx context.Context, ident string, steps []ironic.CleanStep) (err error) {
	n, unlock, err := f.writeNode(ctx, "clean", ident)
	if err != nil {
		return err
	}
	defer f.site.answer(ctx, SysIronic, "clean", &err)
	defer unlock()
	from := n.n.ProvisionState
	switch {
	case len(steps) == 0:
		return fmt.Errorf("ironic: 400 \"clean_steps\" is required when setting target provision state to clean: %w", hostforge.ErrInvalid)
	case n.n.Maintenance:
		return fmt.Errorf("ironic: 400 The cleaning operation can't be performed on node %s because it's in maintenance mode: %w", n.n.UUID, hostforge.ErrInvalid)
	case from != ironic.StateManageable:
		return fmt.Errorf("ironic: 400 The requested action \"manual clean\" can not be performed on node %q while it is in state %q: %w", n.n.UUID, from, hostforge.ErrInvalid)
	}
	t := f.Timing.withDefaults()
	now := f.now()
	offered := cleanStepsOf(n.n.Interfaces)
	var unsupported []string
	ramdisk := false
	names := make([]string, 0, len(steps))
	for _, s := range steps {
		needs, ok := offered[s.String()]
		if !ok {
			unsupported = append(unsupported, s.String())
		}
		ramdisk = ramdisk || needs
		names = append(names, s.String())
	}
	set := func(state, target string) { n.n.ProvisionState, n.n.TargetProvisionState = state, target }
	set(ironic.StateCleaning, ironic.StateManageable)
	n.lock(now, t.Cleaning)
	n.record(now, "provision", "clean %s: %s → %s", strings.Join(names, ","), from, n.n.ProvisionState)
	if len(unsupported) > 0 {
		// Ironic validates the steps before running any: the clean fails
		// at once, and no step ran, so maintenance is not set.
		sort.Strings(unsupported)
		n.schedule(now.Add(time.Millisecond), func(at time.Time, n *inode) {
			set(ironic.StateCleanFailed, ironic.StateManageable)
			n.n.LastError = fmt.Sprintf("Cannot clean node %s: Node %s: clean step %s is not supported", n.n.UUID, n.n.UUID, strings.Join(unsupported, ", "))
		})
		return nil
	}
	if !ramdisk {
		n.schedule(now.Add(t.Cleaning), func(at time.Time, n *inode) {
			for _, s := range names {
				n.record(at, "clean_step", "%s", s)
			}
			n.n.LastError = ""
			set(ironic.StateManageable, "")
		})
		return nil
	}
	n.n.PowerState = ironic.PowerOff // rebooted into the ramdisk
	n.schedule(now.Add(t.Cleaning), func(at time.Time, n *inode) {
		set(ironic.StateCleanWait, ironic.StateManageable)
		n.n.PowerState = ironic.PowerOn
		var finish func(at time.Time, n *inode)
		finish = func(at time.Time, n *inode) {
			if n.n.ProvisionState != ironic.StateCleanWait {
				return // aborted meanwhile
			}
			if n.n.Maintenance {
				// A maintenance node's heartbeats are ignored: the clean hangs.
				n.schedule(at.Add(t.CleanWait), finish)
				return
			}
			if f.isolated(n) {
				n.schedule(at.Add(t.CleanCallbackTimeout), func(_ time.Time, n *inode) {
					if n.n.ProvisionState == ironic.StateCleanWait {
						set(ironic.StateCleanFailed, ironic.StateManageable)
						n.n.LastError = "Timeout reached while cleaning the node. Please check if the ramdisk responsible for the cleaning is running on the node."
						n.n.Maintenance, n.n.MaintenanceReason = true, n.n.LastError
					}
				})
				return
			}
			n.n.PowerState = ironic.PowerOff
			if n.failClean > 0 {
				n.failClean--
				set(ironic.StateCleanFailed, ironic.StateManageable)
				n.n.LastError = fmt.Sprintf("Clean step %s failed on node %s. injected failure", names[0], n.n.UUID)
				n.n.Maintenance, n.n.MaintenanceReason = true, n.n.LastError
				return
			}
			for _, s := range names {
				n.record(at, "clean_step", "%s", s)
			}
			n.n.LastError = ""
			set(ironic.StateManageable, "")
		}
		n.schedule(at.Add(t.CleanWait), finish)
	})
	return nil
}

// deleteStates are where Ironic deletes a node outside maintenance
// (DELETE_ALLOWED_STATES, and available with its default
// allow_deleting_available_nodes).
var deleteStates = map[string]bool{ironic.StateEnroll: true, ironic.StateManageable: true, ironic.StateAvailable: true, "adopt failed": true}

// DeleteNode deletes a node with its ports and portgroups.
func (f *Ironic) DeleteNode(ctx context.Context, ident string) (err error) {
	n, unlock, err := f.writeNode(ctx, "delete_node", ident)
	if err != nil {
		return err
	}
	defer f.site.answer(ctx, SysIronic, "delete_node", &err)
	defer unlock()
	switch {
	case !n.n.Maintenance && n.n.InstanceUUID != "":
		return fmt.Errorf("ironic: 409 Node %s is associated with instance %s: %w", n.n.UUID, n.n.InstanceUUID, hostforge.ErrConflict)
	case !n.n.Maintenance && !deleteStates[n.n.ProvisionState]:
		return fmt.Errorf("ironic: 409 Can not delete node \"%s\" while it is in provision state \"%s\". Valid provision states to perform deletion are: \"('manageable', 'enroll', 'adopt failed', 'available')\", or set the node into maintenance mode: %w",
			n.n.UUID, n.n.ProvisionState, hostforge.ErrConflict)
	}
	uuid := n.n.UUID
	for _, p := range f.portsOfNode[uuid] {
		delete(f.ports, p.UUID)
		delete(f.portByAddr, p.Address)
	}
	delete(f.portsOfNode, uuid)
	for _, pg := range f.pgsOfNode[uuid] {
		f.forgetPortgroup(pg)
	}
	delete(f.pgsOfNode, uuid)
	delete(f.nodes, uuid)
	if f.byName[n.n.Name] == n {
		delete(f.byName, n.n.Name)
	}
	f.deleted = append(f.deleted, DeletedNode{Name: n.n.Name, UUID: uuid, At: f.now(), Writes: append(n.writes, IronicWrite{At: f.now(), Op: "delete_node"})})
	return nil
}

func (f *Ironic) forgetPortgroup(pg *ironic.Portgroup) {
	delete(f.pgs, pg.UUID)
	if pg.Name != "" && f.pgByName[pg.Name] == pg {
		delete(f.pgByName, pg.Name)
	}
	if pg.Address != "" && f.pgByAddr[pg.Address] == pg {
		delete(f.pgByAddr, pg.Address)
	}
}

// nodeOfChild finds the node a port or portgroup belongs to, advanced to
// now, and refuses a locked one. Callers hold f.mu.
func (f *Ironic) nodeOfChild(nodeUUID string) (*inode, error) {
	n, err := f.find(nodeUUID)
	if err != nil {
		return nil, err
	}
	return n, f.checkLock(n)
}

// DeletePort deletes a port.
func (f *Ironic) DeletePort(ctx context.Context, uuid string) (err error) {
	if err := f.enter(ctx, "delete_port", true); err != nil {
		return err
	}
	defer f.site.answer(ctx, SysIronic, "delete_port", &err)
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.ports[uuid]
	if !ok {
		return fmt.Errorf("ironic: 404 Port %s could not be found: %w", uuid, hostforge.ErrNotFound)
	}
	n, err := f.nodeOfChild(p.NodeUUID)
	if err != nil {
		return err
	}
	delete(f.ports, uuid)
	if f.portByAddr[p.Address] == p {
		delete(f.portByAddr, p.Address)
	}
	kept := f.portsOfNode[p.NodeUUID][:0:0]
	for _, q := range f.portsOfNode[p.NodeUUID] {
		if q != p {
			kept = append(kept, q)
		}
	}
	f.portsOfNode[p.NodeUUID] = kept
	n.record(f.now(), "delete_port", "%s", p.Address)
	return nil
}

// DeletePortgroup deletes a portgroup no port belongs to.
func (f *Ironic) DeletePortgroup(ctx context.Context, uuid string) (err error) {
	if err := f.enter(ctx, "delete_portgroup", true); err != nil {
		return err
	}
	defer f.site.answer(ctx, SysIronic, "delete_portgroup", &err)
	f.mu.Lock()
	defer f.mu.Unlock()
	pg, ok := f.pgs[uuid]
	if !ok {
		return fmt.Errorf("ironic: 404 Portgroup %s could not be found: %w", uuid, hostforge.ErrNotFound)
	}
	n, err := f.nodeOfChild(pg.NodeUUID)
	if err != nil {
		return err
	}
	for _, p := range f.portsOfNode[pg.NodeUUID] {
		if p.PortgroupUUID == uuid {
			return fmt.Errorf("ironic: 400 Cannot complete the requested action because portgroup %s contains ports: %w", uuid, hostforge.ErrInvalid)
		}
	}
	f.forgetPortgroup(pg)
	kept := f.pgsOfNode[pg.NodeUUID][:0:0]
	for _, q := range f.pgsOfNode[pg.NodeUUID] {
		if q != pg {
			kept = append(kept, q)
		}
	}
	f.pgsOfNode[pg.NodeUUID] = kept
	n.record(f.now(), "delete_portgroup", "%s", pg.Address)
	return nil
}

// DeletedNode is a node the fake deleted, with the writes it had received.
type DeletedNode struct {
	Name   string
	UUID   string
	At     time.Time
	Writes []IronicWrite
}

// Deleted lists the nodes deleted so far, oldest first (test control).
func (f *Ironic) Deleted() []DeletedNode {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]DeletedNode(nil), f.deleted...)
}

// CleanStepsRun lists the clean steps a node has run to the end
// ("interface.step"), from its write log: a deleted node's too, the last
// node of that name first looked up among the live nodes (test control).
func (f *Ironic) CleanStepsRun(name string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var writes []IronicWrite
	if n, err := f.find(name); err == nil {
		writes = n.writes
	} else {
		for i := len(f.deleted) - 1; i >= 0; i-- {
			if f.deleted[i].Name == name {
				writes = f.deleted[i].Writes
				break
			}
		}
	}
	var out []string
	for _, w := range writes {
		if w.Op == "clean_step" {
			out = append(out, w.Detail)
		}
	}
	return out
}
