package fakes_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// TestCloneIsAJSONRoundTrip: a state's Clone reads exactly as the state
// through encoding/json (numbers float64, typed values generic), and
// shares nothing with it.
func TestCloneIsAJSONRoundTrip(t *testing.T) {
	s := fakes.NewSite()
	s.AddHost(fakes.HostSpec{Name: "h1", NICs: 3, GPUType: "H100", Class: intent.ClassGPUCompute, HasZTP: true,
		ZTP: map[string]any{"rails": 8, "names": []string{"a", "b"}, "f": float32(0.1), "bad": "\xff"}})
	var clone *fakes.NetBoxState
	var want fakes.NetBoxState
	s.NetBox.View(func(st *fakes.NetBoxState) {
		st.Devices[st.DeviceByName("h1").ID].CustomFields["n"] = int64(1) << 60
		clone = st.Clone()
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
	})
	if !reflect.DeepEqual(clone, &want) {
		got, _ := json.Marshal(clone)
		exp, _ := json.Marshal(&want)
		t.Fatalf("clone differs from the JSON round trip:\n%s\n%s", got, exp)
	}
	_ = s.NetBox.Update(func(st *fakes.NetBoxState) error {
		d := st.DeviceByName("h1")
		d.ConfigContext["ztp"].(map[string]any)["rails"] = 1
		d.TagIDs = append(d.TagIDs[:0], 999)
		return nil
	})
	var d *fakes.NBDevice
	for _, x := range clone.Devices {
		if x.Name == "h1" {
			d = x
		}
	}
	if d.ConfigContext["ztp"].(map[string]any)["rails"] != float64(8) || (len(d.TagIDs) > 0 && d.TagIDs[0] == 999) {
		t.Fatal("the clone shares state with the fake")
	}
}
