package intent

import "github.com/hostforge/hostforge"

// DataInvalid is the failure for malformed NetBox data: a missing or wrongly
// typed field. The message names the device and the field.
var DataInvalid = hostforge.Declare(hostforge.Spec{
	Code:      "NETBOX_DATA_INVALID",
	Phase:     "read_intent",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "Fix the NetBox field named in the message (device, device type, interface or config context), then rerun. Nothing was written.",
})

// Status is a NetBox device status value.
type Status string

// The NetBox 4.x device status choices.
const (
	StatusOffline         Status = "offline"
	StatusActive          Status = "active"
	StatusPlanned         Status = "planned"
	StatusStaged          Status = "staged"
	StatusFailed          Status = "failed"
	StatusInventory       Status = "inventory"
	StatusDecommissioning Status = "decommissioning"
)

// Known reports whether s is one of NetBox's device status choices.
func (s Status) Known() bool {
	switch s {
	case StatusOffline, StatusActive, StatusPlanned, StatusStaged, StatusFailed, StatusInventory, StatusDecommissioning:
		return true
	}
	return false
}

// Device classes carried by a device role's custom field device_class.
// Routing maps them to Ironic instances; platform class reads them to decide
// whether a device must have a GPU type.
const (
	ClassGPUCompute   = "GPU_COMPUTE"
	ClassCPUBaremetal = "CPU_BAREMETAL"
	ClassHypervisor   = "HYPERVISOR"
	ClassSwitch       = "SWITCH"
)

// Tag slugs enrollment writes.
const (
	TagIPMIExporter = "ipmi_exporter"
	// DefaultIronicTag is the tag marking a host enrolled; sites may rename it.
	DefaultIronicTag = "ironic"
)

// Device is one host's recorded intent.
type Device struct {
	ID     int    `json:"id"`
	Name   string `json:"name"`
	Status Status `json:"status"`
	Serial string `json:"serial,omitempty"`

	Role       Role       `json:"role"`
	DeviceType DeviceType `json:"device_type"`
	Site       Site       `json:"site"`

	// OOBIP is the out-of-band (BMC) address without its prefix length, "" when unset.
	OOBIP string `json:"oob_ip,omitempty"`
	// PrimaryIP4 is the primary IPv4 address without its prefix length.
	PrimaryIP4 string `json:"primary_ip4,omitempty"`

	// Tags are tag slugs.
	Tags []string `json:"tags,omitempty"`
	// PlatformClass is custom_fields.platform_class, "" when empty or null.
	PlatformClass string `json:"platform_class,omitempty"`

	// ConfigContext is the rendered config_context (ironic_settings,
	// inspection_validation, ztp, ntp-servers, syslog-servers, ...), exactly as
	// NetBox renders it. Enrollment parses and validates it.
	ConfigContext map[string]any `json:"config_context,omitempty"`

	// Interfaces in NetBox's natural name order.
	Interfaces []Interface `json:"interfaces,omitempty"`
}

// HasTag reports whether the device carries the tag slug.
func (d *Device) HasTag(slug string) bool {
	for _, t := range d.Tags {
		if t == slug {
			return true
		}
	}
	return false
}

// Interface returns the interface with that name.
func (d *Device) Interface(name string) (Interface, bool) {
	for _, i := range d.Interfaces {
		if i.Name == name {
			return i, true
		}
	}
	return Interface{}, false
}

// Role is the device role.
type Role struct {
	Slug string `json:"slug"`
	Name string `json:"name,omitempty"`
	// DeviceClass is the role's custom field device_class, "" when unset.
	DeviceClass string `json:"device_class,omitempty"`
}

// DeviceType is the device type with its manufacturer.
type DeviceType struct {
	ID           int    `json:"id"`
	Slug         string `json:"slug,omitempty"`
	Manufacturer string `json:"manufacturer"`
	Model        string `json:"model"`
	// GPUType is custom_fields.gpu_type, "" when empty or null.
	GPUType string `json:"gpu_type,omitempty"`
}

// Site is the device's site.
type Site struct {
	Slug string `json:"slug"`
	Name string `json:"name,omitempty"`
}

// Interface is one device interface.
type Interface struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	MAC      string `json:"mac,omitempty"`
	MgmtOnly bool   `json:"mgmt_only,omitempty"`
	Enabled  bool   `json:"enabled"`
	// LAG is the name of this interface's LAG parent on the same device, "" when none.
	LAG string `json:"lag,omitempty"`
	// Peer is the far end of this interface's cable, nil when uncabled.
	Peer *Peer `json:"peer,omitempty"`
}

// Peer is the far end of a cable.
type Peer struct {
	// Kind is the termination's object type, e.g. "dcim.interface",
	// "dcim.frontport", "circuits.circuittermination".
	Kind string `json:"kind"`
	// Device is the peer device's name.
	Device string `json:"device"`
	// DeviceRole is the peer device's role slug.
	DeviceRole string `json:"device_role,omitempty"`
	// Port is the peer termination's name.
	Port string `json:"port"`
	// PortLAG is the LAG parent of the peer port on the switch, "" when none.
	PortLAG string `json:"port_lag,omitempty"`
}

// PeerKindInterface is the termination kind of a switch interface.
const PeerKindInterface = "dcim.interface"
