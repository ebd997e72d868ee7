package verify_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/verify"
	"gopkg.in/yaml.v3"
)

func TestExpectationsFromInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, block, key string
	}{
		{"unknown section", `{"disk": {"count": 1}}`, "inspection_validation.disk"},
		{"section not an object", `{"cpu": 4}`, "inspection_validation.cpu"},
		{"unknown key", `{"cpu": {"threads": 4}}`, "inspection_validation.cpu.threads"},
		{"string count", `{"cpu": {"count": "32"}}`, "inspection_validation.cpu.count"},
		{"fractional count", `{"nics": {"count": 2.5}}`, "inspection_validation.nics.count"},
		{"zero sockets", `{"cpu": {"sockets": 0}}`, "inspection_validation.cpu.sockets"},
		{"negative disks", `{"disks": {"count": -1}}`, "inspection_validation.disks.count"},
		{"empty arch", `{"cpu": {"architecture": " "}}`, "inspection_validation.cpu.architecture"},
		{"models not a list", `{"disks": {"models": "PERC"}}`, "inspection_validation.disks.models"},
		{"empty models", `{"disks": {"models": []}}`, "inspection_validation.disks.models"},
		{"model not a string", `{"disks": {"models": ["a", 1]}}`, "inspection_validation.disks.models[1]"},
		{"bios block null entry", `{"bios": {"block": [null]}}`, "inspection_validation.bios.block[0]"},
		{"gpus not a list", `{"gpus": {"10de": 2}}`, "inspection_validation.gpus"},
		{"gpu entry not an object", `{"gpus": ["10de:26b9"]}`, "inspection_validation.gpus[0]"},
		{"gpu missing count", `{"gpus": [{"vendor_id": "10de", "device_id": "26b9"}]}`, "inspection_validation.gpus[0]"},
		{"gpu bad id", `{"gpus": [{"vendor_id": "nvidia", "device_id": "26b9", "count": 1}]}`, "inspection_validation.gpus[0]"},
		{"gpu negative count", `{"gpus": [{"vendor_id": "10de", "device_id": "26b9", "count": -1}]}`, "inspection_validation.gpus[0].count"},
		{"gpu listed twice", `{"gpus": [{"vendor_id": "10de", "device_id": "26b9", "count": 1}, {"vendor_id": "0x10DE", "device_id": "26B9", "count": 1}]}`, "inspection_validation.gpus[1]"},
		{"gpu name not a string", `{"gpus": [{"vendor_id": "10de", "device_id": "26b9", "count": 1, "name": 3}]}`, "inspection_validation.gpus[0].name"},
		{"memory size not a number", `{"memory": {"physical_mb": true}}`, "inspection_validation.memory.physical_mb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v map[string]any
			if err := json.Unmarshal([]byte(tc.block), &v); err != nil {
				t.Fatal(err)
			}
			_, err := verify.ExpectationsFrom("h1", v, nil, false)
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != verify.ValidationInvalid.Code || f.Owner != hostforge.OwnerInfraEng {
				t.Fatalf("err = %v, want INSPECTION_VALIDATION_INVALID", err)
			}
			if !strings.Contains(f.Message, "device h1: config_context."+tc.key+":") {
				t.Errorf("message %q does not name %s", f.Message, tc.key)
			}
		})
	}
	if _, err := verify.ExpectationsFrom("h1", nil, []verify.Cable{{Switch: "leaf-1"}}, false); !verify.ValidationInvalid.Is(err) {
		t.Errorf("a cable without an interface name or MAC: err = %v", err)
	}
}

func TestExpectationsFromReadsYAMLAndGoValues(t *testing.T) {
	var v map[string]any
	if err := yaml.Unmarshal([]byte("cpu: {count: 4, sockets: 1}\ngpus: []\nbios: {allow: ['1.*']}\n"), &v); err != nil {
		t.Fatal(err)
	}
	exp, err := verify.ExpectationsFrom("h1", v, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if *exp.CPU.Count != 4 || *exp.CPU.Sockets != 1 || exp.CPU.Cores != nil || !exp.CheckGPUs || len(exp.GPUs) != 0 || exp.BIOS.Allow[0] != "1.*" {
		t.Errorf("got %+v / %+v", exp, exp.CPU)
	}
	exp, err = verify.ExpectationsFrom("h1", map[string]any{
		"nics": map[string]any{"count": int64(2), "vendors": []string{"0X8086"}},
		"gpus": []map[string]any{{"vendor_id": "10DE", "device_id": "0x26b9", "count": json.Number("8")}},
	}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if *exp.NICs.Count != 2 || exp.NICs.Vendors[0] != "0x8086" || exp.GPUs[0] != (verify.GPUExpect{VendorID: "10de", DeviceID: "26b9", Count: 8}) || !exp.SkipCableVerification {
		t.Errorf("got %+v", exp)
	}
}

func TestLoadExpectations(t *testing.T) {
	exp := loadExpect(t, "dell-r7615.yaml")
	if exp.Device != "r7615-f3gsw04" || len(exp.Cables) != 3 || exp.Cables[2] != (verify.Cable{Interface: "NIC.Slot.1-2", MAC: "14:23:f3:f4:c7:e1", Switch: "f20-3-2f", Port: "Ethernet1/4"}) {
		t.Errorf("got %+v", exp)
	}
	if *exp.Memory.PhysicalMB != 98304 || exp.Disks.Models[0] != "PERC H755 Front" {
		t.Errorf("validation not read: %+v %+v", exp.Memory, exp.Disks)
	}
	json := loadExpect(t, "ironic-api-ref.json")
	if json.Device != "ironic-vm" || !json.SkipCableVerification || *json.CPU.Count != 1 {
		t.Errorf("got %+v", json)
	}
	for _, tc := range []struct{ name, file string }{
		{"unknown YAML key", "device: a\ncabels: []\n"},
		{"unknown JSON key", `{"device": "a", "validatoin": {}}`},
		{"no device", "cables: []\n"},
		{"bad JSON", `{"device": `},
		{"bad validation", "device: a\nvalidation: {cpu: {count: many}}\n"},
	} {
		if _, err := verify.LoadExpectations([]byte(tc.file)); !verify.ValidationInvalid.Is(err) {
			t.Errorf("%s: err = %v, want INSPECTION_VALIDATION_INVALID", tc.name, err)
		}
	}
}
