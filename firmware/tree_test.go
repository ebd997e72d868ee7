package firmware_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/realdata"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

const root = `{"@odata.id":"/redfish/v1","Vendor":"Dell","Oem":{"Dell":{}},
 "Systems":{"@odata.id":"/redfish/v1/Systems"},"Managers":{"@odata.id":"/redfish/v1/Managers"},
 "UpdateService":{"@odata.id":"/redfish/v1/UpdateService"}}`

func TestReadTree(t *testing.T) {
	cases := []struct {
		name     string
		fs       fstest.MapFS
		wantID   firmware.Identity
		want     []firmware.InventoryEntry
		warnings []string
		wantErr  bool
	}{
		{
			name: "members by link, absent ones left out with a warning",
			fs: fstest.MapFS{
				"index.json":               file(root),
				"Systems/index.json":       file(`{"Members":[{"@odata.id":"/redfish/v1/Systems/Board"},{"@odata.id":"/redfish/v1/Systems/S1"}]}`),
				"Systems/Board/index.json": file(`{"Id":"Board","Manufacturer":"NVIDIA"}`),
				"Systems/S1/index.json":    file(`{"Id":"S1","Manufacturer":"Dell Inc.","Model":"PowerEdge R750 "}`),
				"UpdateService/index.json": file(`{"FirmwareInventory":{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory"}}`),
				"UpdateService/FirmwareInventory/index.json": file(`{"Members":[
					{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory/A"},
					{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory/Gone"},
					{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory/B/"}]}`),
				"UpdateService/FirmwareInventory/A/index.json": file(`{"Id":"A","Version":"1.0","Status":{"State":"Enabled"}}`),
				"UpdateService/FirmwareInventory/B/index.json": file(`{"Id":"B","Name":"B image","Version":null}`),
			},
			wantID:   firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750", BMCVendor: bmc.VendorDell},
			want:     []firmware.InventoryEntry{{ID: "A", Version: "1.0", State: "Enabled"}, {ID: "B", Name: "B image"}},
			warnings: []string{"1 of the members", "Gone"},
		},
		{
			name: "an expanded collection is read in place",
			fs: fstest.MapFS{
				"index.json":               file(root),
				"UpdateService/index.json": file(`{}`),
				"UpdateService/FirmwareInventory/index.json": file(`{"Members":[
					{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory/X","Id":"X","Version":"2","Status":{"State":"Disabled"}}]}`),
			},
			want:     []firmware.InventoryEntry{{ID: "X", Version: "2", State: "Disabled"}},
			wantID:   firmware.Identity{BMCVendor: bmc.VendorDell},
			warnings: []string{"no system document"},
		},
		{
			name:     "no firmware inventory: a warning, no entries",
			fs:       fstest.MapFS{"index.json": file(root)},
			wantID:   firmware.Identity{BMCVendor: bmc.VendorDell},
			warnings: []string{"no system document", "no firmware inventory"},
		},
		{
			name: "links outside /redfish/v1 are not followed",
			fs: fstest.MapFS{
				"index.json": file(root),
				"UpdateService/FirmwareInventory/index.json": file(`{"Members":[{"@odata.id":"/redfish/v1/../../etc/passwd"},{"@odata.id":"/other/x"}]}`),
			},
			wantID:   firmware.Identity{BMCVendor: bmc.VendorDell},
			warnings: []string{"no system document", "2 of the members"},
		},
		{name: "no service root", fs: fstest.MapFS{}, wantErr: true},
		{name: "service root is not JSON", fs: fstest.MapFS{"index.json": file(`{`)}, wantErr: true},
		{
			name: "a member without an Id takes its URI's last segment; a numeric version its text",
			fs: fstest.MapFS{
				"index.json": file(root),
				"UpdateService/FirmwareInventory/index.json":   file(`{"Members":[{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory/A"}]}`),
				"UpdateService/FirmwareInventory/A/index.json": file(`{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory/A","Version":1.10}`),
			},
			wantID:   firmware.Identity{BMCVendor: bmc.VendorDell},
			want:     []firmware.InventoryEntry{{ID: "A", Version: "1.10"}},
			warnings: []string{"no system document"},
		},
		{
			name: "a member with neither Id nor URI is unreadable",
			fs: fstest.MapFS{
				"index.json": file(root),
				"UpdateService/FirmwareInventory/index.json":   file(`{"Members":[{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory/A"}]}`),
				"UpdateService/FirmwareInventory/A/index.json": file(`{"Version":"1"}`),
			},
			wantErr: true,
		},
		{
			name: "a member whose Version is an object is unreadable",
			fs: fstest.MapFS{
				"index.json": file(root),
				"UpdateService/FirmwareInventory/index.json":   file(`{"Members":[{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory/A"}]}`),
				"UpdateService/FirmwareInventory/A/index.json": file(`{"Id":"A","Version":{"x":1}}`),
			},
			wantErr: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := firmware.ReadTree(c.fs)
			if c.wantErr {
				if !firmware.InventoryUnreadable.Is(err) {
					t.Fatalf("ReadTree = %+v, %v; want FIRMWARE_INVENTORY_UNREADABLE", res, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Inventory.Identity != c.wantID {
				t.Errorf("identity %+v, want %+v", res.Inventory.Identity, c.wantID)
			}
			if !reflect.DeepEqual(res.Inventory.Entries, c.want) {
				t.Errorf("entries %+v, want %+v", res.Inventory.Entries, c.want)
			}
			all := strings.Join(res.Warnings, "\n")
			for _, w := range c.warnings {
				if !strings.Contains(all, w) {
					t.Errorf("warnings lack %q: %q", w, res.Warnings)
				}
			}
		})
	}
}

// ReadSavedTree accepts the capture directory, its redfish directory or
// its redfish/v1 directory.
func TestReadSavedTreeRoots(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "redfish", "v1")
	if err := os.MkdirAll(v1, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v1, "index.json"), []byte(root), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "redfish"), v1} {
		if res, err := firmware.ReadSavedTree(d); err != nil || res.Inventory.Identity.BMCVendor != bmc.VendorDell {
			t.Errorf("ReadSavedTree(%s) = %+v, %v", d, res, err)
		}
	}
	if _, err := firmware.ReadSavedTree(t.TempDir()); !firmware.InventoryUnreadable.Is(err) {
		t.Errorf("empty directory: %v", err)
	}
}

// FuzzParseInventoryMember: any bytes give an entry or an error, never a
// panic; an entry always has an Id. Seeded with real members.
func FuzzParseInventoryMember(f *testing.F) {
	f.Add([]byte(`{"Id":"BMC-Primary-Pending","Version":"-*","Status":{"State":"Disabled"}}`))
	f.Add([]byte(`{"Id":"UEFI-Pending","Version":null}`))
	f.Add([]byte(`{"Id":"X","Version":3}`))
	if dir, ok := realdata.Dir(); ok {
		for _, p := range []string{
			"redfish/lenovo/sr670v2-xcc/redfish/v1/UpdateService/FirmwareInventory/BMC-Primary-Pending/index.json",
			"redfish/ami/dgx-h100-megarac/redfish/v1/UpdateService/FirmwareInventory/HostBMC_0/index.json",
			"redfish/dell/r750-idrac9/redfish/v1/UpdateService/FirmwareInventory/Installed-25227-6.00.30.00__iDRAC.Embedded.1-1/index.json",
			"redfish/supermicro/sys-821ge-tnhr/redfish/v1/UpdateService/FirmwareInventory/Staging_BMC/index.json",
		} {
			if b, err := os.ReadFile(filepath.Join(dir, p)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := firmware.ParseInventoryMember(b)
		if err == nil && e.ID == "" {
			t.Fatalf("entry without an Id from %q", b)
		}
	})
}

// FuzzReadTree: a service root and a firmware collection of any bytes give
// a result or FIRMWARE_INVENTORY_UNREADABLE, never a panic.
func FuzzReadTree(f *testing.F) {
	f.Add([]byte(root), []byte(`{"Members":[{"@odata.id":"/redfish/v1/UpdateService/FirmwareInventory/A"}]}`))
	f.Add([]byte(`{}`), []byte(`{"Members":[{"@odata.id":"/redfish/v1/../x","Id":"x"}]}`))
	f.Fuzz(func(t *testing.T, rootDoc, coll []byte) {
		fs := fstest.MapFS{
			"index.json": &fstest.MapFile{Data: rootDoc},
			"UpdateService/FirmwareInventory/index.json":   &fstest.MapFile{Data: coll},
			"UpdateService/FirmwareInventory/A/index.json": file(`{"Id":"A","Version":"1"}`),
		}
		if _, err := firmware.ReadTree(fs); err != nil && !firmware.InventoryUnreadable.Is(err) {
			t.Fatalf("unclassified error %v", err)
		}
	})
}

// FuzzParseCatalog: any document gives a catalog or
// FIRMWARE_CATALOG_INVALID, never a panic; a parsed catalog's components
// all have a matcher that compiles, and at most one default each. Seeded
// with the real NICo catalogs.
func FuzzParseCatalog(f *testing.F) {
	f.Add([]byte(r750))
	f.Add([]byte(driftCatalog))
	f.Add([]byte(builtinCatalog))
	if dir, ok := realdata.Dir(); ok {
		_ = filepath.WalkDir(filepath.Join(dir, "firmware"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".toml") {
				if b, err := os.ReadFile(p); err == nil {
					f.Add(b)
				}
			}
			return nil
		})
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := firmware.ParseCatalog("fuzz.toml", b)
		if err != nil {
			if !firmware.CatalogInvalid.Is(err) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		for _, m := range c.Models() {
			for _, comp := range m.Components {
				defaults := 0
				for _, e := range comp.KnownFirmware {
					if e.Default {
						defaults++
					}
				}
				if defaults > 1 {
					t.Fatalf("%s/%s %s has %d defaults", m.Vendor, m.Model, comp.Type, defaults)
				}
			}
		}
	})
}
