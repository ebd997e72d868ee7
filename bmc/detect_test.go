package bmc_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/internal/realdata"
)

// treeIdentity reads a DMTF-mockup tree: the root, the first manager and the
// first system (when present).
func treeIdentity(t *testing.T, dir string) bmc.Identity {
	t.Helper()
	v1 := filepath.Join(dir, "redfish", "v1")
	root, err := os.ReadFile(filepath.Join(v1, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	first := func(coll string) []byte {
		entries, err := os.ReadDir(filepath.Join(v1, coll))
		if err != nil {
			return nil
		}
		for _, e := range entries {
			if b, err := os.ReadFile(filepath.Join(v1, coll, e.Name(), "index.json")); e.IsDir() && err == nil {
				return b
			}
		}
		return nil
	}
	id, err := bmc.IdentityFromJSON(root, first("Managers"), first("Systems"))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func fileIdentity(t *testing.T, root, manager, system string) bmc.Identity {
	t.Helper()
	read := func(p string) []byte {
		if p == "" {
			return nil
		}
		return realdata.Read(t, "redfish", p)
	}
	id, err := bmc.IdentityFromJSON(read(root), read(manager), read(system))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestDetectRealServiceRoots covers every service root in the shared
// captures, including the ones that must be refused.
func TestDetectRealServiceRoots(t *testing.T) {
	const refused = bmc.Vendor("")
	trees := []struct {
		dir  string
		want bmc.Vendor
	}{
		{"ami/dgx-h100-megarac", bmc.VendorAMI},
		{"dell/r750-idrac9", bmc.VendorDell},
		{"dell/r750-multi-dpu-idrac9", bmc.VendorDell},
		{"lenovo/sr670v2-xcc", bmc.VendorLenovo},
		{"lenovo/sr670v2-xcc-b", bmc.VendorLenovo},
		{"supermicro/sys-821ge-tnhr", bmc.VendorSupermicro},
		{"dmtf/public-rackmount1", refused},
		{"other/hpe-dl385-gen10plus-ilo5", refused},
		{"other/nvidia-gh200-openbmc", refused},
	}
	for _, tc := range trees {
		t.Run(tc.dir, func(t *testing.T) {
			check(t, treeIdentity(t, realdata.Path(t, "redfish", tc.dir)), tc.want)
		})
	}
	files := []struct {
		root, manager, system string
		want                  bmc.Vendor
	}{
		{"dell/bmclib/serviceroot.json", "", "", bmc.VendorDell},
		{"dell/sushy-oem/root.json", "dell/sushy-oem/manager.json", "dell/sushy-oem/system.json", bmc.VendorDell},
		{"dell/sushy-oem/root.json", "", "", bmc.VendorDell},
		{"supermicro/bmclib/smc_1.14.0_serviceroot.json", "", "supermicro/bmclib/smc_1.14.0_systems_1.json", bmc.VendorSupermicro},
		{"supermicro/bmclib-legacy/smc_1.9.0_serviceroot.json", "", "", bmc.VendorSupermicro},
		{"supermicro/bmclib-legacy/serviceroot_no_vendor_no_oem.json", "supermicro/bmclib-legacy/managers_1.json", "supermicro/bmclib-legacy/systems_1.json", bmc.VendorSupermicro},
		// The root alone says nothing: refused, never guessed.
		{"supermicro/bmclib-legacy/serviceroot_no_vendor_no_oem.json", "", "", refused},
		{"generic/sushy/root.json", "generic/sushy/manager.json", "generic/sushy/system.json", refused},
		{"generic/sushy/bare_minimum_root.json", "", "", refused},
		{"dmtf/DSP2046-examples/ServiceRoot-v1-example.json", "dmtf/DSP2046-examples/Manager-v1-example.json", "dmtf/DSP2046-examples/ComputerSystem-v1-example.json", refused},
	}
	for _, tc := range files {
		t.Run(tc.root+"+"+filepath.Base(tc.manager)+"+"+filepath.Base(tc.system), func(t *testing.T) {
			check(t, fileIdentity(t, tc.root, tc.manager, tc.system), tc.want)
		})
	}
}

func check(t *testing.T, id bmc.Identity, want bmc.Vendor) {
	t.Helper()
	got, err := bmc.Detect(id)
	if want == "" {
		if !bmc.VendorUnsupported.Is(err) {
			t.Fatalf("Detect(%+v) = %q, %v; want BMC_VENDOR_UNSUPPORTED", id, got, err)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("Detect(%+v) = %q, %v; want %q", id, got, err, want)
	}
}

func TestDetectOrder(t *testing.T) {
	cases := []struct {
		name string
		id   bmc.Identity
		want bmc.Vendor
	}{
		{"root Oem beats Vendor", bmc.Identity{Vendor: "Lenovo", RootOem: []string{"Dell"}}, bmc.VendorDell},
		{"Vendor beats Product", bmc.Identity{Vendor: "AMI", Product: "Integrated Dell Remote Access Controller"}, bmc.VendorAMI},
		{"unknown Vendor refused before weaker tells", bmc.Identity{Vendor: "HPE", SystemManufacturer: "Dell Inc."}, ""},
		{"HPE Oem refused", bmc.Identity{RootOem: []string{"Hpe"}, ManagerOem: []string{"Dell"}}, ""},
		{"Product", bmc.Identity{Product: "AMI Redfish Server"}, bmc.VendorAMI},
		{"manager model", bmc.Identity{ManagerModel: "Lenovo XClarity Controller"}, bmc.VendorLenovo},
		{"manager Oem", bmc.Identity{ManagerOem: []string{"Supermicro"}}, bmc.VendorSupermicro},
		{"system manufacturer", bmc.Identity{SystemManufacturer: "Supermicro"}, bmc.VendorSupermicro},
		{"NVIDIA system alone is not AMI", bmc.Identity{SystemManufacturer: "NVIDIA"}, ""},
		{"nothing", bmc.Identity{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.id, tc.want) })
	}
}
