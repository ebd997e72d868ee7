package netboxhttp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// The renderers below build NetBox 4.2 shapes from the fake's normalised
// state. They run under fakes.NetBox.View and return fresh maps, never
// pointers into the state.

// timestamp is the created/last_updated of every object: the fake keeps no
// change log.
const timestamp = "2026-01-01T00:00:00.000000Z"

func choice(value, label string) map[string]any {
	return map[string]any{"value": value, "label": label}
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

var interfaceTypeLabels = map[string]string{
	"virtual":           "Virtual",
	"lag":               "Link Aggregation Group (LAG)",
	"1000base-t":        "1000BASE-T (1GE)",
	"10gbase-x-sfpp":    "SFP+ (10GE)",
	"25gbase-x-sfp28":   "SFP28 (25GE)",
	"100gbase-x-qsfp28": "QSFP28 (100GE)",
	"200gbase-x-qsfp56": "QSFP56 (200GE)",
	"400gbase-x-osfp":   "OSFP (400GE)",
}

func typeLabel(v string) string {
	if l, ok := interfaceTypeLabels[v]; ok {
		return l
	}
	return v
}

func copyJSON(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func customFields(cf map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range cf {
		out[k] = copyJSON(v)
	}
	return out
}

func briefDevice(b string, d *fakes.NBDevice) map[string]any {
	return map[string]any{
		"id": d.ID, "url": fmt.Sprintf("%s/api/dcim/devices/%d/", b, d.ID), "display": d.Name,
		"name": d.Name, "description": "",
	}
}

func briefManufacturer(b string, m *fakes.NBManufacturer) map[string]any {
	if m == nil {
		return nil
	}
	return map[string]any{
		"id": m.ID, "url": fmt.Sprintf("%s/api/dcim/manufacturers/%d/", b, m.ID), "display": m.Name,
		"name": m.Name, "slug": m.Slug, "description": "",
	}
}

func briefDeviceType(b string, st *fakes.NetBoxState, dt *fakes.NBDeviceType) map[string]any {
	if dt == nil {
		return nil
	}
	return map[string]any{
		"id": dt.ID, "url": fmt.Sprintf("%s/api/dcim/device-types/%d/", b, dt.ID), "display": dt.Model,
		"manufacturer": briefManufacturer(b, st.Manufacturers[dt.ManufacturerID]),
		"model":        dt.Model, "slug": dt.Slug, "description": "",
	}
}

func renderDeviceType(b string, st *fakes.NetBoxState, dt *fakes.NBDeviceType) map[string]any {
	out := briefDeviceType(b, st, dt)
	n := 0
	for _, d := range st.Devices {
		if d.DeviceTypeID == dt.ID {
			n++
		}
	}
	for k, v := range map[string]any{
		"display_url":      fmt.Sprintf("%s/dcim/device-types/%d/", b, dt.ID),
		"default_platform": nil, "part_number": "", "u_height": 1.0, "exclude_from_utilization": false,
		"is_full_depth": true, "subdevice_role": nil, "airflow": nil, "weight": nil, "weight_unit": nil,
		"front_image": nil, "rear_image": nil, "comments": "", "tags": []any{},
		"custom_fields": customFields(dt.CustomFields), "created": timestamp, "last_updated": timestamp,
		"device_count": n, "console_port_template_count": 0, "console_server_port_template_count": 0,
		"power_port_template_count": 0, "power_outlet_template_count": 0, "interface_template_count": 0,
		"front_port_template_count": 0, "rear_port_template_count": 0, "device_bay_template_count": 0,
		"module_bay_template_count": 0, "inventory_item_template_count": 0,
	} {
		out[k] = v
	}
	return out
}

func briefRole(b string, r *fakes.NBRole) map[string]any {
	if r == nil {
		return nil
	}
	return map[string]any{
		"id": r.ID, "url": fmt.Sprintf("%s/api/dcim/device-roles/%d/", b, r.ID), "display": r.Name,
		"name": r.Name, "slug": r.Slug, "description": "",
	}
}

func renderRole(b string, st *fakes.NetBoxState, r *fakes.NBRole) map[string]any {
	out := briefRole(b, r)
	n := 0
	for _, d := range st.Devices {
		if d.RoleID == r.ID {
			n++
		}
	}
	for k, v := range map[string]any{
		"display_url": fmt.Sprintf("%s/dcim/device-roles/%d/", b, r.ID),
		"color":       "9e9e9e", "vm_role": false, "config_template": nil, "tags": []any{},
		"custom_fields": customFields(r.CustomFields), "created": timestamp, "last_updated": timestamp,
		"device_count": n, "virtualmachine_count": 0,
	} {
		out[k] = v
	}
	return out
}

func briefSite(b string, s *fakes.NBSite) map[string]any {
	if s == nil {
		return nil
	}
	return map[string]any{
		"id": s.ID, "url": fmt.Sprintf("%s/api/dcim/sites/%d/", b, s.ID), "display": s.Name,
		"name": s.Name, "slug": s.Slug, "description": "",
	}
}

// briefIP renders an address the fake stores as a string. The fake has no
// IP address objects; the id is synthesised from the device id.
func briefIP(b string, id int, addr string) any {
	if addr == "" {
		return nil
	}
	family := map[string]any{"value": 4, "label": "IPv4"}
	if strings.Contains(addr, ":") {
		family = map[string]any{"value": 6, "label": "IPv6"}
	}
	return map[string]any{
		"id": id, "url": fmt.Sprintf("%s/api/ipam/ip-addresses/%d/", b, id), "display": addr,
		"family": family, "address": addr, "description": "",
	}
}

func nestedTag(b string, t *fakes.NBTag) map[string]any {
	return map[string]any{
		"id": t.ID, "url": fmt.Sprintf("%s/api/extras/tags/%d/", b, t.ID),
		"display_url": fmt.Sprintf("%s/extras/tags/%d/", b, t.ID), "display": t.Name,
		"name": t.Name, "slug": t.Slug, "color": "9e9e9e",
	}
}

func renderTag(b string, st *fakes.NetBoxState, t *fakes.NBTag) map[string]any {
	out := nestedTag(b, t)
	n := 0
	for _, d := range st.Devices {
		if contains(d.TagIDs, t.ID) {
			n++
		}
	}
	out["description"] = ""
	out["object_types"] = []any{}
	out["tagged_items"] = n
	out["created"] = timestamp
	out["last_updated"] = timestamp
	return out
}

func renderDevice(b string, st *fakes.NetBoxState, d *fakes.NBDevice, exclude map[string]bool) map[string]any {
	tags := []any{}
	tagObjs := make([]*fakes.NBTag, 0, len(d.TagIDs))
	for _, id := range d.TagIDs {
		if t := st.Tags[id]; t != nil {
			tagObjs = append(tagObjs, t)
		}
	}
	sort.Slice(tagObjs, func(i, j int) bool { return tagObjs[i].Name < tagObjs[j].Name })
	for _, t := range tagObjs {
		tags = append(tags, nestedTag(b, t))
	}
	nIfs := 0
	for _, i := range st.Interfaces {
		if i.DeviceID == d.ID {
			nIfs++
		}
	}
	primary := briefIP(b, d.ID*10+2, d.PrimaryIP4)
	out := map[string]any{
		"id": d.ID, "url": fmt.Sprintf("%s/api/dcim/devices/%d/", b, d.ID),
		"display_url": fmt.Sprintf("%s/dcim/devices/%d/", b, d.ID), "display": d.Name,
		"name": d.Name, "device_type": briefDeviceType(b, st, st.DeviceTypes[d.DeviceTypeID]),
		"role": briefRole(b, st.Roles[d.RoleID]), "tenant": nil, "platform": nil,
		"serial": d.Serial, "asset_tag": nil, "site": briefSite(b, st.Sites[d.SiteID]),
		"location": nil, "rack": nil, "position": nil, "face": nil, "latitude": nil, "longitude": nil,
		"parent_device": nil, "status": choice(d.Status, title(d.Status)), "airflow": nil,
		"primary_ip": primary, "primary_ip4": primary, "primary_ip6": nil,
		"oob_ip": briefIP(b, d.ID*10+1, d.OOBIP), "cluster": nil, "virtual_chassis": nil,
		"vc_position": nil, "vc_priority": nil, "description": "", "comments": "",
		"config_template": nil, "config_context": copyJSON(d.ConfigContext), "local_context_data": nil,
		"tags": tags, "custom_fields": customFields(d.CustomFields),
		"created": timestamp, "last_updated": timestamp,
		"console_port_count": 0, "console_server_port_count": 0, "power_port_count": 0,
		"power_outlet_count": 0, "interface_count": nIfs, "front_port_count": 0, "rear_port_count": 0,
		"device_bay_count": 0, "module_bay_count": 0, "inventory_item_count": 0,
	}
	if d.ConfigContext == nil {
		out["config_context"] = map[string]any{}
	}
	for k := range exclude {
		delete(out, k)
	}
	return out
}

func nestedInterface(b string, st *fakes.NetBoxState, i *fakes.NBInterface) map[string]any {
	out := briefInterface(b, st, i)
	delete(out, "description")
	out["display_url"] = fmt.Sprintf("%s/dcim/interfaces/%d/", b, i.ID)
	return out
}

func briefInterface(b string, st *fakes.NetBoxState, i *fakes.NBInterface) map[string]any {
	var dev any
	if d := st.Devices[i.DeviceID]; d != nil {
		dev = briefDevice(b, d)
	}
	var cable any
	if c := st.Cables[i.CableID]; c != nil {
		cable = briefCable(b, c)
	}
	return map[string]any{
		"id": i.ID, "url": fmt.Sprintf("%s/api/dcim/interfaces/%d/", b, i.ID), "display": i.Name,
		"device": dev, "name": i.Name, "description": "", "cable": cable, "_occupied": cable != nil,
	}
}

func briefCable(b string, c *fakes.NBCable) map[string]any {
	return map[string]any{
		"id": c.ID, "url": fmt.Sprintf("%s/api/dcim/cables/%d/", b, c.ID), "display": fmt.Sprintf("#%d", c.ID),
		"label": "", "description": "",
	}
}

func renderInterface(b string, st *fakes.NetBoxState, i *fakes.NBInterface) map[string]any {
	out := briefInterface(b, st, i)
	var lag any
	if l := st.Interfaces[i.LAGID]; l != nil && i.LAGID != 0 {
		lag = nestedInterface(b, st, l)
	}
	var mac, primaryMAC any
	macs := []any{}
	if i.MAC != "" {
		m := strings.ToUpper(i.MAC)
		mac = m
		primaryMAC = map[string]any{
			"id": i.ID, "url": fmt.Sprintf("%s/api/dcim/mac-addresses/%d/", b, i.ID), "display": m,
			"mac_address": m, "description": "",
		}
		macs = append(macs, primaryMAC)
	}
	cableEnd := ""
	peers := []any{}
	var peersType any
	if c := st.Cables[i.CableID]; c != nil && i.CableID != 0 {
		near, far := "A", c.B
		for _, t := range c.B {
			if t.ObjectType == intent.PeerKindInterface && t.ObjectID == i.ID {
				near, far = "B", c.A
			}
		}
		cableEnd = near
		for _, t := range far {
			peers = append(peers, renderTermination(b, st, t))
		}
		if len(far) > 0 {
			peersType = far[0].ObjectType
		}
	}
	for k, v := range map[string]any{
		"display_url": fmt.Sprintf("%s/dcim/interfaces/%d/", b, i.ID),
		"vdcs":        []any{}, "module": nil, "label": "",
		"type":    choice(i.Type, typeLabel(i.Type)),
		"enabled": i.Enabled, "parent": nil, "bridge": nil, "lag": lag, "mtu": nil,
		"mac_address": mac, "primary_mac_address": primaryMAC, "mac_addresses": macs,
		"speed": nil, "duplex": nil, "wwn": nil, "mgmt_only": i.MgmtOnly, "mode": nil,
		"rf_role": nil, "rf_channel": nil, "poe_mode": nil, "poe_type": nil,
		"rf_channel_frequency": nil, "rf_channel_width": nil, "tx_power": nil,
		"untagged_vlan": nil, "tagged_vlans": []any{}, "qinq_svlan": nil, "vlan_translation_policy": nil,
		"mark_connected": false, "cable_end": cableEnd, "wireless_link": nil,
		"link_peers": peers, "link_peers_type": peersType, "wireless_lans": []any{}, "vrf": nil,
		"l2vpn_termination": nil, "connected_endpoints": nil, "connected_endpoints_type": nil,
		"connected_endpoints_reachable": false, "tags": []any{}, "custom_fields": map[string]any{},
		"created": timestamp, "last_updated": timestamp, "count_ipaddresses": 0, "count_fhrp_groups": 0,
	} {
		out[k] = v
	}
	return out
}

// terminationDevice is the id of the device a cable termination belongs to.
func terminationDevice(st *fakes.NetBoxState, t fakes.NBTermination) int {
	if t.ObjectType == intent.PeerKindInterface {
		if i := st.Interfaces[t.ObjectID]; i != nil {
			return i.DeviceID
		}
	}
	return t.DeviceID
}

// renderTermination renders a cable end in its Brief form: a BriefInterface,
// a BriefFrontPort-like object (device + name), or, for terminations the fake
// does not attach to a device, an object with display and name only.
func renderTermination(b string, st *fakes.NetBoxState, t fakes.NBTermination) map[string]any {
	if t.ObjectType == intent.PeerKindInterface {
		if i := st.Interfaces[t.ObjectID]; i != nil {
			return briefInterface(b, st, i)
		}
	}
	app, model, _ := strings.Cut(t.ObjectType, ".")
	out := map[string]any{
		"id": t.ObjectID, "url": fmt.Sprintf("%s/api/%s/%ss/%d/", b, app, model, t.ObjectID),
		"display": t.Name, "name": t.Name, "description": "", "_occupied": true,
	}
	if d := st.Devices[t.DeviceID]; d != nil {
		out["device"] = briefDevice(b, d)
	}
	return out
}

func renderCable(b string, st *fakes.NetBoxState, c *fakes.NBCable) map[string]any {
	ends := func(ts []fakes.NBTermination) []any {
		out := []any{}
		for _, t := range ts {
			out = append(out, map[string]any{
				"object_type": t.ObjectType, "object_id": t.ObjectID, "object": renderTermination(b, st, t),
			})
		}
		return out
	}
	out := briefCable(b, c)
	for k, v := range map[string]any{
		"display_url": fmt.Sprintf("%s/dcim/cables/%d/", b, c.ID), "type": nil,
		"a_terminations": ends(c.A), "b_terminations": ends(c.B),
		"status": choice(c.Status, title(c.Status)), "tenant": nil, "color": "", "length": nil,
		"length_unit": nil, "comments": "", "tags": []any{}, "custom_fields": map[string]any{},
		"created": timestamp, "last_updated": timestamp,
	} {
		out[k] = v
	}
	return out
}
