package extensions

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/internal/realdata"
)

func r7615() intent.Device {
	return intent.Device{
		ID: 4711, Name: "cpu-r3-u17", Status: intent.StatusActive, Serial: "NETBOX-SERIAL",
		Role:          intent.Role{Slug: "cpu-baremetal", DeviceClass: intent.ClassCPUBaremetal},
		DeviceType:    intent.DeviceType{Manufacturer: "Dell", Model: "PowerEdge R7615"},
		Site:          intent.Site{Slug: "dc1"},
		OOBIP:         "10.46.96.157",
		Tags:          []string{"ironic"},
		PlatformClass: "NONE_R7615_CX6_01",
		Interfaces: []intent.Interface{
			{Name: "iDRAC", MAC: "", MgmtOnly: true},
			{Name: "eno3np0", MAC: "D4:04:E6:4F:71:28", Peer: &intent.Peer{Kind: intent.PeerKindInterface, Device: "f20-3-1", Port: "Ethernet1/4"}},
			{Name: "eno4np1", Peer: &intent.Peer{Kind: intent.PeerKindInterface, Device: "f20-3-2", Port: "Ethernet1/4"}},
		},
	}
}

func TestServerRegisteredMapsIntentAndInventory(t *testing.T) {
	inv := realdata.Read(t, "ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json")
	ev, err := ServerRegistered("run-1", r7615(), inv, "6f1e3a52-node")
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "serverRegistered/run-1" || ev.Stage != ServerRegisteredStage || ev.HasSecrets {
		t.Fatalf("event %s %s secrets=%v", ev.ID, ev.Stage, ev.HasSecrets)
	}
	var p ServerPayload
	dec := json.NewDecoder(bytes.NewReader(ev.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("the payload is not a server object: %v", err)
	}
	s := p.Server
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	num := func(p *int) int {
		if p == nil {
			return -1
		}
		return *p
	}
	checks := map[string][2]any{
		"serverId":          {num(s.ServerID), 4711},
		"vendor":            {str(s.Vendor), "Dell"},
		"model":             {str(s.Model), "PowerEdge R7615"},
		"managementAddress": {str(s.ManagementAddress), "10.46.96.157"},
		"datacenterName":    {str(s.DatacenterName), "dc1"},
		"serverClass":       {str(s.ServerClass), "cpu-baremetal"},
		"serverStatus":      {str(s.ServerStatus), "available"},
		"ironicNode":        {s.IronicNode, "6f1e3a52-node"},
		"netboxDevice":      {s.NetBoxDevice, "cpu-r3-u17"},
		"interfaces":        {len(s.Interfaces), 2},
		"diskCount":         {num(s.DiskCount), len(s.Disks)},
	}
	for field, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", field, c[0], c[1])
		}
	}
	// From the inventory: what only the host knows.
	if str(s.SerialNumber) == "NETBOX-SERIAL" || str(s.SerialNumber) == "<nil>" {
		t.Errorf("serialNumber %s: the inventory's system serial comes first", str(s.SerialNumber))
	}
	if s.BIOSInfo == nil || s.BIOSInfo.Version == "" || str(s.ProcessorName) == "<nil>" || num(s.ProcessorThreads) <= 0 || num(s.RAMGbytes) <= 0 || len(s.Disks) == 0 {
		t.Errorf("inventory fields missing: bios %+v cpu %s threads %d ram %d disks %d", s.BIOSInfo, str(s.ProcessorName), num(s.ProcessorThreads), num(s.RAMGbytes), len(s.Disks))
	}
	for _, d := range s.Disks {
		if d.ServerDiskSizeGB <= 0 || d.ServerDiskType == "" || d.ServerDiskName == "" {
			t.Errorf("disk %+v", d)
		}
	}
	i0 := s.Interfaces[0]
	if i0.ServerInterfaceName != "eno3np0" || i0.ServerInterfaceMacAddress != "d4:04:e6:4f:71:28" || i0.NetworkEquipmentIdentifierString != "f20-3-1" ||
		i0.NetworkEquipmentInterfaceIdentifierString != "Ethernet1/4" || i0.ServerInterfaceCapacityMbps <= 0 {
		t.Errorf("first interface %+v", i0)
	}
	if s.Interfaces[1].ServerInterfaceMacAddress == "" {
		t.Errorf("an interface without a NetBox MAC takes the inventory's: %+v", s.Interfaces[1])
	}
	if s.PasswordEncrypted != nil || s.Username != nil || s.RackName != nil {
		t.Error("credentials and unknown fields must stay null/absent")
	}

	again, _ := ServerRegistered("run-1", r7615(), inv, "6f1e3a52-node")
	if again.ID != ev.ID || !bytes.Equal(again.Payload, ev.Payload) {
		t.Error("the same run must build the same event")
	}
	// A later enrollment run registers the same host with the same
	// payload: a new event, whose deliveries receivers must not drop.
	other, _ := ServerRegistered("run-2", r7615(), inv, "6f1e3a52-node")
	if other.ID == ev.ID || DeliveryID(other.ID, "x", "t") == DeliveryID(ev.ID, "x", "t") || !bytes.Equal(other.Payload, ev.Payload) {
		t.Error("another enrollment run is another event")
	}
	if _, err := ServerRegistered("run-1", r7615(), []byte(`{"nope": 1}`), "n"); !PayloadInvalid.Is(err) {
		t.Errorf("an unreadable inventory: %v, want %s", err, PayloadInvalid.Code)
	}
	if _, err := ServerRegistered("", r7615(), inv, "n"); !EventInvalid.Is(err) {
		t.Errorf("no run: %v, want %s", err, EventInvalid.Code)
	}
}
