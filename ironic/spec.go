package ironic

import (
	"fmt"
	"net"
	"reflect"
	"sort"
	"strings"

	"github.com/hostforge/hostforge"
)

// PlaceholderSwitchID is the switch_id every port's local_link_connection
// carries: Ironic requires a MAC there, and the switch is named by
// switch_info (the NetBox switch) and port_id (the NetBox port) instead.
const PlaceholderSwitchID = "00:00:00:00:00:00"

// NodeSpec is what NetBox says the Ironic node must be: the input of every
// Ironic step. enrollment maps the NetBox record into it; this package knows
// nothing of NetBox. It is a plain serialisable value and carries no secret.
type NodeSpec struct {
	// Name is the node name (the NetBox device name).
	Name string `json:"name"`
	// Driver is redfish, idrac or ipmi (fake-hardware for test deployments).
	Driver string `json:"driver"`
	// Interfaces are the hardware interfaces by short name (boot, deploy,
	// inspect, management, power, raid, network, ...). raid is mandatory;
	// network is passed through when set. All are create-only, except raid
	// which is synced for nodes with a target RAID config.
	Interfaces map[string]string `json:"interfaces"`
	// BMCAddress is the BMC's out-of-band address (NetBox oob_ip).
	BMCAddress string `json:"bmc_address"`
	// CredentialItem names the vault item of the host's per-host BMC admin
	// credential: Ironic's driver_info and the link guard use it.
	CredentialItem string `json:"credential_item"`
	// MonitoringItem names the vault item of the shared ipmi_exporter
	// monitoring user, which Ironic must never be given.
	MonitoringItem string `json:"monitoring_item,omitempty"`
	// RedfishAddressOverride replaces the Redfish address (emulated nodes):
	// a bare host[:port], reached over https (enrollment holds NetBox's
	// value to that); a value with a scheme is used as it is.
	RedfishAddressOverride string `json:"redfish_address_override,omitempty"`
	// DriverInfoExtras are operator extras merged into driver_info; they
	// never override a managed key (address, username, password).
	DriverInfoExtras map[string]any `json:"driver_info_extras,omitempty"`
	// Project is the owner and lessee of a created node.
	Project       string            `json:"project,omitempty"`
	ResourceClass string            `json:"resource_class,omitempty"`
	Capabilities  map[string]string `json:"capabilities,omitempty"`
	CPUArch       string            `json:"cpu_arch,omitempty"`
	// RootDevice is the root-device hint; nil when NetBox sets none.
	RootDevice   map[string]any `json:"root_device,omitempty"`
	SoftwareRAID bool           `json:"software_raid,omitempty"`
	// TargetRAIDConfig is (re)applied in MANAGEABLE; nil for none.
	TargetRAIDConfig map[string]any `json:"target_raid_config,omitempty"`
	// Bond is nil when the host has no portgroup.
	Bond *Bond `json:"bond,omitempty"`
	// NICs are the frontend NICs in enrollment's order; the first one is the
	// provisioning NIC (PXE).
	NICs []NIC `json:"nics"`
	// SkipCableVerification: an uncabled NIC's port is created without
	// local_link_connection (and verification skips LLDP).
	SkipCableVerification bool `json:"skip_cable_verification,omitempty"`
}

// Bond is the portgroup's bonding.
type Bond struct {
	Mode           string `json:"mode"`
	Miimon         int    `json:"miimon,omitempty"`
	XmitHashPolicy string `json:"xmit_hash_policy,omitempty"`
}

// NIC is one frontend NIC as NetBox records it.
type NIC struct {
	Name string `json:"name"`
	MAC  string `json:"mac,omitempty"`
	// Switch and Port name the cable peer (Port is the LAG parent when the
	// bond is a LAG); both "" when uncabled.
	Switch string `json:"switch,omitempty"`
	Port   string `json:"port,omitempty"`
}

// Cabled reports whether NetBox records a cable for the NIC.
func (n NIC) Cabled() bool { return n.Switch != "" && n.Port != "" }

// LocalLinkConnection is the port's link record for a cabled NIC.
func (n NIC) LocalLinkConnection() map[string]string {
	return map[string]string{"switch_id": PlaceholderSwitchID, "port_id": n.Port, "switch_info": n.Switch}
}

// DriverFakeHardware is Ironic's fake hardware type, for test deployments
// only: nothing is powered, booted, inspected or cleaned for real (its
// inspect interface may still be "inspector", fed a posted inventory).
const DriverFakeHardware = "fake-hardware"

// ValidDriver reports whether a node spec may name this Ironic driver:
// redfish, idrac or ipmi for real hardware, or DriverFakeHardware.
func ValidDriver(d string) bool {
	switch d {
	case "redfish", "idrac", "ipmi", DriverFakeHardware:
		return true
	}
	return false
}

// Validate checks the spec; the error is an IRONIC_INPUT_INVALID failure
// naming the field.
func (s NodeSpec) Validate() error {
	bad := func(field, format string, args ...any) error {
		return InputInvalid.New("node %q: %s: %s", s.Name, field, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(s.Name) == "" {
		return bad("name", "empty")
	}
	if !ValidDriver(s.Driver) {
		return bad("driver", "%q is not one of redfish, idrac, ipmi, fake-hardware", s.Driver)
	}
	if s.Interfaces["raid"] == "" {
		return bad("interfaces.raid", "raid_interface is mandatory")
	}
	if s.BMCAddress == "" && (s.Driver == "ipmi" || s.RedfishAddressOverride == "") {
		return bad("bmc_address", "no BMC address (NetBox oob_ip) and no redfish_address_override")
	}
	if len(s.NICs) == 0 {
		return bad("nics", "no frontend NIC")
	}
	seen := map[string]bool{}
	for i, n := range s.NICs {
		if n.MAC == "" {
			continue
		}
		m, err := net.ParseMAC(n.MAC)
		if err != nil || len(m) != 6 {
			return bad(fmt.Sprintf("nics[%d].mac", i), "%q is not a MAC address", n.MAC)
		}
		if seen[m.String()] {
			return bad(fmt.Sprintf("nics[%d].mac", i), "%s appears twice", m)
		}
		seen[m.String()] = true
	}
	if s.Bond != nil && s.NICs[0].MAC == "" {
		return bad("nics[0].mac", "the first frontend NIC has no MAC; the portgroup takes it")
	}
	return nil
}

// ArchTrait is the HW_ARCH_* scheduler trait of a CPU architecture
// (x86_64 → HW_ARCH_X86_64), "" when the architecture is unset.
func ArchTrait(arch string) string {
	if arch == "" {
		return ""
	}
	return "HW_ARCH_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(arch))
}

// credentialKeys are driver_info's credential and address keys per driver.
func credentialKeys(driver string) (addr, user, pass string) {
	if driver == "ipmi" {
		return "ipmi_address", "ipmi_username", "ipmi_password"
	}
	return "redfish_address", "redfish_username", "redfish_password"
}

// managedKeys are the driver_info keys extras can never override.
var managedKeys = map[string]bool{
	"redfish_address": true, "redfish_username": true, "redfish_password": true,
	"ipmi_address": true, "ipmi_username": true, "ipmi_password": true,
}

// driverInfo renders the driver_info of a node with this driver.
func (s NodeSpec) driverInfo(driver string, c Credential) map[string]any {
	di := map[string]any{}
	for k, v := range s.DriverInfoExtras {
		if !managedKeys[k] {
			di[k] = v
		}
	}
	addrKey, userKey, passKey := credentialKeys(driver)
	if driver == "ipmi" {
		di[addrKey] = s.BMCAddress
	} else {
		di[addrKey] = s.redfishAddress()
	}
	di[userKey] = c.Username
	di[passKey] = c.Password
	return di
}

func (s NodeSpec) redfishAddress() string {
	if o := s.RedfishAddressOverride; o != "" {
		if strings.Contains(o, "://") {
			return o
		}
		return "https://" + o
	}
	if strings.Contains(s.BMCAddress, "://") {
		return s.BMCAddress
	}
	return "https://" + s.BMCAddress
}

// capabilities renders Ironic's "k1:v1,k2:v2" capabilities string, sorted.
func capabilities(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+":"+m[k])
	}
	return strings.Join(parts, ",")
}

// create renders the node creation. Owner and lessee are set by a patch
// right after: a noauth (standalone) Ironic refuses them on create.
func (s NodeSpec) create(c Credential) NodeCreate {
	props := map[string]any{}
	if s.CPUArch != "" {
		props["cpu_arch"] = s.CPUArch
	}
	if len(s.Capabilities) > 0 {
		props["capabilities"] = capabilities(s.Capabilities)
	}
	if s.RootDevice != nil {
		props["root_device"] = s.RootDevice
	}
	ifs := map[string]string{}
	for k, v := range s.Interfaces {
		if v != "" {
			ifs[k] = v
		}
	}
	return NodeCreate{
		Name: s.Name, Driver: s.Driver, Interfaces: ifs,
		DriverInfo: s.driverInfo(s.Driver, c), Properties: props,
		ResourceClass: s.ResourceClass,
	}
}

// sameJSON compares two JSON-shaped values, treating numbers by value.
func sameJSON(a, b any) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	}
	return v
}

// normMAC is hostforge.NormalizeMAC without the flag: ports and link
// states are keyed by it.
func normMAC(s string) string { m, _ := hostforge.NormalizeMAC(s); return m }
