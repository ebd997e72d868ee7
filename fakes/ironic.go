package fakes

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/ironic"
)

// IronicTiming is how long the fake Ironic's transitions take on the site's
// clock. Zero fields take the defaults noted.
type IronicTiming struct {
	Verify      time.Duration // enroll → manageable, node locked (2 s)
	Inspecting  time.Duration // inspecting, node locked (5 s)
	InspectWait time.Duration // inspect wait: the ramdisk runs (4 min)
	Cleaning    time.Duration // cleaning, node locked (5 s)
	CleanWait   time.Duration // clean wait: clean steps run (10 min)
	Power       time.Duration // a power change, node locked (3 s)
	Deploy      time.Duration // deploying, node locked (10 s)
	// InspectorTimeout is how long an inspection whose ramdisk never
	// reports waits before failing (ironic-inspector's timeout, 1 h).
	InspectorTimeout time.Duration
	// CleanCallbackTimeout is how long clean wait waits for a ramdisk that
	// never calls back (Ironic's clean_callback_timeout, 30 min).
	CleanCallbackTimeout time.Duration
}

func (t IronicTiming) withDefaults() IronicTiming {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.Verify, 2*time.Second)
	def(&t.Inspecting, 5*time.Second)
	def(&t.InspectWait, 4*time.Minute)
	def(&t.Cleaning, 5*time.Second)
	def(&t.CleanWait, 10*time.Minute)
	def(&t.Power, 3*time.Second)
	def(&t.InspectorTimeout, time.Hour)
	def(&t.CleanCallbackTimeout, 30*time.Minute)
	def(&t.Deploy, 10*time.Second)
	return t
}

// Ironic is a fake Ironic instance with the real provision-state machine:
// only Ironic's transitions are accepted (400 otherwise), a node is locked
// (409 "is locked by host") while a transition or power change runs,
// a maintenance node's cleaning hangs in clean wait, a target RAID config is
// accepted only in MANAGEABLE, and inspection stores an inventory built from
// the site's host of the same name (its hardware and its real cabling). It
// implements ironic.Client and passes ironictest.Run.
type Ironic struct {
	Name   string
	Timing IronicTiming
	site   *Site

	mu    sync.Mutex
	seq   int
	nodes map[string]*inode // by UUID
	ports map[string]*ironic.Port
	pgs   map[string]*ironic.Portgroup
	// Indexes, so a fleet of thousands of nodes is not scanned per call.
	byName      map[string]*inode
	portByAddr  map[string]*ironic.Port
	portsOfNode map[string][]*ironic.Port
	pgsOfNode   map[string][]*ironic.Portgroup
	pgByName    map[string]*ironic.Portgroup
	pgByAddr    map[string]*ironic.Portgroup
	// deleted are the nodes DeleteNode removed (ironic_retire.go).
	deleted []DeletedNode
}

// conductor is the host name the fake's locks name.
const conductor = "fake-conductor-1"

type inode struct {
	n         ironic.Node
	busyUntil time.Time // a transition holds the lock until then
	pending   []pendingStep
	// injected faults
	lockUntil   time.Time
	lockHolder  string
	failInspect int
	failClean   int
	failManage  int
	ignorePower int
	inventory   []byte
	writes      []IronicWrite
	// masked is driver_info as reads show it (passwords masked), built
	// once per driver_info (setNode clears it).
	masked map[string]any
}

type pendingStep struct {
	at time.Time
	fn func(now time.Time, n *inode)
}

// IronicWrite is one accepted write to a node, for tests that assert what
// was (never) done to it.
type IronicWrite struct {
	At     time.Time
	Op     string
	Detail string
}

// AddIronic adds (or returns) the fake Ironic instance of that name.
func (s *Site) AddIronic(name string) *Ironic {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Ironic == nil {
		s.Ironic = map[string]*Ironic{}
	}
	if ir, ok := s.Ironic[name]; ok {
		return ir
	}
	ir := &Ironic{Name: name, site: s, nodes: map[string]*inode{}, ports: map[string]*ironic.Port{}, pgs: map[string]*ironic.Portgroup{},
		byName: map[string]*inode{}, portByAddr: map[string]*ironic.Port{}, portsOfNode: map[string][]*ironic.Port{},
		pgsOfNode: map[string][]*ironic.Portgroup{}, pgByName: map[string]*ironic.Portgroup{}, pgByAddr: map[string]*ironic.Portgroup{}}
	s.Ironic[name] = ir
	return ir
}

var _ ironic.Client = (*Ironic)(nil)

func (f *Ironic) enter(ctx context.Context, op string, write bool) error {
	return f.site.enter(ctx, SysIronic, op, write)
}

func (f *Ironic) now() time.Time { return f.site.Clock.Now() }

func (f *Ironic) uuid(kind byte) string {
	f.seq++
	return fmt.Sprintf("%08x-0000-4000-8000-%02x%010x", f.seq, kind, f.seq)
}

// find resolves a name or UUID and advances the node to the current time.
// Callers hold f.mu.
func (f *Ironic) find(ident string) (*inode, error) {
	n := f.nodes[ident]
	if n == nil && ident != "" {
		n = f.byName[ident]
	}
	if n == nil {
		return nil, fmt.Errorf("ironic: Node %s could not be found: %w", ident, hostforge.ErrNotFound)
	}
	f.advance(n)
	return n, nil
}

// advance applies every pending step due by now, in order.
func (f *Ironic) advance(n *inode) {
	now := f.now()
	for len(n.pending) > 0 && !n.pending[0].at.After(now) {
		st := n.pending[0]
		n.pending = n.pending[1:]
		from := n.n.ProvisionState
		st.fn(st.at, n)
		n.moved(from, st.at)
	}
	if !n.busyUntil.After(now) && n.n.Reservation == conductor {
		n.n.Reservation = ""
	}
	if n.lockHolder != "" {
		if n.lockUntil.After(now) {
			n.n.Reservation = n.lockHolder
		} else {
			if n.n.Reservation == n.lockHolder {
				n.n.Reservation = ""
			}
			n.lockHolder = ""
		}
	}
}

// moved stamps provision_updated_at when the provision state changed from
// from, as Ironic does on every provision-state change.
func (n *inode) moved(from string, at time.Time) {
	if n.n.ProvisionState != from {
		n.n.ProvisionUpdatedAt = at
	}
}

func (n *inode) schedule(at time.Time, fn func(now time.Time, n *inode)) {
	n.pending = append(n.pending, pendingStep{at: at, fn: fn})
	sort.SliceStable(n.pending, func(i, j int) bool { return n.pending[i].at.Before(n.pending[j].at) })
}

// lock takes the node's lock for a transition of duration d.
func (n *inode) lock(now time.Time, d time.Duration) {
	n.busyUntil = now.Add(d)
	n.n.Reservation = conductor
}

// checkLock is Ironic's NodeLocked.
func (f *Ironic) checkLock(n *inode) error {
	if n.n.Reservation != "" {
		return fmt.Errorf("ironic: 409 Node %s is locked by host %s, please retry after the current operation is completed: %w",
			n.n.UUID, n.n.Reservation, ironic.ErrNodeLocked)
	}
	return nil
}

func (n *inode) record(now time.Time, op, format string, args ...any) {
	n.writes = append(n.writes, IronicWrite{At: now, Op: op, Detail: fmt.Sprintf(format, args...)})
}

func copyMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// view is the node as the API shows it, secrets masked.
//
// The fake never modifies a map or slice it has shown: every write builds
// the node's new maps and replaces the old ones (copy on write; see
// UpdateNode, SetTraits, SetRAIDConfig, SetProperty). A node read before a
// write therefore keeps what it showed, as a decoded answer would, and a
// read copies nothing — the fleet simulator reads nodes hundreds of
// thousands of times. Callers treat a returned Node as read-only
// (ironic.Client says so).
func (n *inode) view() ironic.Node {
	v := n.n
	if n.masked == nil {
		n.masked = make(map[string]any, len(n.n.DriverInfo))
		for k, val := range n.n.DriverInfo {
			if strings.Contains(k, "password") {
				val = "******"
			}
			n.masked[k] = val
		}
	}
	v.DriverInfo = n.masked
	return v
}

// setNode replaces the node's fields; the masked driver_info is rebuilt on
// the next read. Every write to driver_info goes through it.
func (n *inode) setNode(next ironic.Node) {
	n.n = next
	n.masked = nil
}

// GetNode reads a node by name or UUID: every field, or only the fields
// named (Ironic's ?fields=; the others are left zero), a name Ironic does
// not know being a 400, as Ironic answers it.
func (f *Ironic) GetNode(ctx context.Context, ident string, fields ...string) (ironic.Node, error) {
	if err := f.enter(ctx, "get_node", false); err != nil {
		return ironic.Node{}, err
	}
	if err := checkNodeFields(fields); err != nil {
		return ironic.Node{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.find(ident)
	if err != nil {
		return ironic.Node{}, err
	}
	return selectNodeFields(n.view(), fields), nil
}

// defaultInterfaces are what the fake picks for interfaces left unset.
var defaultInterfaces = map[string]map[string]string{
	"redfish":       {"boot": "ipxe", "deploy": "direct", "inspect": "no-inspect", "management": "redfish", "power": "redfish", "raid": "no-raid", "network": "flat", "vendor": "redfish", "bios": "no-bios", "console": "no-console"},
	"idrac":         {"boot": "ipxe", "deploy": "direct", "inspect": "no-inspect", "management": "idrac-redfish", "power": "idrac-redfish", "raid": "no-raid", "network": "flat", "vendor": "idrac-redfish", "bios": "no-bios", "console": "no-console"},
	"ipmi":          {"boot": "ipxe", "deploy": "direct", "inspect": "no-inspect", "management": "ipmitool", "power": "ipmitool", "raid": "no-raid", "network": "flat", "vendor": "ipmitool", "bios": "no-bios", "console": "no-console"},
	"fake-hardware": {"boot": "fake", "deploy": "fake", "inspect": "fake", "management": "fake", "power": "fake", "raid": "fake", "network": "noop", "vendor": "fake", "bios": "fake", "console": "fake"},
}

// CreateNode creates a node in ENROLL, powered off.
func (f *Ironic) CreateNode(ctx context.Context, c ironic.NodeCreate) (_ ironic.Node, err error) {
	if err := f.enter(ctx, "create_node", true); err != nil {
		return ironic.Node{}, err
	}
	defer f.site.answer(ctx, SysIronic, "create_node", &err)
	f.mu.Lock()
	defer f.mu.Unlock()
	defs, ok := defaultInterfaces[c.Driver]
	if !ok {
		return ironic.Node{}, fmt.Errorf("ironic: 400 Could not find the following driver(s) or hardware type(s): %s: %w", c.Driver, hostforge.ErrInvalid)
	}
	if c.Name != "" && f.byName[c.Name] != nil {
		return ironic.Node{}, fmt.Errorf("ironic: 409 A node with name %s already exists: %w", c.Name, hostforge.ErrConflict)
	}
	ifs := copyMap(defs)
	for k, v := range c.Interfaces {
		ifs[k] = v
	}
	n := &inode{n: ironic.Node{
		UUID: f.uuid(1), Name: c.Name, Driver: c.Driver, ProvisionState: ironic.StateEnroll, PowerState: ironic.PowerOff,
		Owner: c.Owner, Lessee: c.Lessee, ResourceClass: c.ResourceClass,
		Properties: cloneJSON(c.Properties), DriverInfo: cloneJSON(c.DriverInfo), Interfaces: ifs,
	}}
	if n.n.Properties == nil {
		n.n.Properties = map[string]any{}
	}
	if n.n.DriverInfo == nil {
		n.n.DriverInfo = map[string]any{}
	}
	f.nodes[n.n.UUID] = n
	if c.Name != "" {
		f.byName[c.Name] = n
	}
	n.record(f.now(), "create_node", "driver %s", c.Driver)
	return n.view(), nil
}

// interfaceStates are where Ironic accepts a driver or interface change.
var interfaceStates = map[string]bool{
	ironic.StateEnroll: true, ironic.StateManageable: true, ironic.StateAvailable: true,
	ironic.StateInspecting: true, ironic.StateInspectWait: true,
}

// UpdateNode applies a JSON patch. Supported paths: /driver,
// /<iface>_interface, /driver_info[/k], /properties[/k], /instance_uuid,
// /resource_class, /owner, /lessee, /name.
func (f *Ironic) UpdateNode(ctx context.Context, ident string, ops []ironic.PatchOp) (_ ironic.Node, err error) {
	n, unlock, err := f.writeNode(ctx, "update_node", ident)
	if err != nil {
		return ironic.Node{}, err
	}
	defer f.site.answer(ctx, SysIronic, "update_node", &err)
	defer unlock()
	next := n.n
	next.DriverInfo = cloneJSON(n.n.DriverInfo)
	next.Properties = cloneJSON(n.n.Properties)
	next.Interfaces = copyMap(n.n.Interfaces)
	var paths []string
	for _, op := range ops {
		if err := applyNodeOp(&next, op); err != nil {
			return ironic.Node{}, err
		}
		paths = append(paths, op.Op+" "+op.Path)
	}
	ifaceChanged := next.Driver != n.n.Driver
	for k, v := range next.Interfaces {
		if n.n.Interfaces[k] != v {
			ifaceChanged = true
		}
	}
	if ifaceChanged && !interfaceStates[n.n.ProvisionState] {
		return ironic.Node{}, fmt.Errorf("ironic: 400 The node %s is in %q; the driver and hardware interfaces can only be changed in enroll, manageable, available or during inspection: %w",
			n.n.UUID, n.n.ProvisionState, hostforge.ErrInvalid)
	}
	if _, ok := defaultInterfaces[next.Driver]; !ok {
		return ironic.Node{}, fmt.Errorf("ironic: 400 unknown hardware type %s: %w", next.Driver, hostforge.ErrInvalid)
	}
	if next.Name != n.n.Name {
		if next.Name != "" && f.byName[next.Name] != nil {
			return ironic.Node{}, fmt.Errorf("ironic: 409 A node with name %s already exists: %w", next.Name, hostforge.ErrConflict)
		}
		delete(f.byName, n.n.Name)
		if next.Name != "" {
			f.byName[next.Name] = n
		}
	}
	n.setNode(next)
	n.record(f.now(), "update_node", "%s", strings.Join(paths, ", "))
	return n.view(), nil
}

func applyNodeOp(n *ironic.Node, op ironic.PatchOp) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("ironic: 400 "+format+": %w", append(args, hostforge.ErrInvalid)...)
	}
	if op.Op != "add" && op.Op != "replace" && op.Op != "remove" {
		return bad("invalid patch op %q", op.Op)
	}
	parts := strings.SplitN(strings.TrimPrefix(op.Path, "/"), "/", 2)
	str := func() (string, error) {
		s, ok := op.Value.(string)
		if !ok && op.Op != "remove" {
			return "", bad("%s must be a string", op.Path)
		}
		return s, nil
	}
	sub := func(m map[string]any) error {
		if len(parts) == 1 {
			if op.Op == "remove" {
				for k := range m {
					delete(m, k)
				}
				return nil
			}
			obj, ok := normalizeJSON(op.Value).(map[string]any)
			if !ok {
				return bad("%s must be an object", op.Path)
			}
			for k := range m {
				delete(m, k)
			}
			for k, v := range obj {
				m[k] = v
			}
			return nil
		}
		if op.Op == "remove" {
			if _, ok := m[parts[1]]; !ok {
				return bad("can't remove non-existent object '%s'", parts[1])
			}
			delete(m, parts[1])
			return nil
		}
		m[parts[1]] = normalizeJSON(op.Value)
		return nil
	}
	switch {
	case parts[0] == "driver":
		s, err := str()
		n.Driver = s
		return err
	case strings.HasSuffix(parts[0], "_interface"):
		s, err := str()
		n.Interfaces[strings.TrimSuffix(parts[0], "_interface")] = s
		return err
	case parts[0] == "driver_info":
		return sub(n.DriverInfo)
	case parts[0] == "properties":
		return sub(n.Properties)
	case parts[0] == "instance_uuid":
		s, err := str()
		n.InstanceUUID = s
		return err
	case parts[0] == "resource_class":
		s, err := str()
		n.ResourceClass = s
		return err
	case parts[0] == "owner":
		s, err := str()
		n.Owner = s
		return err
	case parts[0] == "lessee":
		s, err := str()
		n.Lessee = s
		return err
	case parts[0] == "name":
		s, err := str()
		n.Name = s
		return err
	}
	return bad("unsupported patch path %s", op.Path)
}

func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// writeNode starts a counted write on a node: it takes the fake's lock
// (released by the returned unlock), finds the node and refuses it with a
// 409 NodeLocked while another operation holds it, as Ironic does.
func (f *Ironic) writeNode(ctx context.Context, op, ident string) (*inode, func(), error) {
	if err := f.enter(ctx, op, true); err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	n, err := f.find(ident)
	if err == nil {
		err = f.checkLock(n)
	}
	if err != nil {
		f.mu.Unlock()
		return nil, nil, err
	}
	return n, f.mu.Unlock, nil
}

// ChangeProvisionState runs Ironic's state machine for the actions manage,
// inspect, provide, abort and active (deploy).
func (f *Ironic) ChangeProvisionState(ctx context.Context, ident, action string) (err error) {
	n, unlock, err := f.writeNode(ctx, "provision", ident)
	if err != nil {
		return err
	}
	defer f.site.answer(ctx, SysIronic, "provision", &err)
	defer unlock()
	t := f.Timing.withDefaults()
	now := f.now()
	from := n.n.ProvisionState
	invalid := fmt.Errorf("ironic: 400 The requested action %q can not be performed on node %q while it is in state %q: %w",
		action, n.n.UUID, from, hostforge.ErrInvalid)
	set := func(state, target string) {
		n.n.ProvisionState, n.n.TargetProvisionState = state, target
	}
	switch action {
	case ironic.ActionManage:
		switch from {
		case ironic.StateEnroll:
			set(ironic.StateVerifying, ironic.StateManageable)
			n.lock(now, t.Verify)
			n.schedule(now.Add(t.Verify), func(_ time.Time, n *inode) {
				if n.n.DriverInfo == nil || len(n.n.DriverInfo) == 0 {
					set(ironic.StateEnroll, "")
					n.n.LastError = "Failed to validate power driver interface: missing driver_info"
					return
				}
				n.n.LastError = ""
				set(ironic.StateManageable, "")
			})
		case ironic.StateInspectFailed, ironic.StateCleanFailed, ironic.StateAvailable:
			if n.failManage > 0 && from != ironic.StateAvailable {
				n.failManage--
				return fmt.Errorf("ironic: 503 No conductor is available to manage node %s (its power interface failed validation): %w", n.n.UUID, hostforge.ErrUnavailable)
			}
			set(ironic.StateManageable, "")
		default:
			return invalid
		}
	case ironic.ActionInspect:
		if from != ironic.StateManageable && from != ironic.StateInspectFailed {
			return invalid
		}
		set(ironic.StateInspecting, ironic.StateManageable)
		n.n.PowerState = ironic.PowerOff // rebooted into the ramdisk
		n.lock(now, t.Inspecting)
		n.schedule(now.Add(t.Inspecting), func(at time.Time, n *inode) {
			set(ironic.StateInspectWait, ironic.StateManageable)
			if n.ignorePower > 0 {
				n.ignorePower--
				return // never powers on: the inspection hangs until aborted
			}
			n.n.PowerState = ironic.PowerOn
			n.schedule(at.Add(t.InspectWait), func(_ time.Time, n *inode) {
				if n.n.ProvisionState != ironic.StateInspectWait {
					return // aborted meanwhile
				}
				if f.isolated(n) {
					// The ramdisk never reaches the network: the inspector
					// waits for data until its timeout.
					n.schedule(at.Add(t.InspectorTimeout), func(_ time.Time, n *inode) {
						if n.n.ProvisionState == ironic.StateInspectWait {
							set(ironic.StateInspectFailed, "")
							n.n.LastError = "ironic-inspector inspection failed: Introspection timeout"
						}
					})
					return
				}
				n.n.PowerState = ironic.PowerOff
				if n.failInspect > 0 {
					n.failInspect--
					set(ironic.StateInspectFailed, "")
					n.n.LastError = "ironic-inspector inspection failed: injected failure"
					return
				}
				n.inventory = f.inventoryFor(n)
				n.n.LastError = ""
				set(ironic.StateManageable, "")
			})
		})
	case ironic.ActionProvide:
		if from != ironic.StateManageable {
			return invalid
		}
		set(ironic.StateCleaning, ironic.StateAvailable)
		n.n.PowerState = ironic.PowerOff // rebooted into the ramdisk
		n.lock(now, t.Cleaning)
		n.schedule(now.Add(t.Cleaning), func(at time.Time, n *inode) {
			set(ironic.StateCleanWait, ironic.StateAvailable)
			if n.ignorePower > 0 {
				n.ignorePower--
				return
			}
			n.n.PowerState = ironic.PowerOn
			var finish func(at time.Time, n *inode)
			finish = func(at time.Time, n *inode) {
				if n.n.ProvisionState != ironic.StateCleanWait {
					return
				}
				if n.n.Maintenance {
					// Ironic skips clean steps on a maintenance node: hang.
					n.schedule(at.Add(t.CleanWait), finish)
					return
				}
				if f.isolated(n) {
					// The ramdisk never calls back: cleaning times out.
					n.schedule(at.Add(t.CleanCallbackTimeout), func(_ time.Time, n *inode) {
						if n.n.ProvisionState == ironic.StateCleanWait {
							set(ironic.StateCleanFailed, "")
							n.n.LastError = "Timeout reached while cleaning the node. Please check if the ramdisk responsible for the cleaning is running on the node."
							n.n.Maintenance, n.n.MaintenanceReason = true, "clean failure"
						}
					})
					return
				}
				n.n.PowerState = ironic.PowerOff
				if n.failClean > 0 {
					n.failClean--
					set(ironic.StateCleanFailed, "")
					n.n.LastError = "Clean step erase_devices_metadata failed: injected failure"
					n.n.Maintenance, n.n.MaintenanceReason = true, "clean failure"
					return
				}
				n.n.LastError = ""
				set(ironic.StateAvailable, "")
			}
			n.schedule(at.Add(t.CleanWait), finish)
		})
	case ironic.ActionAbort:
		switch from {
		case ironic.StateInspectWait:
			set(ironic.StateInspectFailed, "")
			n.n.LastError = "inspection aborted by request"
		case ironic.StateCleanWait:
			set(ironic.StateCleanFailed, "")
			n.n.LastError = "cleaning aborted by request"
		default:
			return invalid
		}
	case ironic.ActionActive:
		if from != ironic.StateAvailable {
			return invalid
		}
		set(ironic.StateDeploying, ironic.StateActive)
		n.lock(now, t.Deploy)
		n.schedule(now.Add(t.Deploy), func(_ time.Time, n *inode) {
			n.n.PowerState = ironic.PowerOn
			set(ironic.StateActive, "")
		})
	default:
		return fmt.Errorf("ironic: 400 unknown provision action %q: %w", action, hostforge.ErrInvalid)
	}
	n.moved(from, now)
	n.record(now, "provision", "%s: %s → %s", action, from, n.n.ProvisionState)
	return nil
}

// ChangePowerState powers a node on or off; the lock is held while it changes.
func (f *Ironic) ChangePowerState(ctx context.Context, ident, target string) (err error) {
	n, unlock, err := f.writeNode(ctx, "power", ident)
	if err != nil {
		return err
	}
	defer f.site.answer(ctx, SysIronic, "power", &err)
	defer unlock()
	if target != ironic.PowerOn && target != ironic.PowerOff {
		return fmt.Errorf("ironic: 400 invalid power target %q: %w", target, hostforge.ErrInvalid)
	}
	now := f.now()
	d := f.Timing.withDefaults().Power
	n.lock(now, d)
	n.n.TargetPowerState = target
	ignore := target == ironic.PowerOn && n.ignorePower > 0
	if ignore {
		n.ignorePower--
	}
	n.schedule(now.Add(d), func(_ time.Time, n *inode) {
		n.n.TargetPowerState = ""
		if !ignore {
			n.n.PowerState = target
		}
	})
	n.record(now, "power", "%s", target)
	return nil
}

// SetMaintenance sets or clears maintenance.
func (f *Ironic) SetMaintenance(ctx context.Context, ident string, on bool, reason string) (err error) {
	n, unlock, err := f.writeNode(ctx, "maintenance", ident)
	if err != nil {
		return err
	}
	defer f.site.answer(ctx, SysIronic, "maintenance", &err)
	defer unlock()
	n.n.Maintenance = on
	n.n.MaintenanceReason = ""
	if on {
		n.n.MaintenanceReason = reason
	}
	n.record(f.now(), "maintenance", "%v %s", on, reason)
	return nil
}

// SetTraits replaces the node's traits.
func (f *Ironic) SetTraits(ctx context.Context, ident string, traits []string) (err error) {
	n, unlock, err := f.writeNode(ctx, "traits", ident)
	if err != nil {
		return err
	}
	defer f.site.answer(ctx, SysIronic, "traits", &err)
	defer unlock()
	seen := map[string]bool{}
	var out []string
	for _, t := range traits {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	n.n.Traits = out
	n.record(f.now(), "traits", "%v", out)
	return nil
}

// SetRAIDConfig sets the target RAID config; only in MANAGEABLE.
func (f *Ironic) SetRAIDConfig(ctx context.Context, ident string, cfg map[string]any) (err error) {
	n, unlock, err := f.writeNode(ctx, "raid", ident)
	if err != nil {
		return err
	}
	defer f.site.answer(ctx, SysIronic, "raid", &err)
	defer unlock()
	if n.n.ProvisionState != ironic.StateManageable {
		return fmt.Errorf("ironic: 400 the target RAID configuration of node %s can only be set in manageable, not %q: %w",
			n.n.UUID, n.n.ProvisionState, hostforge.ErrInvalid)
	}
	n.n.TargetRAIDConfig = cloneJSON(cfg)
	n.record(f.now(), "raid", "target RAID config set")
	return nil
}

// Inventory returns the stored inspection data ({"inventory", "plugin_data"}).
func (f *Ironic) Inventory(ctx context.Context, ident string) ([]byte, error) {
	if err := f.enter(ctx, "inventory", false); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.find(ident)
	if err != nil {
		return nil, err
	}
	if n.inventory == nil {
		return nil, fmt.Errorf("ironic: 404 Inventory not found for node %s: %w", n.n.UUID, hostforge.ErrNotFound)
	}
	return append([]byte(nil), n.inventory...), nil
}

// inventoryFor builds the inventory an inspection of n finds: from the
// site's host of the node's name, else from the node's ports.
// isolated reports whether the node's host has no frontend link up at all
// (dead optics, switch ports down): its ramdisk can reach neither the
// inspector nor the conductor, so inspection and cleaning hang until their
// timeouts, as they do in a real deployment.
func (f *Ironic) isolated(n *inode) bool {
	h, ok := f.site.Host(n.n.Name)
	if !ok || len(h.NICs) == 0 {
		return false
	}
	for _, nic := range h.NICs {
		if nic.Link != "down" {
			return false
		}
	}
	return true
}

func (f *Ironic) inventoryFor(n *inode) []byte {
	if h, ok := f.site.Host(n.n.Name); ok {
		return InventoryJSON(h)
	}
	var macs []string
	for _, p := range f.portsOfNode[n.n.UUID] {
		macs = append(macs, p.Address)
	}
	sort.Strings(macs)
	h := &Host{Name: n.n.Name, Hardware: DefaultHardware("", "")}
	for i, m := range macs {
		h.NICs = append(h.NICs, PhysNIC{Name: fmt.Sprintf("eth%d", i), MAC: m, Link: "up"})
	}
	return InventoryJSON(h)
}

// ListPorts lists a node's ports.
func (f *Ironic) ListPorts(ctx context.Context, nodeUUID string) ([]ironic.Port, error) {
	if err := f.enter(ctx, "list_ports", false); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ironic.Port
	for _, p := range f.portsOfNode[nodeUUID] {
		out = append(out, copyPort(*p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out, nil
}

func copyPort(p ironic.Port) ironic.Port {
	p.LocalLinkConnection = copyMap(p.LocalLinkConnection)
	return p
}

// canonMAC is the canonical form of an Ethernet (EUI-48) MAC, as Ironic
// requires of port addresses.
func canonMAC(s string) (string, bool) {
	m, ok := hostforge.NormalizeMAC(s)
	if !ok || len(m) != len("00:00:00:00:00:00") {
		return "", false
	}
	return m, true
}

// PortByAddress finds a port by MAC.
func (f *Ironic) PortByAddress(ctx context.Context, mac string) (ironic.Port, error) {
	if err := f.enter(ctx, "port_by_address", false); err != nil {
		return ironic.Port{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, _ := canonMAC(mac)
	if p := f.portByAddr[m]; p != nil {
		return copyPort(*p), nil
	}
	return ironic.Port{}, fmt.Errorf("ironic: no port with address %s: %w", mac, hostforge.ErrNotFound)
}

// CreatePort creates a port. A duplicate MAC is a 409; a second PXE-enabled
// port in one portgroup... is allowed, as in Ironic: the phases enforce PXE
// on exactly one port.
func (f *Ironic) CreatePort(ctx context.Context, p ironic.Port) (_ ironic.Port, err error) {
	if err := f.enter(ctx, "create_port", true); err != nil {
		return ironic.Port{}, err
	}
	defer f.site.answer(ctx, SysIronic, "create_port", &err)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.find(p.NodeUUID)
	if err != nil {
		return ironic.Port{}, fmt.Errorf("ironic: 400 node %s for the port does not exist: %w", p.NodeUUID, hostforge.ErrInvalid)
	}
	if err := f.checkLock(n); err != nil {
		return ironic.Port{}, err
	}
	m, ok := canonMAC(p.Address)
	if !ok {
		return ironic.Port{}, fmt.Errorf("ironic: 400 %q is not a valid MAC address: %w", p.Address, hostforge.ErrInvalid)
	}
	if f.portByAddr[m] != nil {
		return ironic.Port{}, fmt.Errorf("ironic: 409 A port with MAC address %s already exists: %w", m, hostforge.ErrConflict)
	}
	if p.PortgroupUUID != "" {
		pg, ok := f.pgs[p.PortgroupUUID]
		if !ok || pg.NodeUUID != n.n.UUID {
			return ironic.Port{}, fmt.Errorf("ironic: 409 portgroup %s does not belong to node %s: %w", p.PortgroupUUID, n.n.UUID, hostforge.ErrConflict)
		}
	}
	p.UUID, p.Address, p.NodeUUID = f.uuid(2), m, n.n.UUID
	p.LocalLinkConnection = copyMap(p.LocalLinkConnection)
	cp := p
	f.ports[p.UUID] = &cp
	f.portByAddr[m] = &cp
	f.portsOfNode[cp.NodeUUID] = append(f.portsOfNode[cp.NodeUUID], &cp)
	n.record(f.now(), "create_port", "%s pxe=%v", m, p.PXEEnabled)
	return copyPort(p), nil
}

// UpdatePort patches /local_link_connection, /pxe_enabled or /portgroup_uuid.
func (f *Ironic) UpdatePort(ctx context.Context, uuid string, ops []ironic.PatchOp) (_ ironic.Port, err error) {
	if err := f.enter(ctx, "update_port", true); err != nil {
		return ironic.Port{}, err
	}
	defer f.site.answer(ctx, SysIronic, "update_port", &err)
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.ports[uuid]
	if !ok {
		return ironic.Port{}, fmt.Errorf("ironic: Port %s could not be found: %w", uuid, hostforge.ErrNotFound)
	}
	n, err := f.find(p.NodeUUID)
	if err != nil {
		return ironic.Port{}, err
	}
	if err := f.checkLock(n); err != nil {
		return ironic.Port{}, err
	}
	next := copyPort(*p)
	for _, op := range ops {
		switch {
		case op.Path == "/local_link_connection":
			next.LocalLinkConnection = nil
			if op.Op != "remove" {
				b, _ := json.Marshal(op.Value)
				var m map[string]string
				if json.Unmarshal(b, &m) != nil {
					return ironic.Port{}, fmt.Errorf("ironic: 400 local_link_connection must be an object of strings: %w", hostforge.ErrInvalid)
				}
				next.LocalLinkConnection = m
			}
		case op.Path == "/pxe_enabled":
			b, ok := op.Value.(bool)
			if !ok {
				return ironic.Port{}, fmt.Errorf("ironic: 400 pxe_enabled must be a boolean: %w", hostforge.ErrInvalid)
			}
			next.PXEEnabled = b
		case op.Path == "/portgroup_uuid":
			s, _ := op.Value.(string)
			next.PortgroupUUID = s
		default:
			return ironic.Port{}, fmt.Errorf("ironic: 400 unsupported port patch path %s: %w", op.Path, hostforge.ErrInvalid)
		}
	}
	*p = next
	n.record(f.now(), "update_port", "%s", p.Address)
	return copyPort(next), nil
}

// ListPortgroups lists a node's portgroups.
func (f *Ironic) ListPortgroups(ctx context.Context, nodeUUID string) ([]ironic.Portgroup, error) {
	if err := f.enter(ctx, "list_portgroups", false); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ironic.Portgroup
	for _, pg := range f.pgsOfNode[nodeUUID] {
		c := *pg
		c.Properties = cloneJSON(pg.Properties)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UUID < out[j].UUID })
	return out, nil
}

// CreatePortgroup creates a portgroup; a duplicate name or address is a 409.
func (f *Ironic) CreatePortgroup(ctx context.Context, pg ironic.Portgroup) (_ ironic.Portgroup, err error) {
	if err := f.enter(ctx, "create_portgroup", true); err != nil {
		return ironic.Portgroup{}, err
	}
	defer f.site.answer(ctx, SysIronic, "create_portgroup", &err)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.find(pg.NodeUUID)
	if err != nil {
		return ironic.Portgroup{}, fmt.Errorf("ironic: 400 node %s for the portgroup does not exist: %w", pg.NodeUUID, hostforge.ErrInvalid)
	}
	if err := f.checkLock(n); err != nil {
		return ironic.Portgroup{}, err
	}
	if pg.Address != "" {
		m, ok := canonMAC(pg.Address)
		if !ok {
			return ironic.Portgroup{}, fmt.Errorf("ironic: 400 %q is not a valid MAC address: %w", pg.Address, hostforge.ErrInvalid)
		}
		pg.Address = m
	}
	if (pg.Name != "" && f.pgByName[pg.Name] != nil) || (pg.Address != "" && f.pgByAddr[pg.Address] != nil) {
		return ironic.Portgroup{}, fmt.Errorf("ironic: 409 A portgroup with name %q or MAC address %s already exists: %w", pg.Name, pg.Address, hostforge.ErrConflict)
	}
	pg.UUID, pg.NodeUUID = f.uuid(3), n.n.UUID
	pg.Properties = cloneJSON(pg.Properties)
	c := pg
	f.pgs[pg.UUID] = &c
	f.pgsOfNode[c.NodeUUID] = append(f.pgsOfNode[c.NodeUUID], &c)
	if c.Name != "" {
		f.pgByName[c.Name] = &c
	}
	if c.Address != "" {
		f.pgByAddr[c.Address] = &c
	}
	n.record(f.now(), "create_portgroup", "%s mode=%s", pg.Address, pg.Mode)
	return pg, nil
}

// --- test controls: none of these count as calls ---

func (f *Ironic) node(name string) *inode {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.find(name)
	if err != nil {
		panic("fakes: no Ironic node " + name)
	}
	return n
}

func (f *Ironic) with(name string, fn func(n *inode)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.find(name)
	if err != nil {
		panic("fakes: no Ironic node " + name)
	}
	fn(n)
}

// Node returns a node as the API shows it, and whether it exists.
func (f *Ironic) Node(name string) (ironic.Node, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.find(name)
	if err != nil {
		return ironic.Node{}, false
	}
	return n.view(), true
}

// Ports lists a node's ports, by address.
func (f *Ironic) Ports(name string) []ironic.Port {
	uuid := f.node(name).n.UUID
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ironic.Port
	for _, p := range f.portsOfNode[uuid] {
		out = append(out, copyPort(*p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out
}

// Writes lists the writes a node has received.
func (f *Ironic) Writes(name string) []IronicWrite {
	var out []IronicWrite
	f.with(name, func(n *inode) { out = append(out, n.writes...) })
	return out
}

// DriverInfoSecret returns a driver_info value unmasked (for tests that
// check which credential Ironic was given).
func (f *Ironic) DriverInfoSecret(name, key string) string {
	var s string
	f.with(name, func(n *inode) { s, _ = n.n.DriverInfo[key].(string) })
	return s
}

// SetState puts a node straight into a provision state (no transition).
func (f *Ironic) SetState(name, state string) {
	f.with(name, func(n *inode) {
		if n.n.ProvisionState != state {
			n.n.ProvisionUpdatedAt = f.now()
		}
		n.n.ProvisionState, n.n.TargetProvisionState = state, ""
		n.pending, n.busyUntil = nil, time.Time{}
		if n.n.Reservation == conductor {
			n.n.Reservation = ""
		}
	})
}

// SetInstance gives a node an instance_uuid (Nova owning it).
func (f *Ironic) SetInstance(name, instance string) {
	f.with(name, func(n *inode) { n.n.InstanceUUID = instance })
}

// SetPower sets the power state directly.
func (f *Ironic) SetPower(name, state string) {
	f.with(name, func(n *inode) { n.n.PowerState = state })
}

// SetMaintenanceFlag sets maintenance directly.
func (f *Ironic) SetMaintenanceFlag(name string, on bool, reason string) {
	f.with(name, func(n *inode) { n.n.Maintenance, n.n.MaintenanceReason = on, reason })
}

// SetInventory stores inspection data directly.
func (f *Ironic) SetInventory(name string, b []byte) {
	f.with(name, func(n *inode) { n.inventory = append([]byte(nil), b...) })
}

// SetProperty sets one node property directly (nil deletes it).
func (f *Ironic) SetProperty(name, key string, v any) {
	f.with(name, func(n *inode) {
		props := cloneJSON(n.n.Properties) // a shown map is never modified (view)
		if v == nil {
			delete(props, key)
		} else {
			props[key] = normalizeJSON(v)
		}
		n.n.Properties = props
	})
}

// FailInspection makes the node's next k inspections end in inspect failed.
func (f *Ironic) FailInspection(name string, k int) {
	f.with(name, func(n *inode) { n.failInspect += k })
}

// FailCleaning makes the node's next k cleanings end in clean failed (with
// maintenance set, as Ironic does).
func (f *Ironic) FailCleaning(name string, k int) { f.with(name, func(n *inode) { n.failClean += k }) }

// FailManage makes the node's next k manage requests from a failed state
// (the recovery of inspect failed or clean failed) fail before any effect
// with a 503, as when no conductor can take the node.
func (f *Ironic) FailManage(name string, k int) { f.with(name, func(n *inode) { n.failManage += k }) }

// IgnorePowerOn makes the node's next k power-ons (requested, or by an
// inspection or cleaning) never happen: a power-on timeout.
func (f *Ironic) IgnorePowerOn(name string, k int) {
	f.with(name, func(n *inode) { n.ignorePower += k })
}

// HoldLock makes another conductor operation hold the node's lock for d.
func (f *Ironic) HoldLock(name, holder string, d time.Duration) {
	f.with(name, func(n *inode) {
		n.lockHolder, n.lockUntil = holder, f.now().Add(d)
		n.n.Reservation = holder
	})
}
