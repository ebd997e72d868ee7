package enrollment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// IronicSettings is the config-context block ironic_settings: how a host is
// enrolled in Ironic. Unknown keys are ignored; a key of the wrong type is
// NETBOX_DATA_INVALID naming the key.
//
//	"ironic_settings": {
//	  "driver": "redfish",                  // redfish | idrac | ipmi | fake-hardware (test deployments only)
//	  "interface_type": "25gbase-x-sfp28",  // frontend NICs: interfaces of this NetBox type
//	  "interfaces": {"boot": "redfish-virtual-media", "deploy": "direct", "inspect": "inspector",
//	                 "management": "redfish", "power": "redfish", "raid": "agent", "network": "noop"},
//	  "bond": {"mode": "802.3ad", "miimon": 100, "xmit_hash_policy": "layer3+4", "lag": true},
//	  "skip_cable_verification": false,
//	  "redfish_address_override": "",
//	  "resource_class": "gpu.gb300",
//	  "capabilities": {"boot_mode": "uefi"},
//	  "cpu_arch": "x86_64",
//	  "root_device": {"serial": "S6XXNX0T123456"},
//	  "software_raid": false,
//	  "target_raid_config": {"logical_disks": [...]},
//	  "ironic_driver_info": {"redfish_system_id": "/redfish/v1/Systems/1"}
//	}
//
// Two keys steer where Ironic sends the BMC credential, so NetBox data is
// held to rules (checked when Ironic enrolment is on; a breach is
// NETBOX_DATA_INVALID naming the key, before any phase runs):
//
//   - redfish_address_override is a bare host name or IP address (IPv6 in
//     brackets), with an optional :port (an emulator's): no scheme (https
//     is always used), no path, no user info. When the site names its BMC
//     networks (SiteConfig.BMCNetworks) it must be an IP address in one.
//   - ironic_driver_info passes only these extras: redfish_system_id (a
//     /redfish/v1/Systems/... path on the BMC itself), redfish_auth_type
//     (basic, session or auto) and redfish_verify_ca (true, or a CA bundle
//     path the site allows in SiteConfig.RedfishVerifyCAPaths; never false:
//     NetBox cannot turn verification off). The address and credential keys
//     are hostforge's; anything else is refused.
type IronicSettings struct {
	Driver                 string            `json:"driver"`
	InterfaceType          string            `json:"interface_type"`
	Interfaces             map[string]string `json:"interfaces,omitempty"`
	Bond                   *Bond             `json:"bond,omitempty"`
	SkipCableVerification  bool              `json:"skip_cable_verification,omitempty"`
	RedfishAddressOverride string            `json:"redfish_address_override,omitempty"`
	ResourceClass          string            `json:"resource_class,omitempty"`
	Capabilities           map[string]string `json:"capabilities,omitempty"`
	CPUArch                string            `json:"cpu_arch,omitempty"`
	RootDevice             map[string]any    `json:"root_device,omitempty"`
	SoftwareRAID           bool              `json:"software_raid,omitempty"`
	TargetRAIDConfig       map[string]any    `json:"target_raid_config,omitempty"`
	IronicDriverInfo       map[string]any    `json:"ironic_driver_info,omitempty"`
}

// Bond is ironic_settings.bond: the portgroup of the frontend NICs.
type Bond struct {
	Mode           string `json:"mode"`
	Miimon         int    `json:"miimon,omitempty"`
	XmitHashPolicy string `json:"xmit_hash_policy,omitempty"`
	// LAG is true when the switch side is a LAG: local_link_connection then
	// names the switch port's LAG parent.
	LAG bool `json:"lag,omitempty"`
}

// NIC is one frontend interface, in the order enrollment uses everywhere.
type NIC struct {
	Name string `json:"name"`
	MAC  string `json:"mac,omitempty"`
	// Switch and Port are the cable peer ("" when uncabled). Port is the
	// peer's LAG parent when the bond is a LAG and the peer has one.
	Switch string `json:"switch,omitempty"`
	Port   string `json:"port,omitempty"`
	// PhysicalPort is always the peer's own port name.
	PhysicalPort string `json:"physical_port,omitempty"`
}

// Plan is one attempt's reading of NetBox, validated and mapped: the single
// place where rules two phases must agree on are computed.
type Plan struct {
	Device intent.Device `json:"device"`
	// Ironic is nil when the device has no ironic_settings.
	Ironic *IronicSettings `json:"ironic,omitempty"`
	// InspectionValidation is the raw inspection_validation block, nil when absent.
	InspectionValidation map[string]any `json:"inspection_validation,omitempty"`
	// Frontend are the frontend NICs (interfaces of ironic_settings.interface_type,
	// not management-only) in NetBox's natural name order.
	Frontend []NIC `json:"frontend,omitempty"`
	// ProvisioningNIC is the first frontend NIC: the one Ironic PXE-enables and
	// the BMC boot restriction keeps. nil when there is no frontend NIC.
	ProvisioningNIC *NIC `json:"provisioning_nic,omitempty"`
	// NTPServers and SyslogServers are the site's targets, from the rendered
	// config context keys "ntp-servers" and "syslog-servers".
	NTPServers    []string `json:"ntp_servers,omitempty"`
	SyslogServers []string `json:"syslog_servers,omitempty"`
}

// invalid is a NETBOX_DATA_INVALID failure naming the device and the field.
func invalid(device, field, format string, args ...any) error {
	return DataInvalid.New("device %s: %s: %s", device, field, fmt.Sprintf(format, args...))
}

// validateDevice checks what every run needs, whatever phases are enabled.
func validateDevice(d intent.Device) error {
	if d.ID <= 0 {
		return invalid(d.Name, "id", "missing device id")
	}
	if !d.Status.Known() {
		return invalid(d.Name, "status", "%q is not a NetBox device status", d.Status)
	}
	if d.DeviceType.Manufacturer == "" || d.DeviceType.Model == "" {
		return invalid(d.Name, "device_type", "missing device type manufacturer or model")
	}
	for _, key := range []string{"ironic_settings", "inspection_validation"} {
		if v, ok := d.ConfigContext[key]; ok && v != nil {
			if _, isObj := v.(map[string]any); !isObj {
				return invalid(d.Name, "config_context."+key, "is a %T, want an object", v)
			}
		}
	}
	return nil
}

// buildPlan validates the device for the phases the request enables and maps it.
func buildPlan(req Request, d intent.Device) (Plan, error) {
	if err := validateDevice(d); err != nil {
		return Plan{}, err
	}
	p := Plan{Device: d}
	var err error
	if p.NTPServers, err = stringList(d, "ntp-servers"); err != nil {
		return Plan{}, err
	}
	if p.SyslogServers, err = stringList(d, "syslog-servers"); err != nil {
		return Plan{}, err
	}
	if raw, ok := d.ConfigContext["inspection_validation"].(map[string]any); ok {
		p.InspectionValidation = raw
	}
	if raw, ok := d.ConfigContext["ironic_settings"]; ok && raw != nil {
		var s IronicSettings
		if err := decodeSection(d.Name, "config_context.ironic_settings", raw, &s); err != nil {
			return Plan{}, err
		}
		p.Ironic = &s
		if p.Frontend, err = frontendNICs(d, s); err != nil {
			return Plan{}, err
		}
		if len(p.Frontend) > 0 {
			nic := p.Frontend[0]
			p.ProvisioningNIC = &nic
		}
	}
	site := req.Snapshot.Site
	if site.ConfigureDHCP && d.OOBIP == "" {
		return Plan{}, invalid(d.Name, "oob_ip", "no out-of-band address; DHCP and the BMC need one")
	}
	if site.ConfigureBMC && d.OOBIP == "" {
		return Plan{}, invalid(d.Name, "oob_ip", "no out-of-band address; the BMC phase needs one")
	}
	if site.IronicEnrol {
		if p.Ironic == nil {
			return Plan{}, invalid(d.Name, "config_context.ironic_settings", "missing; Ironic enrolment needs it")
		}
		if d.OOBIP == "" && p.Ironic.RedfishAddressOverride == "" {
			return Plan{}, invalid(d.Name, "oob_ip", "no out-of-band address and no ironic_settings.redfish_address_override")
		}
		if p.Ironic.Interfaces["raid"] == "" {
			return Plan{}, invalid(d.Name, "config_context.ironic_settings.interfaces.raid", "raid_interface is mandatory")
		}
		if !ironic.ValidDriver(p.Ironic.Driver) {
			return Plan{}, invalid(d.Name, "config_context.ironic_settings.driver", "%q is not one of redfish, idrac, ipmi, fake-hardware", p.Ironic.Driver)
		}
		if len(p.Frontend) == 0 {
			return Plan{}, invalid(d.Name, "interfaces", "no frontend interface of type %q", p.Ironic.InterfaceType)
		}
		if err := checkCredentialSteering(d.Name, p.Ironic, site); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}

// DriverInfoExtras are the ironic_driver_info keys NetBox may set; see
// IronicSettings for what each accepts.
var DriverInfoExtras = []string{"redfish_auth_type", "redfish_system_id", "redfish_verify_ca"}

// managedDriverInfo are driver_info keys hostforge sets itself: the BMC's
// address and the per-host credential.
var managedDriverInfo = map[string]bool{
	"redfish_address": true, "redfish_username": true, "redfish_password": true,
	"ipmi_address": true, "ipmi_username": true, "ipmi_password": true,
}

// checkCredentialSteering holds the NetBox keys that steer where Ironic
// sends the BMC credential to the rules IronicSettings documents.
func checkCredentialSteering(device string, s *IronicSettings, site SiteConfig) error {
	if s.RedfishAddressOverride != "" {
		if err := checkAddressOverride(s.RedfishAddressOverride, site.BMCNetworks); err != nil {
			return invalid(device, "config_context.ironic_settings.redfish_address_override", "%q: %v", s.RedfishAddressOverride, err)
		}
	}
	keys := make([]string, 0, len(s.IronicDriverInfo))
	for k := range s.IronicDriverInfo {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := checkDriverInfoExtra(k, s.IronicDriverInfo[k], site); err != nil {
			return invalid(device, "config_context.ironic_settings.ironic_driver_info."+k, "%v", err)
		}
	}
	return nil
}

var hostLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// checkAddressOverride accepts host, IP, host:port or [IPv6]:port, and
// with networks only an IP address inside one of them.
func checkAddressOverride(v string, networks []string) error {
	if strings.Contains(v, "://") || strings.ContainsAny(v, "/@?#\\%") || strings.IndexFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Errorf("want a bare host name or IP address, optionally with :port; no scheme (https is always used), path or user info")
	}
	host := v
	switch {
	case strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]"):
		host = v[1 : len(v)-1]
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() || a.Zone() != "" {
			return fmt.Errorf("want an IPv6 address between the brackets")
		}
	case strings.Contains(v, ":"):
		h, port, err := net.SplitHostPort(v)
		if err != nil {
			return fmt.Errorf("want host, IP, host:port, [IPv6] or [IPv6]:port")
		}
		if n, perr := strconv.Atoi(port); perr != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
			return fmt.Errorf("the port %q is not a number from 1 to 65535", port)
		}
		if strings.Contains(h, ":") != strings.HasPrefix(v, "[") {
			return fmt.Errorf("want an IPv6 address in brackets")
		}
		host = h
	case strings.ContainsAny(v, "[]"):
		return fmt.Errorf("want host, IP, host:port, [IPv6] or [IPv6]:port")
	}
	ip, ipErr := netip.ParseAddr(host)
	if ipErr == nil && ip.Zone() != "" {
		return fmt.Errorf("an IPv6 zone is not an address Ironic can reach")
	}
	if ipErr != nil {
		labels := strings.Split(strings.TrimSuffix(host, "."), ".")
		for _, l := range labels {
			if !hostLabel.MatchString(l) {
				return fmt.Errorf("%q is neither an IP address nor a host name", host)
			}
		}
	}
	if len(networks) == 0 {
		return nil
	}
	if ipErr != nil {
		return fmt.Errorf("the site names its BMC networks (%s): the override must be an IP address in one of them, not a host name", strings.Join(networks, ", "))
	}
	for _, n := range networks {
		if p, err := netip.ParsePrefix(n); err == nil && p.Contains(ip.Unmap()) {
			return nil
		}
	}
	return fmt.Errorf("%s is outside the site's BMC networks (%s)", ip, strings.Join(networks, ", "))
}

// checkDriverInfoExtra accepts one ironic_driver_info key and value.
func checkDriverInfoExtra(k string, v any, site SiteConfig) error {
	switch k {
	case "redfish_system_id":
		s, ok := v.(string)
		if !ok || !strings.HasPrefix(s, "/redfish/v1/Systems/") || len(s) == len("/redfish/v1/Systems/") ||
			strings.Contains(s, "..") || strings.Contains(s, "//") || strings.ContainsAny(s, "@\\?#%") ||
			strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
			return fmt.Errorf("%v: want a path on the BMC itself, /redfish/v1/Systems/<id>", v)
		}
	case "redfish_auth_type":
		switch v {
		case "basic", "session", "auto":
		default:
			return fmt.Errorf("%v: want basic, session or auto", v)
		}
	case "redfish_verify_ca":
		switch x := v.(type) {
		case bool:
			if !x {
				return fmt.Errorf("false: NetBox data cannot turn off Ironic's TLS verification of the BMC")
			}
		case string:
			if !slices.Contains(site.RedfishVerifyCAPaths, x) {
				return fmt.Errorf("%q: not a CA bundle the site allows (redfish_verify_ca_paths: %s); true verifies against the conductor's default bundle", x, strings.Join(site.RedfishVerifyCAPaths, ", "))
			}
		default:
			return fmt.Errorf("is a %T: want true or an allowed CA bundle path", v)
		}
	default:
		if managedDriverInfo[k] {
			return fmt.Errorf("is hostforge's to set (the BMC address and the per-host credential); NetBox cannot override it")
		}
		return fmt.Errorf("not an allowed driver_info extra (allowed: %s)", strings.Join(DriverInfoExtras, ", "))
	}
	return nil
}

// decodeSection decodes one config-context section into out, naming the key
// of a wrongly typed value.
func decodeSection(device, field string, raw any, out any) error {
	b, err := json.Marshal(raw)
	if err != nil {
		return invalid(device, field, "cannot be read: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(out); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalid(device, field+"."+te.Field, "is a JSON %s, want %s", te.Value, te.Type)
		}
		return invalid(device, field, "%v", err)
	}
	return nil
}

// stringList reads an optional list of strings from the config context.
func stringList(d intent.Device, key string) ([]string, error) {
	raw, ok := d.ConfigContext[key]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, invalid(d.Name, "config_context."+key, "is a %T, want a list of addresses", raw)
	}
	out := make([]string, 0, len(list))
	for i, v := range list {
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, invalid(d.Name, fmt.Sprintf("config_context.%s[%d]", key, i), "want a non-empty string")
		}
		out = append(out, s)
	}
	return out, nil
}

// frontendNICs lists the frontend interfaces in natural name order.
func frontendNICs(d intent.Device, s IronicSettings) ([]NIC, error) {
	if s.InterfaceType == "" {
		return nil, invalid(d.Name, "config_context.ironic_settings.interface_type", "missing; it selects the frontend interfaces")
	}
	var ifs []intent.Interface
	for _, i := range d.Interfaces {
		if i.Type == s.InterfaceType && !i.MgmtOnly {
			ifs = append(ifs, i)
		}
	}
	sort.SliceStable(ifs, func(a, b int) bool { return intent.NaturalLess(ifs[a].Name, ifs[b].Name) })
	out := make([]NIC, 0, len(ifs))
	for _, i := range ifs {
		n := NIC{Name: i.Name}
		if i.MAC != "" {
			mac, err := net.ParseMAC(i.MAC)
			if err != nil || len(mac) != 6 {
				return nil, invalid(d.Name, "interfaces."+i.Name+".mac_address", "%q is not a MAC address", i.MAC)
			}
			n.MAC = mac.String()
		}
		if p := i.Peer; p != nil {
			if p.Kind != intent.PeerKindInterface {
				return nil, invalid(d.Name, "interfaces."+i.Name+".cable", "peer is a %s (%s %s), not a switch interface", p.Kind, p.Device, p.Port)
			}
			n.Switch, n.Port, n.PhysicalPort = p.Device, p.Port, p.Port
			if s.Bond != nil && s.Bond.LAG && p.PortLAG != "" {
				n.Port = p.PortLAG
			}
		}
		out = append(out, n)
	}
	return out, nil
}
