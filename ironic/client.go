package ironic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
)

// Provision states the phases read (Ironic's own spelling).
const (
	StateEnroll        = "enroll"
	StateVerifying     = "verifying"
	StateManageable    = "manageable"
	StateInspecting    = "inspecting"
	StateInspectWait   = "inspect wait"
	StateInspectFailed = "inspect failed"
	StateCleaning      = "cleaning"
	StateCleanWait     = "clean wait"
	StateCleanFailed   = "clean failed"
	StateAvailable     = "available"
	StateDeploying     = "deploying"
	StateDeployWait    = "wait call-back"
	StateActive        = "active"
	StateDeployFailed  = "deploy failed"
	StateError         = "error"
	StateDeleting      = "deleting"
)

// Provision actions (the "target" of PUT /v1/nodes/{node}/states/provision).
const (
	ActionManage  = "manage"
	ActionInspect = "inspect"
	ActionProvide = "provide"
	ActionAbort   = "abort"
	// ActionActive deploys; the phases never use it, the fake and the contract
	// suite do, to build a Nova-owned node.
	ActionActive = "active"
)

// Power states and targets.
const (
	PowerOn  = "power on"
	PowerOff = "power off"
)

// Node is the part of an Ironic node the phases read.
type Node struct {
	UUID                 string `json:"uuid"`
	Name                 string `json:"name"`
	Driver               string `json:"driver"`
	ProvisionState       string `json:"provision_state"`
	TargetProvisionState string `json:"target_provision_state,omitempty"`
	// ProvisionUpdatedAt is when the provision state last changed, on
	// Ironic's clock (zero: never, or not read).
	ProvisionUpdatedAt time.Time `json:"provision_updated_at,omitzero"`
	PowerState         string    `json:"power_state,omitempty"`
	TargetPowerState   string    `json:"target_power_state,omitempty"`
	Maintenance        bool      `json:"maintenance"`
	MaintenanceReason  string    `json:"maintenance_reason,omitempty"`
	// InstanceUUID is set when Nova (or another scheduler) owns the node.
	InstanceUUID string `json:"instance_uuid,omitempty"`
	// Reservation is the host holding the node's lock, "" when unlocked.
	Reservation      string         `json:"reservation,omitempty"`
	LastError        string         `json:"last_error,omitempty"`
	Owner            string         `json:"owner,omitempty"`
	Lessee           string         `json:"lessee,omitempty"`
	ResourceClass    string         `json:"resource_class,omitempty"`
	Properties       map[string]any `json:"properties,omitempty"`
	DriverInfo       map[string]any `json:"driver_info,omitempty"`
	TargetRAIDConfig map[string]any `json:"target_raid_config,omitempty"`
	Traits           []string       `json:"traits,omitempty"`
	// Interfaces are the hardware interfaces by short name: boot, deploy,
	// inspect, management, power, raid, network, vendor, bios, console,
	// rescue, storage.
	Interfaces map[string]string `json:"interfaces,omitempty"`
}

// HasTrait reports whether the node carries the trait.
func (n Node) HasTrait(t string) bool {
	for _, x := range n.Traits {
		if x == t {
			return true
		}
	}
	return false
}

// NodeCreate is the body of a node creation.
type NodeCreate struct {
	Name          string            `json:"name"`
	Driver        string            `json:"driver"`
	Interfaces    map[string]string `json:"interfaces,omitempty"`
	DriverInfo    map[string]any    `json:"driver_info,omitempty"`
	Properties    map[string]any    `json:"properties,omitempty"`
	ResourceClass string            `json:"resource_class,omitempty"`
	Owner         string            `json:"owner,omitempty"`
	Lessee        string            `json:"lessee,omitempty"`
}

// PatchOp is one JSON-patch operation (RFC 6902) on a node or a port.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Add, Replace and Remove build patch operations.
func Add(path string, v any) PatchOp     { return PatchOp{Op: "add", Path: path, Value: v} }
func Replace(path string, v any) PatchOp { return PatchOp{Op: "replace", Path: path, Value: v} }
func Remove(path string) PatchOp         { return PatchOp{Op: "remove", Path: path} }

// Port is an Ironic port: one NIC of a node.
type Port struct {
	UUID          string `json:"uuid,omitempty"`
	NodeUUID      string `json:"node_uuid"`
	PortgroupUUID string `json:"portgroup_uuid,omitempty"`
	Address       string `json:"address"`
	PXEEnabled    bool   `json:"pxe_enabled"`
	// LocalLinkConnection is switch_id, port_id and switch_info; empty when unknown.
	LocalLinkConnection map[string]string `json:"local_link_connection,omitempty"`
}

// Portgroup is an Ironic portgroup: the bond of a node's NICs.
type Portgroup struct {
	UUID       string         `json:"uuid,omitempty"`
	NodeUUID   string         `json:"node_uuid"`
	Name       string         `json:"name,omitempty"`
	Address    string         `json:"address,omitempty"`
	Mode       string         `json:"mode,omitempty"`
	Properties map[string]any `json:"properties,omitempty"`
}

// Client is what the phases need from Ironic. Nodes are named by name or
// UUID. Implementations return, wrapped:
//   - ErrNodeLocked for a 409 whose message says the node "is locked by host";
//   - hostforge.ErrNotFound (404), ErrConflict (other 409s: duplicate MAC or
//     name, portgroup conflicts), ErrInvalid (400, including an invalid
//     provision-state transition), ErrUnauthorized (401/403), ErrUnavailable
//     (5xx, timeouts).
//
// Provision and power actions are asynchronous, as in Ironic: they return
// once accepted, and the caller reads the node to see where it went.
//
// A returned Node is read-only: its maps and slices may be shared with
// later reads (the fake shares them until a write replaces them), so a
// caller that needs a changed copy makes one.
//
// GetNode reads only the fields named, by their API names (Ironic's
// ?fields=, e.g. "provision_state", "raid_interface"); none reads every
// field. A field not asked for is left zero, as Ironic leaves it out, and
// the phases never read one they did not ask for; a name Ironic does not
// know is ErrInvalid, as Ironic answers it (400).
type Client interface {
	GetNode(ctx context.Context, ident string, fields ...string) (Node, error)
	CreateNode(ctx context.Context, n NodeCreate) (Node, error)
	UpdateNode(ctx context.Context, ident string, ops []PatchOp) (Node, error)
	// ChangeProvisionState requests a provision action (ActionManage, ...).
	ChangeProvisionState(ctx context.Context, ident, action string) error
	// ChangePowerState requests PowerOn or PowerOff.
	ChangePowerState(ctx context.Context, ident, target string) error
	SetMaintenance(ctx context.Context, ident string, on bool, reason string) error
	// SetTraits replaces the node's traits.
	SetTraits(ctx context.Context, ident string, traits []string) error
	// SetRAIDConfig sets the node's target RAID configuration.
	SetRAIDConfig(ctx context.Context, ident string, cfg map[string]any) error
	// Inventory returns the node's inspection data as JSON: an object with
	// "inventory" and "plugin_data". hostforge.ErrNotFound when there is none.
	Inventory(ctx context.Context, ident string) ([]byte, error)

	ListPorts(ctx context.Context, nodeUUID string) ([]Port, error)
	// PortByAddress finds a port by MAC across all nodes.
	PortByAddress(ctx context.Context, mac string) (Port, error)
	CreatePort(ctx context.Context, p Port) (Port, error)
	UpdatePort(ctx context.Context, uuid string, ops []PatchOp) (Port, error)
	ListPortgroups(ctx context.Context, nodeUUID string) ([]Portgroup, error)
	CreatePortgroup(ctx context.Context, pg Portgroup) (Portgroup, error)
}

// ErrNodeLocked is Ironic's NodeLocked: another conductor operation holds
// the node's reservation. It wraps hostforge.ErrConflict.
var ErrNodeLocked = fmt.Errorf("node locked: %w", hostforge.ErrConflict)

// LockedMarker is the text Ironic puts in a NodeLocked 409.
const LockedMarker = "is locked by host"

// IsNodeLocked reports whether err is Ironic's NodeLocked: ErrNodeLocked, or
// a conflict whose text carries LockedMarker (for clients that do not map it).
func IsNodeLocked(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrNodeLocked) {
		return true
	}
	return errors.Is(err, hostforge.ErrConflict) && strings.Contains(err.Error(), LockedMarker)
}

// The node fields the phases read, by use (Ironic's API names). A poll reads
// a few hundred bytes instead of a whole node (driver_info, instance_info,
// driver_internal_info, links, …: 2.5 KB and more).
var (
	// statusFields are what a poll, finalize and a lock wait read: the
	// states, Ironic's time of the last provision change, ownership, the
	// lock holder and the last error.
	statusFields = []string{
		"uuid", "driver", "provision_state", "target_provision_state", "provision_updated_at",
		"power_state", "target_power_state", "maintenance", "instance_uuid", "last_error", "reservation",
	}
	// preludeFields add what the prelude, recovery, convergence and the
	// driver switch compare: the maintenance reason (restored after a
	// failed recovery), properties (the root-device hint) and every
	// hardware interface API 1.81 has (raid is converged; the switch
	// replaces the Redfish ones). Traits and driver_info are not read:
	// convergence takes them from its own PATCH's answer, and driver_info
	// is always rewritten.
	preludeFields = append(append([]string{"name", "maintenance_reason", "properties"}, statusFields...),
		"bios_interface", "boot_interface", "console_interface", "deploy_interface", "inspect_interface",
		"management_interface", "network_interface", "power_interface", "raid_interface",
		"rescue_interface", "storage_interface", "vendor_interface")
)
