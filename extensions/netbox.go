package extensions

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hostforge/hostforge/bmc"
)

// NetBoxEvent is the request body NetBox's event rules send to a webhook
// without a body template: the event ("created", "updated", "deleted"),
// when, the model, who, the request's ID, the object as the REST API
// serialises it (data) and minimal snapshots before and after the change.
// NetBox 4.4 adds object_type ("dcim.device") and request {id, ...}
// beside the model, username and request_id it deprecates; both are read.
type NetBoxEvent struct {
	Event      string          `json:"event"`
	Timestamp  string          `json:"timestamp"`
	Model      string          `json:"model"`
	ObjectType string          `json:"object_type"`
	Username   string          `json:"username"`
	RequestID  string          `json:"request_id"`
	Request    *netboxRequest  `json:"request"`
	Data       json.RawMessage `json:"data"`
	Snapshots  *struct {
		Prechange  json.RawMessage `json:"prechange"`
		Postchange json.RawMessage `json:"postchange"`
	} `json:"snapshots"`
}

type netboxRequest struct {
	ID string `json:"id"`
}

// NetBoxRules say how NetBox's events map to stages: which device roles
// are switches, and the stage deadline of the events fired.
type NetBoxRules struct {
	// SwitchRoles are the device role slugs of switches
	// (extensions.switch_roles); every other device is a server.
	SwitchRoles []string
	// StageDeadline is the events' stage deadline.
	StageDeadline time.Duration
}

// netboxDevice is the part of NetBox's device serialisation the payloads
// map. Brief related objects carry their slug and name.
type netboxDevice struct {
	ID         int            `json:"id"`
	Name       string         `json:"name"`
	Serial     string         `json:"serial"`
	AssetTag   *string        `json:"asset_tag"`
	DeviceType *netboxType    `json:"device_type"`
	Role       *netboxNamed   `json:"role"`
	DeviceRole *netboxNamed   `json:"device_role"` // NetBox 3.x
	Platform   *netboxNamed   `json:"platform"`
	Site       *netboxNamed   `json:"site"`
	Location   *netboxNamed   `json:"location"`
	Rack       *netboxNamed   `json:"rack"`
	Position   *float64       `json:"position"`
	Status     netboxChoice   `json:"status"`
	PrimaryIP4 *netboxIP      `json:"primary_ip4"`
	OOBIP      *netboxIP      `json:"oob_ip"`
	Desc       string         `json:"description"`
	Tags       []netboxNamed  `json:"tags"`
	Custom     map[string]any `json:"custom_fields"`
	Created    string         `json:"created"`
}

type netboxType struct {
	Model        string       `json:"model"`
	Manufacturer *netboxNamed `json:"manufacturer"`
}

type netboxNamed struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
}

// netboxChoice is a choice field: {"value", "label"} in data, the bare
// value in snapshots.
type netboxChoice struct {
	Value string `json:"value"`
}

func (c *netboxChoice) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		c.Value = s
		return nil
	}
	var o struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	c.Value = o.Value
	return nil
}

type netboxIP struct {
	Address string `json:"address"`
}

// outOfService are the NetBox statuses of a device that has left service.
var outOfService = []string{"decommissioning", "offline"}

// NetBoxEvents maps one request of NetBox's event rules to the events it
// fires, in order (their Key is the occurrence: the request and the
// object), or none with the reason nothing fires:
//
//	a server device (its role not a switch role) leaving service — its
//	status changed to decommissioning or offline, or it was deleted while
//	in service            serverDecommissioned, then serverDeleteDNS
//	a switch (role in SwitchRoles) reaching active — created active, or
//	its status changed to active        switchRegistered, then switchCreateDNS
//	a switch leaving service            switchDecommissioned, then switchDeleteDNS
//
// The DNS stage fires only for a device with a management address (its
// out-of-band IP; a switch's primary IPv4 otherwise). Every other model,
// event and change fires nothing. Each event's ID is
// "netbox/<request ID>/dcim.device/<device ID>/<stage>": NetBox's request
// ID (one per change request; a bulk edit's devices share it, hence the
// device) and the stage, so a request delivered again is the same events,
// which fire only what has not succeeded. A body that is not NetBox's
// (not JSON, no request ID, a device without an ID) is
// EXTENSION_PAYLOAD_INVALID.
func NetBoxEvents(body []byte, rules NetBoxRules) (Events, string, error) {
	var ev NetBoxEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return Events{}, "", PayloadInvalid.Wrap(err, "the NetBox event is not the JSON NetBox's event rules send")
	}
	model := ev.Model
	if model == "" {
		_, model, _ = strings.Cut(ev.ObjectType, ".")
	}
	reqID := ev.RequestID
	if reqID == "" && ev.Request != nil {
		reqID = ev.Request.ID
	}
	if model != "device" {
		return Events{}, fmt.Sprintf("model %q: only devices fire stages", model), nil
	}
	if reqID == "" {
		return Events{}, "", PayloadInvalid.New("the NetBox %s event of a device has no request_id: the events it fires need a stable ID", ev.Event)
	}
	var dev netboxDevice
	if err := json.Unmarshal(ev.Data, &dev); err != nil || dev.ID <= 0 {
		return Events{}, "", PayloadInvalid.New("the NetBox %s event's data is not a device with an id", ev.Event)
	}
	// A snapshot holds the model's fields as stored (related objects as
	// IDs, choices as their values): only the status is read from it.
	var prev *struct {
		Status netboxChoice `json:"status"`
	}
	if ev.Snapshots != nil && len(ev.Snapshots.Prechange) > 0 && string(ev.Snapshots.Prechange) != "null" {
		if err := json.Unmarshal(ev.Snapshots.Prechange, &prev); err != nil {
			prev = nil
		}
	}
	role := dev.role()
	isSwitch := role != "" && slices.Contains(rules.SwitchRoles, role)
	now, was := dev.Status.Value, ""
	if prev != nil {
		was = prev.Status.Value
	}
	out := slices.Contains(outOfService, now)
	var stages []Stage
	switch {
	case ev.Event == "deleted" && !out, ev.Event == "updated" && out && prev != nil && !slices.Contains(outOfService, was):
		stages = []Stage{ServerDecommissioned, ServerDeleteDNS}
		if isSwitch {
			stages = []Stage{SwitchDecommissioned, SwitchDeleteDNS}
		}
	case isSwitch && now == "active" && (ev.Event == "created" || ev.Event == "updated" && prev != nil && was != "active"):
		stages = []Stage{SwitchRegistered, SwitchCreateDNS}
	default:
		what := "server"
		if isSwitch {
			what = "switch"
		}
		return Events{}, fmt.Sprintf("%s %s %s (status %q, was %q): no stage fires", what, dev.Name, ev.Event, now, was), nil
	}
	key := fmt.Sprintf("netbox/%s/dcim.device/%d", reqID, dev.ID)
	res := Events{Key: key}
	for _, st := range stages {
		payload, ok := dev.payload(st, isSwitch)
		if !ok {
			continue
		}
		b, err := json.Marshal(payload)
		if err != nil {
			return Events{}, "", PayloadInvalid.Wrap(err, "device %s: the %s payload cannot be encoded", dev.Name, st)
		}
		e, _, err := NewEvent(key+"/"+string(st), st, b)
		if err != nil {
			return Events{}, "", err
		}
		e.StageDeadline = rules.StageDeadline
		res.Events = append(res.Events, e)
	}
	return res, "", nil
}

func (d *netboxDevice) role() string {
	if d.Role != nil {
		return d.Role.Slug
	}
	if d.DeviceRole != nil {
		return d.DeviceRole.Slug
	}
	return ""
}

// mgmtAddress is the device's management address without its prefix
// length, and the length: the out-of-band IP, else (for a switch) its
// primary IPv4.
func (d *netboxDevice) mgmtAddress(isSwitch bool) (string, int) {
	ip := d.OOBIP
	if (ip == nil || ip.Address == "") && isSwitch {
		ip = d.PrimaryIP4
	}
	if ip == nil || ip.Address == "" {
		return "", 0
	}
	if p, err := netip.ParsePrefix(ip.Address); err == nil {
		return p.Addr().String(), p.Bits()
	}
	return strings.TrimSpace(ip.Address), 0
}

// payload builds a stage's payload from the device; ok is false for a
// DNS stage of a device without a management address.
func (d *netboxDevice) payload(st Stage, isSwitch bool) (any, bool) {
	addr, bits := d.mgmtAddress(isSwitch)
	switch st {
	case ServerDecommissioned:
		return map[string]any{"server": d.server(addr)}, true
	case SwitchRegistered, SwitchDecommissioned:
		return map[string]any{"networkDevice": d.networkDevice(addr, bits)}, true
	case ServerDeleteDNS:
		if addr == "" {
			return nil, false
		}
		return map[string]any{"serverDNSRecordSet": d.dnsRecordSet("serverId", bmc.Hostname(d.Name), addr, "delete", "")}, true
	case SwitchCreateDNS, SwitchDeleteDNS:
		if addr == "" {
			return nil, false
		}
		op, status := "create", "allocated"
		if st == SwitchDeleteDNS {
			op, status = "delete", ""
		}
		return map[string]any{"switchDNSRecordSet": d.dnsRecordSet("switchId", strings.ToLower(strings.TrimSpace(d.Name)), addr, op, status)}, true
	}
	return nil, false
}

// server maps the device to the server object (see the package doc's
// mapping table); fields without a source are left out.
func (d *netboxDevice) server(addr string) map[string]any {
	s := map[string]any{"serverId": d.ID, "netboxDevice": d.Name, "serverStatus": d.Status.Value}
	put(s, "serialNumber", d.Serial)
	if t := d.DeviceType; t != nil {
		put(s, "model", t.Model)
		if t.Manufacturer != nil {
			put(s, "vendor", t.Manufacturer.Name)
		}
	}
	if d.Site != nil {
		put(s, "datacenterName", d.Site.Slug)
		s["siteId"] = d.Site.ID
	}
	put(s, "serverClass", d.role())
	if d.Rack != nil {
		put(s, "rackName", d.Rack.Name)
	}
	if d.Position != nil {
		s["rackPositionLowerUnit"] = int(math.Floor(*d.Position))
	}
	put(s, "managementAddress", addr)
	put(s, "serverCreatedTimestamp", d.Created)
	if tags := d.tagSlugs(); tags != nil {
		s["tags"] = tags
	}
	if pc, ok := d.Custom["platform_class"].(string); ok {
		put(s, "platformClass", pc)
	}
	return s
}

// networkDevice maps the device to the networkDevice object.
func (d *netboxDevice) networkDevice(addr string, bits int) map[string]any {
	n := map[string]any{"id": strconv.Itoa(d.ID), "identifierString": d.Name, "status": d.Status.Value, "netboxDevice": d.Name}
	put(n, "serialNumber", d.Serial)
	put(n, "description", d.Desc)
	if d.AssetTag != nil {
		put(n, "chassisIdentifier", *d.AssetTag)
	}
	if d.Site != nil {
		n["siteId"] = d.Site.ID
		put(n, "datacenterMeta", d.Site.Slug)
	}
	if d.Location != nil {
		put(n, "datacenterRoom", d.Location.Name)
	}
	if d.Rack != nil {
		put(n, "datacenterRack", d.Rack.Name)
	}
	if d.Position != nil {
		n["rackPositionLowerUnit"] = int(math.Floor(*d.Position))
	}
	put(n, "managementAddress", addr)
	if bits > 0 {
		n["managementAddressPrefixLength"] = bits
	}
	if d.Platform != nil && d.Platform.Slug != "" {
		n["driver"] = map[string]any{"name": d.Platform.Slug}
	}
	if r := d.role(); r != "" {
		n["position"] = map[string]any{"role": r}
	}
	if tags := d.tagSlugs(); tags != nil {
		n["tags"] = tags
	}
	return n
}

// dnsRecordSet is the record set of a BMC's or a switch's management
// interface: no zone (NetBox has none; an extension takes its zone from
// its configVars).
func (d *netboxDevice) dnsRecordSet(idKey, hostname, addr, op, status string) map[string]any {
	ip := map[string]any{"ip": addr}
	if status != "" {
		ip["status"] = status
	}
	r := map[string]any{idKey: d.ID, "managementAddress": addr, "hostname": hostname, "ip": ip, "operation": op, "netboxDevice": d.Name}
	if idKey == "serverId" {
		put(r, "serialNumber", d.Serial)
	}
	return r
}

func (d *netboxDevice) tagSlugs() []string {
	if len(d.Tags) == 0 {
		return nil
	}
	out := make([]string, 0, len(d.Tags))
	for _, t := range d.Tags {
		if t.Slug != "" {
			out = append(out, t.Slug)
		}
	}
	return out
}

// put sets a string field unless it is empty: a field without a source
// is left out.
func put(m map[string]any, k, v string) {
	if v = strings.TrimSpace(v); v != "" {
		m[k] = v
	}
}
