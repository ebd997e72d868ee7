package firmware_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/firmware"
)

const r750 = `
vendor = "Dell"
model = "PowerEdge R750"
ordering = ["uefi", "bmc"]

[components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
preingest_upgrade_when_below = "1.13.2"

[[components.uefi.known_firmware]]
version = "1.13.2"
filename = "/fw/bios.exe"
default = true

[components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC."

[[components.bmc.known_firmware]]
version = "7.10.30.00"
filename = "/fw/idrac.exe"
default = true
`

func mustParse(t *testing.T, name, doc string) *firmware.Catalog {
	t.Helper()
	c, err := firmware.ParseCatalog(name, []byte(doc))
	if err != nil {
		t.Fatalf("ParseCatalog(%s): %v", name, err)
	}
	return c
}

func model(t *testing.T, c *firmware.Catalog, vendor, m string) *firmware.Model {
	t.Helper()
	got, ok := c.Model(vendor, m)
	if !ok {
		t.Fatalf("no model %s / %s", vendor, m)
	}
	return got
}

// Every refusal is FIRMWARE_CATALOG_INVALID and names the file, the table,
// the key and, where the document has it, the line.
func TestParseCatalogRefuses(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want []string // substrings of the message
	}{
		{"unknown top-level field of a metadata.toml", "vendor = \"Dell\"\nmodel = \"R\"\nordring = [\"bmc\"]\n",
			[]string{"cat.toml:3", "top level ordring", "unknown field"}},
		{"unknown field in a host_models table", "[host_models.a]\nvendor = \"Dell\"\nmodel = \"R\"\nexplicit_start = true\n",
			[]string{"cat.toml:4", "[host_models.a] explicit_start", "unknown field"}},
		{"unknown field in a known_firmware entry", "vendor = \"Dell\"\nmodel = \"R\"\n[components.bmc]\ncurrent_version_reported_as = \"x\"\nknown_firmware = [ { version = \"1\", defualt = true } ]\n",
			[]string{"cat.toml:5", "[components.bmc] defualt", "unknown field"}},
		{"bad regex", "vendor = \"Dell\"\nmodel = \"R\"\n[components.bmc]\ncurrent_version_reported_as = \"^Installed-(\"\n",
			[]string{"cat.toml:4", "[components.bmc] current_version_reported_as", "does not compile"}},
		{"empty regex", "vendor = \"Dell\"\nmodel = \"R\"\n[components.bmc]\ncurrent_version_reported_as = \"\"\n",
			[]string{"cat.toml:4", "[components.bmc] current_version_reported_as", "empty regular expression"}},
		{"unknown component type", "vendor = \"Dell\"\nmodel = \"R\"\n[components.bios]\ncurrent_version_reported_as = \"x\"\n",
			[]string{"cat.toml:3", "[components] bios", "unknown component type"}},
		{"component type in upper case", "vendor = \"Dell\"\nmodel = \"R\"\n[components.BMC]\ncurrent_version_reported_as = \"x\"\n",
			[]string{"[components] BMC", "unknown component type \"BMC\""}},
		{"duplicate component table", "vendor = \"Dell\"\nmodel = \"R\"\n[components.bmc]\ncurrent_version_reported_as = \"x\"\n[components.bmc]\ncurrent_version_reported_as = \"y\"\n",
			[]string{"cat.toml:5", "already exists"}},
		{"component type twice in ordering", "vendor = \"Dell\"\nmodel = \"R\"\nordering = [\"bmc\", \"uefi\", \"bmc\"]\n",
			[]string{"cat.toml:3", "top level ordering[2]", "listed twice"}},
		{"unknown type in ordering", "vendor = \"Dell\"\nmodel = \"R\"\nordering = [\"bmc\", \"fpga\"]\n",
			[]string{"top level ordering[1]", "unknown component type \"fpga\""}},
		{"two defaults for one component", "vendor = \"Dell\"\nmodel = \"R\"\n[components.bmc]\ncurrent_version_reported_as = \"x\"\n[[components.bmc.known_firmware]]\nversion = \"1\"\ndefault = true\n[[components.bmc.known_firmware]]\nversion = \"2\"\ndefault = true\n",
			[]string{"cat.toml:5", "[components.bmc] known_firmware", "2 entries are default", `"1" (line 5)`, `"2" (line 8)`}},
		{"two defaults in an inline array", "[host_models.a]\nvendor = \"Dell\"\nmodel = \"R\"\n[host_models.a.components.uefi]\ncurrent_version_reported_as = \"x\"\nknown_firmware = [\n { version = \"1\", default = true },\n { version = \"2\", default = true },\n]\n",
			[]string{"[host_models.a.components.uefi] known_firmware", `"1" (line 7)`, `"2" (line 8)`}},
		{"missing version", "vendor = \"Dell\"\nmodel = \"R\"\n[components.bmc]\ncurrent_version_reported_as = \"x\"\n[[components.bmc.known_firmware]]\ndefault = true\n",
			[]string{"cat.toml:5", "[components.bmc.known_firmware[0]] version", "missing"}},
		{"missing vendor", "model = \"R\"\n", []string{"top level vendor", "missing"}},
		{"missing model in host_models", "[host_models.x]\nvendor = \"Dell\"\n", []string{"cat.toml:1", "[host_models.x] model", "missing"}},
		{"files entry with neither filename nor url", "vendor = \"Dell\"\nmodel = \"R\"\n[components.cx7]\ncurrent_version_reported_as = \"x\"\n[[components.cx7.known_firmware]]\nversion = \"1\"\n[[components.cx7.known_firmware.files]]\nsha256 = \"ab\"\n",
			[]string{"[components.cx7.known_firmware[0].files[0]] filename", "needs a filename or a url"}},
		{"negative power drains", "vendor = \"Dell\"\nmodel = \"R\"\n[components.cx7]\ncurrent_version_reported_as = \"x\"\n[[components.cx7.known_firmware]]\nversion = \"1\"\npower_drains_needed = -1\n",
			[]string{"power_drains_needed", "negative"}},
		{"wrong value type", "vendor = \"Dell\"\nmodel = \"R\"\nexplicit_start_needed = \"yes\"\n",
			[]string{"cat.toml:3", "explicit_start_needed"}},
		{"one model twice in a site file", "[host_models.a]\nvendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[host_models.b]\nvendor = \"Dell Inc.\"\nmodel = \"poweredge r750\"\n",
			[]string{"[host_models.b] model", "defined twice"}},
		{"unknown mandatory_upgrade_from_priority", "vendor = \"Dell\"\nmodel = \"R\"\n[components.bmc]\ncurrent_version_reported_as = \"x\"\nknown_firmware = [ { version = \"1\", mandatory_upgrade_from_priority = \"urgent\" } ]\n",
			[]string{"mandatory_upgrade_from_priority", "urgent"}},
		{"TOML syntax error", "vendor = \"Dell\nmodel = \"R\"\n", []string{"cat.toml:1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat, err := firmware.ParseCatalog("cat.toml", []byte(c.doc))
			if !firmware.CatalogInvalid.Is(err) {
				t.Fatalf("ParseCatalog = %v, %v; want FIRMWARE_CATALOG_INVALID", cat, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// A site configuration's other tables are not the catalog's; a
// metadata.toml is the catalog alone.
func TestParseCatalogShapes(t *testing.T) {
	site := `listen = "[::]:1081"
[firmware_global]
autoupdate = false
[host_models.dell_r750]
vendor = "Dell"
model = "PowerEdge R750"
[host_models.dell_r750.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
known_firmware = [
  { version = "0.9", mandatory_upgrade_from_priority = "security" },
  { version = "2.0", filename = "/fw/u.fw", checksum = "f4d4e0954b5635e6c9a8c79ebaa95218", default = true },
]
`
	c := mustParse(t, "site.toml", site)
	m := model(t, c, "Dell", "PowerEdge R750")
	if got := m.EffectiveOrdering(); !reflect.DeepEqual(got, []firmware.ComponentType{firmware.BMC, firmware.UEFI}) {
		t.Errorf("no ordering: effective %v, want [bmc uefi]", got)
	}
	def, ok := m.Components[firmware.UEFI].Default()
	if !ok || def.Version != "2.0" || !reflect.DeepEqual(def.Artifacts, []firmware.Artifact{{Filename: "/fw/u.fw", Checksum: "f4d4e0954b5635e6c9a8c79ebaa95218"}}) {
		t.Errorf("default = %+v, %v", def, ok)
	}

	meta := `vendor = "Nvidia"
model = "DGXH100"
ordering = ["hgxbmc", "cx7"]
[components.cx7]
current_version_reported_as = "^CX7_[0-9]+$"
[[components.cx7.known_firmware]]
version = "28.47"
filenames = ["/fw/a.bin", "/fw/b.bin"]
default = true
power_drains_needed = 1
[[components.cx7.known_firmware.files]]
filename = "/fw/cx7.bin"
sha256 = "abababababababababababababababababababababababababababababababab"
[[components.cx7.known_firmware.files]]
url = "https://fw.example/cx7.bin"
sha256 = "dededededededededededededededededededededededededededededededede"
[components.cx7.known_firmware.scout]
execution_timeout_seconds = 1800
artifact_download_timeout_seconds = 600
[components.uefi]
current_version_reported_as = "^HostBIOS_0$"
[[components.uefi.known_firmware]]
version = "1.0"
default = true
preingestion_exclusive_config = true
`
	c = mustParse(t, "metadata.toml", meta)
	m = model(t, c, "NVIDIA", "dgxh100")
	cx7, _ := m.Components[firmware.CX7].Default()
	if want := []firmware.Artifact{{Filename: "/fw/cx7.bin", SHA256: strings.Repeat("ab", 32)}, {URL: "https://fw.example/cx7.bin", SHA256: strings.Repeat("de", 32)}}; !reflect.DeepEqual(cx7.Artifacts, want) || cx7.PowerDrainsNeeded != 1 {
		t.Errorf("files win over filenames: %+v", cx7)
	}
	if _, ok := m.Components[firmware.UEFI].Default(); ok {
		t.Error("a pre-ingestion-only entry became the managed default")
	}
	if got := m.EffectiveOrdering(); !reflect.DeepEqual(got, []firmware.ComponentType{firmware.HGXBMC, firmware.CX7, firmware.UEFI}) {
		t.Errorf("components outside the ordering come after it: %v", got)
	}
}

func TestMergeRules(t *testing.T) {
	base := mustParse(t, "base.toml", r750)
	cases := []struct {
		name  string
		over  string
		check func(t *testing.T, m *firmware.Model)
	}{
		{"a non-empty ordering replaces", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\nordering = [\"bmc\"]\n", func(t *testing.T, m *firmware.Model) {
			if !reflect.DeepEqual(m.Ordering, []firmware.ComponentType{firmware.BMC}) {
				t.Errorf("ordering %v", m.Ordering)
			}
		}},
		{"an empty ordering keeps the old one", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n", func(t *testing.T, m *firmware.Model) {
			if !reflect.DeepEqual(m.Ordering, []firmware.ComponentType{firmware.UEFI, firmware.BMC}) {
				t.Errorf("ordering %v", m.Ordering)
			}
		}},
		{"explicit_start_needed = true is sticky", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\nexplicit_start_needed = true\n", func(t *testing.T, m *firmware.Model) {
			if !m.ExplicitStartNeeded {
				t.Error("not set")
			}
		}},
		{"versions append and a new default clears the old", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.bmc]\n[[components.bmc.known_firmware]]\nversion = \"7.20\"\ndefault = true\n", func(t *testing.T, m *firmware.Model) {
			c := m.Components[firmware.BMC]
			if len(c.KnownFirmware) != 2 || c.KnownFirmware[0].Default || !c.KnownFirmware[1].Default {
				t.Errorf("known %+v", c.KnownFirmware)
			}
			if d, _ := c.Default(); d.Version != "7.20" {
				t.Errorf("default %s", d.Version)
			}
			if c.CurrentVersionReportedAs != "^Installed-.*__iDRAC." {
				t.Errorf("an unset matcher overwrote the old one: %q", c.CurrentVersionReportedAs)
			}
		}},
		{"a version without default keeps the old default", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.bmc]\n[[components.bmc.known_firmware]]\nversion = \"7.20\"\n", func(t *testing.T, m *firmware.Model) {
			if d, _ := m.Components[firmware.BMC].Default(); d.Version != "7.10.30.00" {
				t.Errorf("default %s", d.Version)
			}
		}},
		{"matcher and threshold are replaced when set", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.uefi]\ncurrent_version_reported_as = \"^BIOS$\"\npreingest_upgrade_when_below = \"2.0\"\n", func(t *testing.T, m *firmware.Model) {
			c := m.Components[firmware.UEFI]
			if c.CurrentVersionReportedAs != "^BIOS$" || c.PreingestUpgradeWhenBelow != "2.0" || !c.Matches("BIOS") || c.Matches("Installed-1-2__BIOS.Setup.1") {
				t.Errorf("component %+v", c)
			}
		}},
		{"the vendor family merges spellings", "vendor = \"Dell Inc.\"\nmodel = \"POWEREDGE R750\"\nexplicit_start_needed = true\n", func(t *testing.T, m *firmware.Model) {
			if !m.ExplicitStartNeeded || m.Vendor != "Dell" {
				t.Errorf("model %+v", m)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			merged := firmware.Merge(base, mustParse(t, "over.toml", c.over))
			c.check(t, model(t, merged, "Dell", "PowerEdge R750"))
			// explicit false after true stays true.
			again := firmware.Merge(merged, mustParse(t, "off.toml", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\nexplicit_start_needed = false\n"))
			if model(t, merged, "Dell", "PowerEdge R750").ExplicitStartNeeded && !model(t, again, "Dell", "PowerEdge R750").ExplicitStartNeeded {
				t.Error("explicit_start_needed = false cleared a true")
			}
			if model(t, base, "Dell", "PowerEdge R750").ExplicitStartNeeded {
				t.Error("Merge changed its base")
			}
		})
	}
}

// A firmware directory merges its subdirectories' metadata.toml by the
// subdirectories' modification time, not by name.
func TestLoadFirmwareDirectoryByModTime(t *testing.T) {
	dir := t.TempDir()
	write := func(sub, version string, mod time.Time) {
		p := filepath.Join(dir, sub)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		doc := "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.uefi]\ncurrent_version_reported_as = \"^Installed-.*__BIOS.Setup.\"\nknown_firmware = [ { version = \"" + version + "\", default = true } ]\n"
		if err := os.WriteFile(filepath.Join(p, "metadata.toml"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write("dir_B_1", "1.0", t0)
	write("dir_A_2", "2.0", t0.Add(100*time.Millisecond))
	if err := os.MkdirAll(filepath.Join(dir, "no-metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := firmware.LoadFirmwareDirectory(dir)
	if err != nil {
		t.Fatal(err)
	}
	u := model(t, c, "Dell", "PowerEdge R750").Components[firmware.UEFI]
	if d, _ := u.Default(); d.Version != "2.0" || len(u.KnownFirmware) != 2 || u.KnownFirmware[0].Default {
		t.Fatalf("newest directory should win: %+v", u.KnownFirmware)
	}
	// Touch the older directory: it now wins.
	if err := os.Chtimes(filepath.Join(dir, "dir_B_1"), t0.Add(time.Second), t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	c, err = firmware.LoadFirmwareDirectory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := model(t, c, "Dell", "PowerEdge R750").Components[firmware.UEFI].Default(); d.Version != "1.0" {
		t.Fatalf("after touching dir_B_1 the default is %s, want 1.0", d.Version)
	}
}

// A component no source gives a matcher is refused once merged.
func TestLoadCatalogRefusesComponentWithoutMatcher(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(p, []byte("vendor = \"Dell\"\nmodel = \"R\"\n[components.bmc]\nknown_firmware = [ { version = \"1\", default = true } ]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := firmware.LoadCatalog(p); !firmware.CatalogInvalid.Is(err) || !strings.Contains(err.Error(), "c.toml") || !strings.Contains(err.Error(), "components.bmc") {
		t.Fatalf("LoadCatalog = %v", err)
	}
	if _, err := firmware.LoadCatalog(filepath.Join(dir, "absent.toml")); !firmware.CatalogInvalid.Is(err) {
		t.Fatalf("missing file = %v", err)
	}
	if _, err := firmware.LoadCatalog(dir); !firmware.CatalogInvalid.Is(err) || !strings.Contains(err.Error(), "no subdirectory holds a metadata.toml") {
		t.Fatalf("a directory of catalog files = %v", err)
	}
}

func TestForHostLookup(t *testing.T) {
	c := mustParse(t, "site.toml", `
[host_models.dell]
vendor = "Dell"
model = "PowerEdge R750"
[host_models.lenovo]
vendor = "Lenovo"
model = "ThinkSystem HS350X V3"
[host_models.lenovoami]
vendor = "LenovoAMI"
model = "ThinkSystem HS350X V3"
[host_models.dgx]
vendor = "Nvidia"
model = "DGXH100"
`)
	cases := []struct {
		name       string
		id         firmware.Identity
		wantVendor string
	}{
		{"Dell Inc. is Dell", firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750"}, "Dell"},
		{"model compared lower-cased", firmware.Identity{Manufacturer: "Dell Inc.", Model: " poweredge r750 "}, "Dell"},
		{"NVIDIA is Nvidia", firmware.Identity{Manufacturer: "NVIDIA", Model: "DGXH100", BMCVendor: bmc.VendorAMI}, "Nvidia"},
		{"a Lenovo host with an XCC is Lenovo", firmware.Identity{Manufacturer: "Lenovo", Model: "ThinkSystem HS350X V3", BMCVendor: bmc.VendorLenovo}, "Lenovo"},
		{"a Lenovo host with an AMI BMC is LenovoAMI", firmware.Identity{Manufacturer: "Lenovo", Model: "ThinkSystem HS350X V3", BMCVendor: bmc.VendorAMI}, "LenovoAMI"},
		{"no manufacturer: the BMC's vendor", firmware.Identity{Model: "PowerEdge R750", BMCVendor: bmc.VendorDell}, "Dell"},
		{"another model is not in the catalog", firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R760"}, ""},
		{"a model of another vendor is not in the catalog", firmware.Identity{Manufacturer: "Supermicro", Model: "PowerEdge R750"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := c.ForHost(tc.id)
			if tc.wantVendor == "" {
				if ok {
					t.Fatalf("found %s / %s", m.Vendor, m.Model)
				}
				return
			}
			if !ok || m.Vendor != tc.wantVendor {
				t.Fatalf("ForHost = %+v, %v; want vendor %s", m, ok, tc.wantVendor)
			}
		})
	}
	// A Lenovo host with an AMI BMC falls back to Lenovo.
	only := mustParse(t, "l.toml", "vendor = \"Lenovo\"\nmodel = \"X\"\n")
	if m, ok := only.ForHost(firmware.Identity{Manufacturer: "Lenovo", Model: "X", BMCVendor: bmc.VendorAMI}); !ok || m.Vendor != "Lenovo" {
		t.Fatalf("no LenovoAMI entry: %v, %v", m, ok)
	}
}
