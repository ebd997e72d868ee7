package ironic

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/ironic"
)

// NodeSource is what FirmwareHosts needs of one Ironic instance; *Client
// has it.
type NodeSource interface {
	ListNodes(ctx context.Context) ([]ironic.Node, error)
	GetNode(ctx context.Context, ident string, fields ...string) (ironic.Node, error)
	SetMaintenance(ctx context.Context, ident string, on bool, reason string) error
}

// Instance is one Ironic instance by name.
type Instance struct {
	Name   string
	Source NodeSource
}

// FirmwareHosts is firmware.Hosts over Ironic: every node of every
// instance is a managed host, its name (the device name enrollment gave
// it) its machine ID.
//
//   - available is Ready; active with an instance is Assigned; anything
//     else is neither (never selected);
//   - maintenance whose reason starts with firmware.ReportName
//     ("host-fw-update") is the firmware update health report: Ironic
//     keeps a node in maintenance out of scheduling and out of its own
//     power and state sync, which is the report's meaning; maintenance for
//     any other reason is "in maintenance" and consumes the update budget;
//   - a node in a failed provision state (clean failed, deploy failed,
//     error, inspect failed, rescue failed) or with a fault is unhealthy;
//   - a node is MNNVL capable (multi-node NVLink, a GB200: the manual
//     upgrade gate of requires_manual_upgrade applies) when it carries the
//     trait CUSTOM_MNNVL, or its properties' capabilities string has
//     mnnvl:true, or its property mnnvl is true (a boolean or "true"),
//     checked in that order; Host.MNNVLFrom names the one found. A node
//     list carries neither traits nor properties: the update workflow
//     reads the node itself (Get) where the gate applies.
//
// SetUpdateReport does not take over another reason's maintenance (the
// node is already out of scheduling, and an operator's reason must
// survive the update); ClearUpdateReport ends only the update's own.
type FirmwareHosts struct {
	Instances []Instance

	mu    sync.Mutex
	where map[string]int // machine → instance index, from the last List or Get
}

var _ firmware.Hosts = (*FirmwareHosts)(nil)

// failedStates are the provision states of an unhealthy node.
var failedStates = map[string]bool{"clean failed": true, "deploy failed": true, "error": true, "inspect failed": true, "rescue failed": true, "adopt failed": true}

// UpdateReason is the maintenance reason of the update health report.
func UpdateReason(reason string) string {
	if reason == "" || reason == firmware.ReportName {
		return firmware.ReportName + ": hostforge is updating this host's firmware"
	}
	return firmware.ReportName + ": " + reason
}

func isUpdateReason(r string) bool {
	return strings.HasPrefix(strings.TrimSpace(r), firmware.ReportName)
}

func hostOf(n ironic.Node) firmware.Host {
	h := firmware.Host{MachineID: n.Name, InstanceID: n.InstanceUUID}
	switch {
	case n.ProvisionState == "available":
		h.State = firmware.HostReady
	case n.ProvisionState == "active" && n.InstanceUUID != "":
		h.State = firmware.HostAssigned
	default:
		h.State = firmware.HostOther
	}
	if n.Maintenance {
		if isUpdateReason(n.MaintenanceReason) {
			h.UpdateReport = true
		} else {
			h.InMaintenance = true
		}
	}
	h.Unhealthy = failedStates[n.ProvisionState]
	h.MNNVLFrom = mnnvlFrom(n)
	h.MNNVL = h.MNNVLFrom != ""
	return h
}

// TraitMNNVL is the node trait of an MNNVL-capable host.
const TraitMNNVL = "CUSTOM_MNNVL"

// mnnvlFrom says where the node's data makes it MNNVL capable; "" when it
// does not.
func mnnvlFrom(n ironic.Node) string {
	if n.HasTrait(TraitMNNVL) {
		return "trait " + TraitMNNVL
	}
	if caps, ok := n.Properties["capabilities"].(string); ok {
		for _, kv := range strings.Split(caps, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), ":")
			if strings.EqualFold(k, "mnnvl") && strings.EqualFold(strings.TrimSpace(v), "true") {
				return "properties.capabilities mnnvl:true"
			}
		}
	}
	switch v := n.Properties["mnnvl"].(type) {
	case bool:
		if v {
			return "properties.mnnvl"
		}
	case string:
		if strings.EqualFold(strings.TrimSpace(v), "true") {
			return "properties.mnnvl"
		}
	}
	return ""
}

func machineOf(n ironic.Node) string { return n.Name }

// List returns every named node of every instance, sorted by machine. A
// node in maintenance is read in full for its reason (a listing carries
// only the flag).
func (f *FirmwareHosts) List(ctx context.Context) ([]firmware.Host, error) {
	var out []firmware.Host
	where := map[string]int{}
	for i, in := range f.Instances {
		nodes, err := in.Source.ListNodes(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the nodes of Ironic %s: %w", in.Name, err)
		}
		for _, n := range nodes {
			m := machineOf(n)
			if m == "" {
				continue // an unnamed node is no enrolled device
			}
			if n.Maintenance && n.MaintenanceReason == "" {
				full, err := in.Source.GetNode(ctx, n.UUID)
				if errors.Is(err, hostforge.ErrNotFound) {
					continue // deleted since the listing
				}
				if err != nil {
					return nil, fmt.Errorf("reading node %s of Ironic %s: %w", m, in.Name, err)
				}
				n = full
			}
			if _, dup := where[m]; dup {
				return nil, ironic.Rejected.New("two Ironic nodes are named %s (instances %s and %s): machine IDs must be unique", m, f.Instances[where[m]].Name, in.Name)
			}
			where[m] = i
			out = append(out, hostOf(n))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MachineID < out[j].MachineID })
	f.mu.Lock()
	f.where = where
	f.mu.Unlock()
	return out, nil
}

// node reads the machine's node from its instance (the last one it was
// seen in, else each in turn).
func (f *FirmwareHosts) node(ctx context.Context, machine string) (ironic.Node, int, bool, error) {
	if strings.TrimSpace(machine) == "" {
		return ironic.Node{}, 0, false, nil
	}
	f.mu.Lock()
	idx, known := f.where[machine]
	f.mu.Unlock()
	order := make([]int, 0, len(f.Instances))
	if known && idx < len(f.Instances) {
		order = append(order, idx)
	}
	for i := range f.Instances {
		if !known || i != idx {
			order = append(order, i)
		}
	}
	for _, i := range order {
		n, err := f.Instances[i].Source.GetNode(ctx, machine)
		if errors.Is(err, hostforge.ErrNotFound) {
			continue
		}
		if err != nil {
			return ironic.Node{}, 0, false, fmt.Errorf("reading node %s of Ironic %s: %w", machine, f.Instances[i].Name, err)
		}
		f.mu.Lock()
		if f.where == nil {
			f.where = map[string]int{}
		}
		f.where[machine] = i
		f.mu.Unlock()
		return n, i, true, nil
	}
	return ironic.Node{}, 0, false, nil
}

// Get returns one host.
func (f *FirmwareHosts) Get(ctx context.Context, machine string) (firmware.Host, bool, error) {
	n, _, ok, err := f.node(ctx, machine)
	if err != nil || !ok {
		return firmware.Host{}, ok, err
	}
	return hostOf(n), true, nil
}

// SetUpdateReport puts the node in maintenance with the update's reason.
func (f *FirmwareHosts) SetUpdateReport(ctx context.Context, machine, reason string) error {
	n, i, ok, err := f.node(ctx, machine)
	if err != nil {
		return err
	}
	if !ok {
		return firmware.RequestRefused.New("machine %s is no Ironic node", machine)
	}
	if n.Maintenance {
		return nil // ours already, or another reason's: either way out of scheduling
	}
	return f.Instances[i].Source.SetMaintenance(ctx, n.UUID, true, UpdateReason(reason))
}

// ClearUpdateReport ends the update's maintenance; another reason's is
// left alone.
func (f *FirmwareHosts) ClearUpdateReport(ctx context.Context, machine string) error {
	n, i, ok, err := f.node(ctx, machine)
	if err != nil || !ok {
		return err
	}
	if !n.Maintenance || !isUpdateReason(n.MaintenanceReason) {
		return nil
	}
	return f.Instances[i].Source.SetMaintenance(ctx, n.UUID, false, "")
}

// BMCAddress returns the host[:port] of the machine's BMC from its node's
// driver_info (redfish_address, else ipmi_address).
func (f *FirmwareHosts) BMCAddress(ctx context.Context, machine string) (string, error) {
	n, _, ok, err := f.node(ctx, machine)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", firmware.RequestRefused.New("machine %s is no Ironic node", machine)
	}
	for _, k := range []string{"redfish_address", "ipmi_address"} {
		s, _ := n.DriverInfo[k].(string)
		if s == "" {
			continue
		}
		if addr := hostPort(s); addr != "" {
			return addr, nil
		}
	}
	return "", firmware.BMCRefused.New("machine %s: its Ironic node's driver_info has no redfish_address or ipmi_address", machine)
}

// hostPort reduces "https://10.0.0.7:8443/redfish/v1" or "10.0.0.7" to
// its host[:port].
func hostPort(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Host
}
