package verify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/internal/realdata"
	"github.com/hostforge/hostforge/verify"
)

// realInventories are the real inventories that seed the fuzz corpora.
var realInventories = [][]string{
	{"ipa-inventory", "ironic-api-ref", "node-inventory-response.json"},
	{"ipa-inventory", "ironic-inspector-api-ref", "api-v1-data-introspection-response.json"},
	{"ipa-inventory", "metal3-docs", "dell-r320-inspector-data-lldp.json"},
	{"ipa-inventory", "metal3-docs", "kvm-vm-inspector-data.json"},
	{"ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json"},
}

// seedInventories adds the real inventories when the real data is present
// (the fuzz targets must still run from their own corpus without it).
func seedInventories(f *testing.F, add func(b []byte)) {
	if _, ok := realdata.Dir(); !ok {
		return
	}
	for _, p := range realInventories {
		add(realdata.Read(f, p...))
	}
}

// FuzzParseInventory: the parser never panics, accepts or classifies every
// input, and whatever it accepts can be checked against any expectation.
func FuzzParseInventory(f *testing.F) {
	seedInventories(f, func(b []byte) { f.Add(b) })
	f.Add([]byte(`{"inventory":{"interfaces":[{"name":"eth0","has_carrier":"false","lldp":[[1,"zz"],[2,"0561"]]}]},"plugin_data":{"pci_devices":[{"vendor_id":"10de","product_id":"26b9"}],"extra":{"memory":{"bank:0":{"size":"8589934592"}}}}}`))
	f.Add([]byte(`{"interfaces":[],"cpu":{"count":"x"},"data":[["memory","bank:0","size",1]]}`))
	f.Add([]byte(`[]`))
	exp, err := verify.ExpectationsFrom("fuzz", map[string]any{
		"cpu":    map[string]any{"architecture": "x86_64", "count": 2.0, "cores": 1.0, "sockets": 1.0},
		"nics":   map[string]any{"count": 2.0, "vendors": []any{"0x1af4"}, "min_speed_mbps": 1000.0},
		"disks":  map[string]any{"count": 1.0, "models": []any{"m"}, "min_size_gb": 1.0},
		"memory": map[string]any{"physical_mb": 2048.0, "dimm_count": 2.0, "dimm_size_mb": 1024.0},
		"bios":   map[string]any{"allow": []any{"1.*"}, "block": []any{"0.9"}},
		"gpus":   []any{map[string]any{"vendor_id": "10de", "device_id": "26b9", "count": 1.0}},
	}, []verify.Cable{{Interface: "eth0", Switch: "leaf-1", Port: "swp1"}, {Interface: "eth1", MAC: "52:54:00:4e:3d:30"}}, false)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		inv, err := verify.ParseInventory(b)
		if err != nil {
			if !verify.InventoryInvalid.Is(err) {
				t.Fatalf("unclassified parse error: %v", err)
			}
			return
		}
		rep := verify.Check(inv, exp)
		if err := rep.Err(); (err == nil) != rep.OK() {
			t.Fatalf("Err() = %v but OK() = %v", err, rep.OK())
		} else if err != nil && hostforge.CodeOf(err) == "" {
			t.Fatalf("Err() is not a Failure: %v", err)
		}
		for _, m := range rep.Mismatches {
			if m.Check == "" || m.Action == "" {
				t.Fatalf("mismatch without check or action: %+v", m)
			}
		}
	})
}

// FuzzDecodeLLDP: decoding a raw LLDPDU never panics, and what it decodes
// round-trips: encoding it and decoding again gives the same value.
func FuzzDecodeLLDP(f *testing.F) {
	seedInventories(f, func(b []byte) {
		inv, err := verify.ParseInventory(b)
		if err != nil {
			f.Fatal(err)
		}
		for _, it := range inv.Interfaces {
			if frame, err := verify.EncodeLLDPDU(it.LLDPRaw); err == nil && len(frame) > 0 {
				f.Add(frame)
			}
		}
	})
	// Our own seeds, so the target runs without the real data too.
	f.Add([]byte{0x02, 0x07, 0x04, 0xc4, 0x7e, 0xe0, 0xe4, 0x55, 0x3f, 0x00, 0x00})
	if b, err := os.ReadFile(filepath.Join("testdata", "lldp-cumulus.json")); err == nil {
		var tlvs []verify.TLV
		if json.Unmarshal(b, &tlvs) == nil {
			if frame, err := verify.EncodeLLDPDU(tlvs); err == nil {
				f.Add(frame)
			}
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		tlvs, _ := verify.ParseLLDPDU(frame)
		l, _ := verify.DecodeLLDP(tlvs)
		_, _ = json.Marshal(l)
		out := l.TLVs()
		again, _ := verify.DecodeLLDP(out)
		l.Problems, again.Problems = nil, nil
		if !reflect.DeepEqual(l, again) {
			t.Fatalf("round trip changed the LLDPDU:\n was %+v\n now %+v", l, again)
		}
		if _, err := verify.EncodeLLDPDU(out); err != nil {
			t.Fatalf("re-encoding a decoded frame failed: %v", err)
		}
	})
}

// FuzzDecodeLLDPJSON: IPA's JSON pairs never panic the decoder.
func FuzzDecodeLLDPJSON(f *testing.F) {
	f.Add([]byte(`[[1,"04c47ee0e4553f"],[2,"0545746865726e6574312f34"],[0,""]]`))
	f.Add([]byte(`[[1,"zz"],[1],null,[300,"00"]]`))
	if b, err := os.ReadFile(filepath.Join("testdata", "lldp-cumulus.json")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := verify.DecodeLLDPJSON(b)
		if err == nil && len(l.Problems) > 0 {
			t.Fatalf("problems %v without an error", l.Problems)
		}
	})
}

func readReal(t *testing.T, p ...string) []byte { t.Helper(); return realdata.Read(t, p...) }
