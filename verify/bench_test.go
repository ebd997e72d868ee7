package verify_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hostforge/hostforge/verify"
)

// host64 builds a 64-interface host whose every NIC hears its own switch port
// (leaf-N.dc1.example.net swpM), with DIMMs, disks and GPUs, and the
// expectations that pass it.
func host64(b *testing.B) ([]byte, verify.Expectations) {
	b.Helper()
	var ifaces []any
	var cables []verify.Cable
	for i := 0; i < 64; i++ {
		mac := fmt.Sprintf("44:a8:42:00:%02x:%02x", i/256, i%256)
		sw, port := fmt.Sprintf("leaf-%d", i/16), fmt.Sprintf("swp%d", i%16+1)
		pairs := []any{
			[]any{1, "04" + "44a842c1d2" + fmt.Sprintf("%02x", i/16)},
			[]any{2, "05" + hex.EncodeToString([]byte(port))},
			[]any{3, "0078"},
			[]any{4, hex.EncodeToString([]byte(fmt.Sprintf("host-a1 eth%d", i)))},
			[]any{5, hex.EncodeToString([]byte(sw + ".dc1.example.net"))},
			[]any{127, "0080c2010064"},
			[]any{127, "0080c20300640470726f76"},
			[]any{127, "00120f04239b"},
			[]any{0, ""},
		}
		ifaces = append(ifaces, map[string]any{"name": fmt.Sprintf("eth%d", i), "mac_address": mac, "has_carrier": true,
			"vendor": "0x15b3", "product": "0x1021", "speed_mbps": 100000, "lldp": pairs})
		cables = append(cables, verify.Cable{Interface: fmt.Sprintf("eth%d", i), MAC: mac, Switch: sw, Port: port})
	}
	banks := map[string]any{}
	for i := 0; i < 16; i++ {
		banks[fmt.Sprintf("bank:%d", i)] = map[string]any{"size": 64 << 30, "slot": fmt.Sprintf("DIMM_%d", i)}
	}
	var pci []any
	for i := 0; i < 8; i++ {
		pci = append(pci, map[string]any{"vendor_id": "10de", "product_id": "26b9", "class": "030200", "bus": fmt.Sprintf("0000:%02x:00.0", i)})
	}
	var disks []any
	for i := 0; i < 8; i++ {
		disks = append(disks, map[string]any{"name": fmt.Sprintf("/dev/nvme%dn1", i), "model": "Dell Ent NVMe CM6", "size": 3840e9, "serial": fmt.Sprintf("S%d", i)})
	}
	doc := map[string]any{
		"inventory": map[string]any{
			"interfaces": ifaces, "disks": disks,
			"cpu":           map[string]any{"count": 256, "architecture": "x86_64", "socket_count": 2},
			"memory":        map[string]any{"physical_mb": 16 * 64 * 1024},
			"system_vendor": map[string]any{"serial_number": "SN1", "firmware": map[string]any{"version": "2.1.4"}},
		},
		"plugin_data": map[string]any{"pci_devices": pci, "extra": map[string]any{"memory": banks}},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	exp, err := verify.ExpectationsFrom("host-a1", map[string]any{
		"cpu":    map[string]any{"architecture": "x86_64", "count": 256, "sockets": 2},
		"nics":   map[string]any{"count": 64, "vendors": []any{"0x15b3"}, "min_speed_mbps": 100000},
		"disks":  map[string]any{"count": 8, "models": []any{"Dell Ent NVMe CM6"}, "min_size_gb": 3000},
		"memory": map[string]any{"physical_mb": 16 * 64 * 1024, "dimm_count": 16, "dimm_size_mb": 64 * 1024},
		"bios":   map[string]any{"allow": []any{"2.1.*"}, "block": []any{"2.0.0"}},
		"gpus":   []any{map[string]any{"vendor_id": "10de", "device_id": "26b9", "count": 8}},
	}, cables, false)
	if err != nil {
		b.Fatal(err)
	}
	return raw, exp
}

// BenchmarkCheck64 verifies an already parsed 64-interface host: every check,
// 64 LLDP comparisons.
func BenchmarkCheck64(b *testing.B) {
	raw, exp := host64(b)
	inv, err := verify.ParseInventory(raw)
	if err != nil {
		b.Fatal(err)
	}
	if rep := verify.Check(inv, exp); !rep.OK() {
		b.Fatalf("the benchmark host must pass:\n%s", dump(rep))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !verify.Check(inv, exp).OK() {
			b.Fatal("mismatch")
		}
	}
}

// BenchmarkParseAndCheck64 adds parsing the inventory JSON and decoding 64
// interfaces' LLDP TLVs: the whole offline verification of one host.
func BenchmarkParseAndCheck64(b *testing.B) {
	raw, exp := host64(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		inv, err := verify.ParseInventory(raw)
		if err != nil {
			b.Fatal(err)
		}
		if !verify.Check(inv, exp).OK() {
			b.Fatal("mismatch")
		}
	}
}
