package bmc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/internal/realdata"
)

// realTrees are captures whose service root, first manager and first
// system seed the identity fuzz corpus.
var realTrees = []string{
	"dell/r750-idrac9", "lenovo/sr670v2-xcc", "ami/dgx-h100-megarac", "supermicro/sys-821ge-tnhr",
	"other/hpe-dl385-gen10plus-ilo5", "other/nvidia-gh200-openbmc", "dmtf/public-rackmount1",
}

// firstMember reads the document of a collection's first member in a
// mockup tree, nil when there is none.
func firstMember(root, coll string) []byte {
	b, err := os.ReadFile(filepath.Join(root, coll, "index.json"))
	if err != nil {
		return nil
	}
	var c struct {
		Members []struct {
			ID string `json:"@odata.id"`
		} `json:"Members"`
	}
	if json.Unmarshal(b, &c) != nil || len(c.Members) == 0 {
		return nil
	}
	m, _ := os.ReadFile(filepath.Join(root, strings.TrimPrefix(c.Members[0].ID, "/"), "index.json"))
	return m
}

// FuzzIdentityFromJSON: whatever a BMC serves as its service root, manager
// and system, building the identity never panics, and detection either
// names a supported vendor or refuses with BMC_VENDOR_UNSUPPORTED.
func FuzzIdentityFromJSON(f *testing.F) {
	if dir, ok := realdata.Dir(); ok {
		for _, tree := range realTrees {
			base := filepath.Join(dir, "redfish", tree)
			root, err := os.ReadFile(filepath.Join(base, "redfish", "v1", "index.json"))
			if err != nil {
				f.Fatalf("%s: %v", tree, err)
			}
			f.Add(root, firstMember(base, "redfish/v1/Managers"), firstMember(base, "redfish/v1/Systems"))
		}
	}
	f.Add([]byte(`{"Vendor":"Dell","Oem":{"Dell":{}}}`), []byte(`{"Model":"iDRAC 9"}`), []byte(nil))
	f.Add([]byte(`{"Product":null,"Oem":{"@odata.type":"x"}}`), []byte(`{"Oem":[1]}`), []byte(`{"Manufacturer":7}`))
	f.Fuzz(func(t *testing.T, root, manager, system []byte) {
		if len(manager) == 0 {
			manager = nil
		}
		if len(system) == 0 {
			system = nil
		}
		id, err := bmc.IdentityFromJSON(root, manager, system)
		if err != nil {
			return
		}
		v, err := bmc.Detect(id)
		switch {
		case err == nil:
			if v == "" {
				t.Fatalf("detected an empty vendor from %+v", id)
			}
		case !bmc.VendorUnsupported.Is(err):
			t.Fatalf("detection failed unclassified: %v", err)
		}
	})
}
