package extensions_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/extensions"
)

// netboxBody is a request of NetBox's event rules for a device, shaped as
// NetBox 4.2 sends it (json.dumps of the webhook context): data is the
// REST serialisation, snapshots hold the stored fields.
func netboxBody(event, role, status, was string) []byte {
	pre := "null"
	if was != "" {
		pre = fmt.Sprintf(`{"name": "cpu-r1-u10", "status": %q, "role": 7, "serial": "6SBT0R3", "tags": ["gpu"]}`, was)
	}
	return []byte(fmt.Sprintf(`{"event": %q, "timestamp": "2026-03-06T15:11:23.503186+00:00", "model": "device", "username": "ops",
  "request_id": "fdbca812-3142-4783-b364-2e2bd5c16c6a",
  "data": {"id": 42, "url": "https://netbox.example.net/api/dcim/devices/42/", "display": "cpu-r1-u10", "name": "cpu-r1-u10",
    "device_type": {"id": 3, "display": "PowerEdge R450", "manufacturer": {"id": 1, "name": "Dell", "slug": "dell"}, "model": "PowerEdge R450", "slug": "r450"},
    "role": {"id": 7, "name": "Role", "slug": %q}, "platform": {"id": 2, "name": "SONiC", "slug": "sonic"},
    "serial": "6SBT0R3", "asset_tag": "AT-9", "site": {"id": 1, "name": "DC West", "slug": "dc-west"},
    "location": {"id": 5, "name": "Room A", "slug": "room-a"}, "rack": {"id": 9, "name": "R1"}, "position": 10.0,
    "status": {"value": %q, "label": "X"}, "primary_ip4": {"id": 11, "family": 4, "address": "10.1.0.10/24"},
    "oob_ip": {"id": 12, "family": 4, "address": "10.0.0.10/24"}, "description": "",
    "tags": [{"id": 1, "name": "GPU", "slug": "gpu"}], "custom_fields": {"platform_class": "gpu-a"},
    "created": "2026-01-02T03:04:05.000000Z"},
  "snapshots": {"prechange": %s, "postchange": {"status": %q}}}`, event, role, status, pre, status))
}

func stagesOf(evs extensions.Events) string {
	var s []string
	for _, e := range evs.Events {
		s = append(s, string(e.Stage))
	}
	return strings.Join(s, ",")
}

// The mapping of NetBox's device events to stages.
func TestNetBoxEventsMapToStages(t *testing.T) {
	rules := extensions.NetBoxRules{SwitchRoles: []string{"leaf", "spine"}, StageDeadline: 20 * time.Minute}
	for name, c := range map[string]struct {
		body []byte
		want string
	}{
		"server decommissioning":        {netboxBody("updated", "compute", "decommissioning", "active"), "serverDecommissioned,serverDeleteDNS"},
		"server offline":                {netboxBody("updated", "compute", "offline", "active"), "serverDecommissioned,serverDeleteDNS"},
		"server deleted in service":     {netboxBody("deleted", "compute", "active", ""), "serverDecommissioned,serverDeleteDNS"},
		"server deleted once offline":   {netboxBody("deleted", "compute", "offline", ""), ""},
		"server already offline":        {netboxBody("updated", "compute", "decommissioning", "offline"), ""},
		"server activated":              {netboxBody("updated", "compute", "active", "planned"), ""},
		"server renamed":                {netboxBody("updated", "compute", "active", "active"), ""},
		"switch activated":              {netboxBody("updated", "leaf", "active", "planned"), "switchRegistered,switchCreateDNS"},
		"switch created active":         {netboxBody("created", "spine", "active", ""), "switchRegistered,switchCreateDNS"},
		"switch active again":           {netboxBody("updated", "leaf", "active", "active"), ""},
		"switch decommissioning":        {netboxBody("updated", "leaf", "decommissioning", "active"), "switchDecommissioned,switchDeleteDNS"},
		"switch deleted":                {netboxBody("deleted", "leaf", "active", ""), "switchDecommissioned,switchDeleteDNS"},
		"another model":                 {[]byte(`{"event": "updated", "model": "site", "request_id": "r", "data": {"id": 1}}`), ""},
		"object_type and request (4.4)": {[]byte(strings.Replace(strings.Replace(string(netboxBody("deleted", "compute", "active", "")), `"model": "device"`, `"object_type": "dcim.device"`, 1), `"request_id": "fdbca812-3142-4783-b364-2e2bd5c16c6a"`, `"request": {"id": "fdbca812-3142-4783-b364-2e2bd5c16c6a", "method": "DELETE"}`, 1)), "serverDecommissioned,serverDeleteDNS"},
	} {
		t.Run(name, func(t *testing.T) {
			evs, why, err := extensions.NetBoxEvents(c.body, rules)
			if err != nil {
				t.Fatal(err)
			}
			if got := stagesOf(evs); got != c.want {
				t.Fatalf("stages %q (%s), want %q", got, why, c.want)
			}
			if c.want == "" && why == "" {
				t.Error("nothing fires, but no reason is given")
			}
			for _, e := range evs.Events {
				if want := "netbox/fdbca812-3142-4783-b364-2e2bd5c16c6a/dcim.device/42/" + string(e.Stage); e.ID != want || e.StageDeadline != 20*time.Minute {
					t.Errorf("event %s (deadline %s), want ID %s and the rules' deadline", e.ID, e.StageDeadline, want)
				}
			}
		})
	}
	for name, body := range map[string]string{
		"not JSON":      `{"event": `,
		"no request ID": `{"event": "deleted", "model": "device", "data": {"id": 4}}`,
		"no device ID":  `{"event": "deleted", "model": "device", "request_id": "r", "data": {"name": "x"}}`,
	} {
		if _, _, err := extensions.NetBoxEvents([]byte(body), rules); !extensions.PayloadInvalid.Is(err) {
			t.Errorf("%s: %v, want %s", name, err, extensions.PayloadInvalid.Code)
		}
	}
}

// The payloads carry the device's fields as the package documentation
// maps them, and leave out what NetBox has no source for.
func TestNetBoxEventPayloads(t *testing.T) {
	evs, _, err := extensions.NetBoxEvents(netboxBody("updated", "compute", "decommissioning", "active"), extensions.NetBoxRules{})
	if err != nil || len(evs.Events) != 2 {
		t.Fatalf("%v %v", evs, err)
	}
	var srv struct {
		Server map[string]any `json:"server"`
	}
	_ = json.Unmarshal(evs.Events[0].Payload, &srv)
	want := map[string]any{"serverId": 42.0, "netboxDevice": "cpu-r1-u10", "serverStatus": "decommissioning", "serialNumber": "6SBT0R3",
		"model": "PowerEdge R450", "vendor": "Dell", "datacenterName": "dc-west", "siteId": 1.0, "serverClass": "compute", "rackName": "R1",
		"rackPositionLowerUnit": 10.0, "managementAddress": "10.0.0.10", "serverCreatedTimestamp": "2026-01-02T03:04:05.000000Z",
		"tags": []any{"gpu"}, "platformClass": "gpu-a"}
	if fmt.Sprint(srv.Server) != fmt.Sprint(want) {
		t.Errorf("server object\n got %v\nwant %v", srv.Server, want)
	}
	var dns map[string]map[string]any
	_ = json.Unmarshal(evs.Events[1].Payload, &dns)
	if got := fmt.Sprint(dns["serverDNSRecordSet"]); got != fmt.Sprint(map[string]any{"serverId": 42.0, "serialNumber": "6SBT0R3", "managementAddress": "10.0.0.10",
		"hostname": "cpu-r1-u10", "ip": map[string]any{"ip": "10.0.0.10"}, "operation": "delete", "netboxDevice": "cpu-r1-u10"}) {
		t.Errorf("serverDNSRecordSet %s", got)
	}

	evs, _, _ = extensions.NetBoxEvents(netboxBody("updated", "leaf", "active", "planned"), extensions.NetBoxRules{SwitchRoles: []string{"leaf"}})
	var sw map[string]map[string]any
	_ = json.Unmarshal(evs.Events[0].Payload, &sw)
	nd := sw["networkDevice"]
	for k, v := range map[string]any{"id": "42", "identifierString": "cpu-r1-u10", "status": "active", "serialNumber": "6SBT0R3", "chassisIdentifier": "AT-9",
		"siteId": 1.0, "datacenterMeta": "dc-west", "datacenterRoom": "Room A", "datacenterRack": "R1", "managementAddress": "10.0.0.10",
		"managementAddressPrefixLength": 24.0} {
		if fmt.Sprint(nd[k]) != fmt.Sprint(v) {
			t.Errorf("networkDevice.%s = %v, want %v", k, nd[k], v)
		}
	}
	for _, absent := range []string{"country", "city", "managementPassword", "asn", "mlagSystemMac", "username"} {
		if _, ok := nd[absent]; ok {
			t.Errorf("networkDevice.%s has no source in NetBox, but is set", absent)
		}
	}
	_ = json.Unmarshal(evs.Events[1].Payload, &sw)
	if got := fmt.Sprint(sw["switchDNSRecordSet"]); !strings.Contains(got, "operation:create") || !strings.Contains(got, "ip:map[ip:10.0.0.10 status:allocated]") || strings.Contains(got, "zone") {
		t.Errorf("switchDNSRecordSet %s", got)
	}

	noAddr := strings.Replace(string(netboxBody("updated", "compute", "offline", "active")), `"oob_ip": {"id": 12, "family": 4, "address": "10.0.0.10/24"}`, `"oob_ip": null`, 1)
	evs, _, _ = extensions.NetBoxEvents([]byte(noAddr), extensions.NetBoxRules{})
	if got := stagesOf(evs); got != "serverDecommissioned" {
		t.Errorf("a server without an out-of-band address fires %q: it has no BMC record to delete", got)
	}
}
