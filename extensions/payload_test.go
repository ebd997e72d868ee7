package extensions

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hostforge/hostforge/internal/realdata"
)

// Each example payload of the specification (testdata/payloads, written
// from it) and each real payload (the shared MetalSoft variables) decodes
// into its stage's type and encodes back to the same JSON: every field
// has a place, null stays null and [] stays [].
func TestPayloadsRoundTrip(t *testing.T) {
	spec := map[string]Stage{
		"server.json":                          ServerRegisteredStage,
		"networkDevice.json":                   SwitchRegistered,
		"serverInstanceRecordSet.json":         ServerInstanceUpdate,
		"serverInstanceGroupDNSRecordSet.json": ServerInstanceGroupUpdateDNS,
		"serverDNSRecordSet.json":              ServerCreateDNS,
		"switchDNSRecordSet.json":              SwitchCreateDNS,
	}
	for file, stage := range spec {
		t.Run("specification/"+file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "payloads", file))
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, stage, b)
		})
	}
	real := map[string]Stage{
		"infoblox-a-ptr__ansible__example-variable-json__variables-create-3.json":              ServerInstanceUpdateDNS,
		"infoblox-host-records__ansible__example-variable-json__variables-no-ip.json":          ServerInstanceUpdateDNS,
		"infoblox-a-ptr__ansible__example-variable-json__variables-cluster.json":               ClusterUpdateDNS,
		"infoblox-host-records__ansible__example-variable-json__variables-delete-cluster.json": ClusterUpdateDNS,
		"infoblox-a-ptr__ansible__example-variable-json__variables-ipv6-create.json":           ServerInstanceUpdate,
		"infoblox-a-ptr__ansible__example-variable-json__variables-serverInstanceDelete2.json": ServerInstanceUpdate,
		"infoblox-extension__ansible__example-variable-json__variables-ipv6-delete.json":       ServerInstanceUpdate,
		"infoblox-extension__ansible__variables-serverInstance.json":                           ServerInstanceUpdate,
	}
	for file, stage := range real {
		t.Run("metalsoft/"+file, func(t *testing.T) {
			roundTrip(t, stage, realdata.Read(t, "extensions", "metalsoft", "variables", file))
		})
	}
}

func roundTrip(t *testing.T, stage Stage, b []byte) {
	t.Helper()
	p := NewPayload(stage)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		t.Fatalf("decoding into %T: %v", p, err)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%T does not round-trip:\n got %s\nwant %s", p, out, b)
	}
}
