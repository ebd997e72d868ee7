package wiring_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/retirement"
)

const retireBase = "site: lab1\nnetbox:\n  url: https://netbox.example.net\n  token_env: T\n"

func TestRetireSection(t *testing.T) {
	cfg, err := wiring.Parse("lab.yaml", []byte(retireBase+"retire:\n  erase: full\n  keep_node: true\n  archive_retention: 720h\n  dns_zone:\n    name: lab1.example.net\n    ttl: 600\n"))
	if err != nil {
		t.Fatal(err)
	}
	rc := cfg.RetireSiteConfig()
	if rc.Erase != retirement.EraseFull || !rc.KeepNode || rc.ArchiveRetention != 720*time.Hour || rc.DNSZone.Name != "lab1.example.net" || rc.DNSZone.TTL != 600 || rc.Events || rc.Ledger {
		t.Fatalf("retire settings %+v", rc)
	}
	def, err := wiring.Parse("lab.yaml", []byte(retireBase))
	if err != nil {
		t.Fatal(err)
	}
	if rc := def.RetireSiteConfig(); rc.Erase != retirement.EraseMetadata || rc.KeepNode || rc.ArchiveRetention != 90*24*time.Hour || rc.MonitoringItem != "ipmi-exporter" {
		t.Fatalf("defaults %+v", rc)
	}
	for doc, key := range map[string]string{
		"retire:\n  erase: shred\n":                  "retire.erase",
		"retire:\n  archive_retention: -1h\n":        "retire.archive_retention",
		"retire:\n  dns_zone:\n    name: 'a zone'\n": "retire.dns_zone.name",
		"retire:\n  wipe: true\n":                    "retire.wipe",
	} {
		if _, err := wiring.Parse("lab.yaml", []byte(retireBase+doc)); err == nil || !strings.Contains(err.Error(), key) || !wiring.ConfigInvalid.Is(err) {
			t.Errorf("%q: %v; want CONFIG_INVALID naming %s", doc, err, key)
		}
	}
	var documented bool
	for _, k := range wiring.Reference {
		documented = documented || k.Name == "retire"
	}
	if !documented {
		t.Fatal("the config reference does not document the retire: section")
	}
}

func announcement(t *testing.T, stage string) retirement.Announcement {
	t.Helper()
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "cpu-r1-u10"})
	d, err := site.NetBox.Device(context.Background(), h.Name)
	if err != nil {
		t.Fatal(err)
	}
	return retirement.Announcement{ID: "retire-abc/" + stage, Stage: stage, Host: retirement.Host{
		Device: d, Instance: "ironic-cpu", Node: "node-1", Inventory: fakes.InventoryJSON(h),
		BMCHostname: "cpu-r1-u10", BMCAddress: h.OOBIP, Zone: retirement.DNSZone{Name: "lab1.example.net.", NameServers: []string{"ns1"}, TTL: 600},
	}}
}

// The two events carry seed 004's payloads: the server object, and the
// BMC's DNS record set for deletion.
func TestRetirementEventPayloads(t *testing.T) {
	dec := announcement(t, retirement.StageDecommissioned)
	ev, err := wiring.RetirementEvent(dec)
	if err != nil || ev.ID != dec.ID || ev.Stage != extensions.ServerDecommissioned {
		t.Fatalf("event %+v, %v", ev, err)
	}
	var sp extensions.ServerPayload
	if err := json.Unmarshal(ev.Payload, &sp); err != nil {
		t.Fatal(err)
	}
	s := sp.Server
	if s.NetBoxDevice != "cpu-r1-u10" || s.IronicNode != "node-1" || s.ServerStatus == nil || *s.ServerStatus != "decommissioned" || s.ServerID == nil || *s.ServerID != dec.Host.Device.ID || s.ProcessorCount == nil {
		t.Fatalf("server object %+v", s)
	}
	dns := announcement(t, retirement.StageDeleteDNS)
	ev, err = wiring.RetirementEvent(dns)
	if err != nil || ev.Stage != extensions.ServerDeleteDNS {
		t.Fatalf("event %+v, %v", ev, err)
	}
	var dp extensions.ServerDNSPayload
	if err := json.Unmarshal(ev.Payload, &dp); err != nil {
		t.Fatal(err)
	}
	rs := dp.ServerDNSRecordSet
	if rs.Operation != "delete" || rs.Hostname != "cpu-r1-u10" || rs.FQDN != "cpu-r1-u10.lab1.example.net" || rs.IP.IP != dns.Host.BMCAddress || rs.ManagementAddress != dns.Host.BMCAddress || rs.Zone.ZoneName != "lab1.example.net." || rs.ServerID != dns.Host.Device.ID {
		t.Fatalf("record set %+v", rs)
	}
	if _, err := wiring.RetirementEvent(retirement.Announcement{ID: "x", Stage: "serverRegistered"}); !extensions.EventInvalid.Is(err) {
		t.Fatalf("another stage: %v", err)
	}
}

// AnnounceRetirement dispatches through extensions.Fire on the runtime it
// is given: each bound task gets the delivery ID of the announcement's
// event, the same on a re-fire.
func TestAnnounceRetirementFiresThroughDispatch(t *testing.T) {
	def := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "dns", "label": "dns", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverDecommissioned", "tasks": [{"label": "forget", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "https://dns.example.net/forget", "method": "POST", "requestTemplate": "{{ server.netboxDevice }}"}}]},
  {"stage": "serverDeleteDNS", "tasks": [{"label": "delete-record", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "https://dns.example.net/delete", "method": "POST", "requestTemplate": "{{ serverDNSRecordSet.fqdn }}"}}]}]}`
	x, problems := extensions.Parse([]byte(def), "dns.json")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	reg, err := extensions.NewRegistry(x)
	if err != nil {
		t.Fatal(err)
	}
	runner := extensionsfake.NewRunner()
	d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: runner}, extensionsfake.NewStore())
	rt := &flow.Local{Steps: d, Clock: clock.NewFake(clock.Epoch), RoundTrip: true}
	for _, stage := range retirement.Stages {
		a := announcement(t, stage)
		dels, err := wiring.AnnounceRetirement(context.Background(), rt, a)
		if err != nil || len(dels) != 1 || dels[0].Status != retirement.DeliverySucceeded || dels[0].Event != a.ID || dels[0].Stage != stage {
			t.Fatalf("%s: %+v, %v", stage, dels, err)
		}
		if want := extensions.DeliveryID(a.ID, "dns", dels[0].Task); dels[0].DeliveryID != want {
			t.Fatalf("delivery ID %s, want %s", dels[0].DeliveryID, want)
		}
	}
	reqs := runner.Requests()
	if len(reqs) != 2 || string(reqs[0].Body) != "cpu-r1-u10" || string(reqs[1].Body) != "cpu-r1-u10.lab1.example.net" {
		t.Fatalf("requests %+v", reqs)
	}
}
