package verify_test

import (
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/internal/realdata"
	"github.com/hostforge/hostforge/verify"
)

func tlv(typ int, h string) verify.TLV {
	b, err := hex.DecodeString(h)
	if err != nil {
		panic(err)
	}
	return verify.TLV{Type: typ, Value: b}
}

func TestDecodeLLDPIDSubtypes(t *testing.T) {
	for _, tc := range []struct {
		name          string
		chassis, port verify.TLV
		wantChassis   string
		wantPort      string
		chassisType   string
		portType      string
	}{
		{"mac/ifname", tlv(1, "04c47ee0e4553f"), tlv(2, "0545746865726e6574312f34"), "c4:7e:e0:e4:55:3f", "Ethernet1/4", "mac address", "interface name"},
		{"component/alias", tlv(1, "01636861737369732d31"), tlv(2, "01616c696173"), "chassis-1", "alias", "chassis component", "interface alias"},
		{"alias/component", tlv(1, "02616c"), tlv(2, "02706f72742d31"), "al", "port-1", "interface alias", "port component"},
		{"portcomp/mac", tlv(1, "0370"), tlv(2, "03a0369f527fb2"), "p", "a0:36:9f:52:7f:b2", "port component", "mac address"},
		{"ipv4/ipv4", tlv(1, "05010a0abfe5"), tlv(2, "04010a000001"), "10.10.191.229", "10.0.0.1", "network address", "network address"},
		{"ipv6/circuit", tlv(1, "050220010db8000000000000000000000001"), tlv(2, "06636972"), "2001:db8::1", "cir", "network address", "agent circuit id"},
		{"ifname/local", tlv(1, "0673777031"), tlv(2, "07313233"), "swp1", "123", "interface name", "locally assigned"},
		{"local/reserved", tlv(1, "07616263"), tlv(2, "09ff00"), "abc", "0xff00", "locally assigned", "reserved 9"},
		{"short mac renders hex", tlv(1, "04c47e"), tlv(2, "03ff"), "0xc47e", "0xff", "mac address", "mac address"},
		{"bad family renders hex", tlv(1, "05090102"), tlv(2, "0409"), "0x090102", "\t", "network address", "network address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := verify.DecodeLLDP([]verify.TLV{tc.chassis, tc.port})
			if err != nil {
				t.Fatal(err)
			}
			if got := l.ChassisID.String(); got != tc.wantChassis {
				t.Errorf("chassis = %q, want %q", got, tc.wantChassis)
			}
			if got := l.Port(); got != tc.wantPort {
				t.Errorf("port = %q, want %q", got, tc.wantPort)
			}
			b, _ := json.Marshal(l)
			for _, w := range []string{`"type":"` + tc.chassisType + `"`, `"type":"` + tc.portType + `"`} {
				if !strings.Contains(string(b), w) {
					t.Errorf("JSON %s lacks %s", b, w)
				}
			}
		})
	}
}

func TestDecodeLLDPRealJuniper(t *testing.T) {
	var d struct {
		Inventory struct {
			Interfaces []struct {
				Name string          `json:"name"`
				LLDP json.RawMessage `json:"lldp"`
			} `json:"interfaces"`
		} `json:"inventory"`
		AllInterfaces map[string]struct {
			Processed struct {
				ChassisID  string `json:"switch_chassis_id"`
				PortID     string `json:"switch_port_id"`
				PortDesc   string `json:"switch_port_description"`
				SystemName string `json:"switch_system_name"`
				SystemDesc string `json:"switch_system_description"`
				PVID       int    `json:"switch_port_untagged_vlan_id"`
				MTU        int    `json:"switch_port_mtu"`
				LAGID      uint32 `json:"switch_port_link_aggregation_id"`
				LAGEnabled bool   `json:"switch_port_link_aggregation_enabled"`
				Mgmt       []string
				VLANs      []verify.VLAN `json:"switch_port_vlans"`
				CapsEn     []string      `json:"switch_capabilities_enabled"`
			} `json:"lldp_processed"`
		} `json:"all_interfaces"`
	}
	if err := json.Unmarshal(realdata.Read(t, "ipa-inventory", "metal3-docs", "dell-r320-inspector-data-lldp.json"), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Inventory.Interfaces) != 4 {
		t.Fatalf("want 4 interfaces, got %d", len(d.Inventory.Interfaces))
	}
	// ironic-inspector decoded the same frames: our decoding must agree with it.
	for _, i := range d.Inventory.Interfaces {
		l, err := verify.DecodeLLDPJSON(i.LLDP)
		if err != nil {
			t.Fatalf("%s: %v", i.Name, err)
		}
		p := d.AllInterfaces[i.Name].Processed
		pvid := 0 // em2's port sends no PVID TLV; the inspector then reports none
		if l.PVID != nil {
			pvid = *l.PVID
		}
		got := []any{l.ChassisID.String(), l.Port(), l.Description(), l.Name(), *l.SystemDescription, pvid, *l.MaxFrameSize,
			l.LinkAggregation.PortID, l.LinkAggregation.Enabled(), l.ManagementAddresses[0].String(), l.End, *l.TTL}
		want := []any{p.ChassisID, p.PortID, p.PortDesc, p.SystemName, p.SystemDesc, p.PVID, p.MTU, p.LAGID, p.LAGEnabled, "10.10.191.229", true, 60}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded %v, inspector says %v", i.Name, got, want)
		}
		if !reflect.DeepEqual(l.VLANs, p.VLANs) {
			t.Errorf("%s: VLANs %v, inspector says %v", i.Name, l.VLANs, p.VLANs)
		}
		caps, _ := json.Marshal(l.Capabilities)
		if !strings.Contains(string(caps), `"enabled":["Bridge","Router"]`) {
			t.Errorf("%s: capabilities %s", i.Name, caps)
		}
	}
}

func TestDecodeLLDPRealCisco(t *testing.T) {
	inv, err := verify.ParseInventory(realdata.Read(t, "ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"eno3np0":   {"f20-3-1.iad3", "Ethernet1/4"},
		"eno4np1":   {"f20-3-1f.iad3", "Ethernet1/4"},
		"ens2f1np1": {"f20-3-2f.iad3", "Ethernet1/4"},
	}
	for _, it := range inv.Interfaces {
		w, heard := want[it.Name]
		if !heard {
			if it.LLDP != nil || !it.LLDPCollected {
				t.Errorf("%s: want collected and nothing heard, got %+v", it.Name, it.LLDP)
			}
			continue
		}
		if it.LLDP.Name() != w[0] || it.LLDP.Port() != w[1] {
			t.Errorf("%s: saw %s %s, want %v", it.Name, it.LLDP.Name(), it.LLDP.Port(), w)
		}
	}
	eno3, _ := inv.InterfaceByName("eno3np0")
	l := eno3.LLDP
	if len(l.VLANs) != 1 || l.VLANs[0] != (verify.VLAN{ID: 4010, Name: "4010_provisioning"}) {
		t.Errorf("VLANs = %v", l.VLANs)
	}
	if *l.MaxFrameSize != 9000 || l.LinkAggregation.IEEE8023 || l.LinkAggregation.PortID != 0 || !l.LinkAggregation.Capable() {
		t.Errorf("802.3/802.1 TLVs: mfs %d lag %+v", *l.MaxFrameSize, l.LinkAggregation)
	}
	if len(l.Unknown) != 2 || len(l.Problems) != 0 {
		t.Errorf("Cisco OUI TLVs should be kept without problems: unknown %v problems %v", l.Unknown, l.Problems)
	}
}

func TestDecodeLLDPToleratesJunk(t *testing.T) {
	for _, tc := range []struct {
		name    string
		json    string
		problem string
		check   func(t *testing.T, l verify.LLDP)
	}{
		{"bad hex", `[[1,"zz"],[5,"6c656166"]]`, "is not hex", func(t *testing.T, l verify.LLDP) {
			if l.Name() != "leaf" || l.ChassisID != nil {
				t.Errorf("got %+v", l)
			}
		}},
		{"not a pair", `[[1],"x",{"a":1},[5,"6c"]]`, "not a [type", func(t *testing.T, l verify.LLDP) {
			if l.Name() != "l" {
				t.Errorf("got %+v", l)
			}
		}},
		{"type out of range", `[[128,"00"],[-1,"00"],[1.5,"00"]]`, "whole number 0-127", nil},
		{"value not a string", `[[1, 42]]`, "not a hex string", nil},
		{"short chassis", `[[1,"04"]]`, "chassis ID TLV of 1 byte", nil},
		{"duplicate port", `[[2,"0561"],[2,"0562"]]`, "duplicate port ID", func(t *testing.T, l verify.LLDP) {
			if l.Port() != "a" || len(l.Unknown) != 1 {
				t.Errorf("got %+v", l)
			}
		}},
		{"bad ttl", `[[3,"00"]]`, "TTL TLV of 1 byte", nil},
		{"duplicate ttl", `[[3,"0078"],[3,"0078"]]`, "duplicate TTL", nil},
		{"duplicate name", `[[5,"61"],[5,"62"]]`, "duplicate TLV 5", nil},
		{"bad caps", `[[7,"0014"]]`, "capabilities TLV of 2", nil},
		{"duplicate caps", `[[7,"00140014"],[7,"00140014"]]`, "duplicate capabilities", nil},
		{"bad mgmt", `[[8,"05010a0a"]]`, "management address TLV", nil},
		{"mgmt oid too long", `[[8,"05010a0abfe5010000000cff"]]`, "management address TLV", nil},
		{"short org", `[[127,"0080"]]`, "org-specific TLV of 2", nil},
		{"bad pvid", `[[127,"0080c20100"]]`, "PVID TLV is malformed", nil},
		{"duplicate pvid", `[[127,"0080c2010066"],[127,"0080c2010067"]]`, "duplicate 802.1 PVID", nil},
		{"bad vlan name", `[[127,"0080c2030065ff76"]]`, "VLAN name TLV is malformed", nil},
		{"bad lag", `[[127,"0080c20701"]]`, "link aggregation TLV is malformed", nil},
		{"duplicate lag", `[[127,"0080c2070100000000"],[127,"00120f030300000296"]]`, "duplicate link aggregation", nil},
		{"bad mfs", `[[127,"00120f04"]]`, "maximum frame size TLV is malformed", nil},
		{"duplicate mfs", `[[127,"00120f0405dc"],[127,"00120f042328"]]`, "duplicate 802.3 maximum frame size", func(t *testing.T, l verify.LLDP) {
			if *l.MaxFrameSize != 1500 {
				t.Errorf("first wins: got %d", *l.MaxFrameSize)
			}
		}},
		{"end with bytes", `[[0,"00"]]`, "end-of-LLDPDU carries", nil},
		{"after end", `[[5,"61"],[0,""],[5,"62"],[4,"63"]]`, "2 TLV(s) after end-of-LLDPDU", func(t *testing.T, l verify.LLDP) {
			if l.Name() != "a" || l.PortDescription != nil {
				t.Errorf("TLVs after end must be ignored: %+v", l)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := verify.DecodeLLDPJSON([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Fatalf("err = %v, want one saying %q", err, tc.problem)
			}
			if len(l.Problems) == 0 {
				t.Errorf("problems not recorded in the result")
			}
			if tc.check != nil {
				tc.check(t, l)
			}
		})
	}
	if _, err := verify.DecodeLLDPJSON([]byte(`{"not":"a list"}`)); err == nil {
		t.Error("a JSON object must be an error")
	}
}

func TestTLVJSONRoundTrip(t *testing.T) {
	in := `[[1,"04c47ee0e4553f"],[0,""]]`
	var tlvs []verify.TLV
	if err := json.Unmarshal([]byte(in), &tlvs); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(tlvs)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip %s, want %s", out, in)
	}
	var bad verify.TLV
	if err := json.Unmarshal([]byte(`[1,"q"]`), &bad); err == nil {
		t.Error("bad hex must fail to unmarshal")
	}
}

func TestLLDPDUFraming(t *testing.T) {
	tlvs := []verify.TLV{tlv(1, "04c47ee0e4553f"), tlv(2, "0545746865726e6574312f34"), tlv(3, "0078"), {Type: 0}}
	frame, err := verify.EncodeLLDPDU(tlvs)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(frame[:2]); got != "0207" {
		t.Errorf("first header = %s, want 0207 (type 1, length 7)", got)
	}
	// Ethernet pads short frames with zeros after the end TLV: ignored.
	back, err := verify.ParseLLDPDU(append(frame, 0, 0, 0, 0))
	if err != nil || !reflect.DeepEqual(back, tlvs) {
		t.Fatalf("ParseLLDPDU = %v, %v; want %v", back, err, tlvs)
	}
	if _, err := verify.ParseLLDPDU([]byte{0x02, 0x07, 0x04}); err == nil || !strings.Contains(err.Error(), "claims 7 bytes") {
		t.Errorf("truncated TLV: err = %v", err)
	}
	if _, err := verify.ParseLLDPDU([]byte{0x0a, 0x01, 0x61, 0x0a}); err == nil || !strings.Contains(err.Error(), "stray") {
		t.Errorf("stray byte: err = %v", err)
	}
	if _, err := verify.EncodeLLDPDU([]verify.TLV{{Type: 4, Value: make([]byte, 512)}}); err == nil {
		t.Error("a 512-byte value cannot be framed")
	}
	if _, err := verify.EncodeLLDPDU([]verify.TLV{{Type: 128}}); err == nil {
		t.Error("type 128 cannot be framed")
	}
}

// roundTrip checks that encoding a decoded LLDPDU and decoding it again gives
// the same value (problems aside: they describe the original input).
func roundTrip(t *testing.T, l verify.LLDP) {
	t.Helper()
	again, _ := verify.DecodeLLDP(l.TLVs())
	l.Problems, again.Problems = nil, nil
	if !reflect.DeepEqual(l, again) {
		a, _ := json.Marshal(l)
		b, _ := json.Marshal(again)
		t.Fatalf("round trip changed the LLDPDU:\n was %s\n now %s", a, b)
	}
}

func TestLLDPRoundTripRealFrames(t *testing.T) {
	for _, p := range [][]string{
		{"ipa-inventory", "metal3-docs", "dell-r320-inspector-data-lldp.json"},
		{"ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json"},
	} {
		inv, err := verify.ParseInventory(realdata.Read(t, p...))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range inv.Interfaces {
			if it.LLDP == nil {
				continue
			}
			roundTrip(t, *it.LLDP)
			// The original TLVs come back byte for byte, modulo order.
			if got, want := len(it.LLDP.TLVs()), len(it.LLDPRaw); got != want {
				t.Errorf("%s: re-encoded %d TLVs, heard %d", it.Name, got, want)
			}
		}
	}
}
