package firmware_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/realdata"
)

// The four real BMC captures with a FirmwareInventory.
var machines = []struct{ key, dir, manufacturer, model string }{
	{"dell", "redfish/dell/r750-idrac9", "Dell Inc.", "PowerEdge R750"},
	{"lenovo", "redfish/lenovo/sr670v2-xcc", "Lenovo", "ThinkSystem SR670 V2"},
	{"ami", "redfish/ami/dgx-h100-megarac", "NVIDIA", "DGXH100"},
	{"supermicro", "redfish/supermicro/sys-821ge-tnhr", "Supermicro", "SYS-821GE-TNHR"},
}

// matcherTable is the computed table of testdata/firmware/README.md: for
// every matcher of the real catalogs and of NICo's built-in matcher table,
// the inventory members (Id → Version, "null" for a null Version) it hits
// on each machine, before any filtering.
var matcherTable = []struct {
	re   string
	hits map[string][]string // machine key → "Id=Version"
}{
	{`^Installed-.*__iDRAC.`, map[string][]string{"dell": {"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1=6.00.30.00"}}},
	{`^Installed-.*__BIOS.Setup.`, map[string][]string{"dell": {"Installed-159-1.8.2__BIOS.Setup.1-1=1.8.2"}}},
	{`BMCImage1`, nil},
	{`^CX7_[0-9]+$`, nil},
	{`^Installed-.*__CPLD.Embedded.`, map[string][]string{"dell": {"Installed-27763-1.0.5__CPLD.Embedded.1=1.0.5"}}},
	{`^BMC-Primary`, map[string][]string{"lenovo": {"BMC-Primary=42S-2.83", "BMC-Primary-Pending=-*"}}},
	{`^UEFI`, map[string][]string{"lenovo": {"UEFI=22J-1.51", "UEFI-Pending=null"}}},
	{`^HostBMC_0$`, map[string][]string{"ami": {"HostBMC_0=23.11.21"}}},
	{`^HGX_FW_BMC_0$`, map[string][]string{"ami": {"HGX_FW_BMC_0=HGX-22.10-1-rc57"}, "supermicro": {"HGX_FW_BMC_0=HGX-22.10-1-rc34"}}},
	{`^HostBIOS_0$`, map[string][]string{"ami": {"HostBIOS_0=01.01.03"}}},
	{`^FW_BMC_0$`, nil},
	{`^HGX_FW_GPU_0$`, nil},
	{`^HGX_FW_CPU_0$`, nil},
}

// nullVersions are the members whose Version is JSON null.
var nullVersions = map[string]bool{"UEFI-Pending": true}

func readMachine(t *testing.T, dir string) firmware.TreeResult {
	t.Helper()
	res, err := firmware.ReadSavedTree(realdata.Path(t, dir))
	if err != nil {
		t.Fatalf("ReadSavedTree(%s): %v", dir, err)
	}
	return res
}

// The saved-tree reader and the matchers reproduce the computed table.
func TestRealMatcherTable(t *testing.T) {
	for _, m := range machines {
		res := readMachine(t, m.dir)
		id := res.Inventory.Identity
		if id.Manufacturer != m.manufacturer || id.Model != m.model {
			t.Errorf("%s: identity %+v", m.key, id)
		}
		for _, row := range matcherTable {
			re := regexp.MustCompile(row.re)
			var got []string
			for _, e := range res.Inventory.Entries {
				if re.MatchString(e.ID) {
					v := e.Version
					if nullVersions[e.ID] && v == "" {
						v = "null"
					}
					got = append(got, e.ID+"="+v)
				}
			}
			if want := row.hits[m.key]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s on %s: hits %q, want %q", row.re, m.key, got, want)
			}
		}
	}
}

// builtinCatalog is a catalog of the machines' models built from NICo's
// built-in matcher table, with each component's default set to the
// version the real capture reports: every matched component is ok, and the
// Lenovo pending images do not spoil it.
const builtinCatalog = `
[host_models.dell]
vendor = "Dell"
model = "PowerEdge R750"
[host_models.dell.components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC."
known_firmware = [ { version = "6.00.30.00", default = true } ]
[host_models.dell.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
known_firmware = [ { version = "1.8.2", default = true } ]
[host_models.dell.components.cpldmb]
current_version_reported_as = "^Installed-.*__CPLD.Embedded."
known_firmware = [ { version = "1.0.5", default = true } ]

[host_models.lenovo]
vendor = "Lenovo"
model = "ThinkSystem SR670 V2"
[host_models.lenovo.components.bmc]
current_version_reported_as = "^BMC-Primary"
known_firmware = [ { version = "42S-2.83", default = true } ]
[host_models.lenovo.components.uefi]
current_version_reported_as = "^UEFI"
known_firmware = [ { version = "22J-1.51", default = true } ]

[host_models.dgx]
vendor = "Nvidia"
model = "DGXH100"
ordering = ["hgxbmc", "combinedbmcuefi", "uefi", "bmc", "cx7"]
[host_models.dgx.components.combinedbmcuefi]
current_version_reported_as = "^HostBMC_0$"
known_firmware = [ { version = "23.11.21", default = true } ]
[host_models.dgx.components.hgxbmc]
current_version_reported_as = "^HGX_FW_BMC_0$"
known_firmware = [ { version = "HGX-22.10-1-rc57", default = true } ]
[host_models.dgx.components.uefi]
current_version_reported_as = "^HostBIOS_0$"
known_firmware = [ { version = "01.01.03", default = true } ]
[host_models.dgx.components.cx7]
current_version_reported_as = "^CX7_[0-9]+$"
known_firmware = [ { version = "28.47.2682", default = true } ]
`

// summary renders a report as "component:status=reported ids" lines.
func summary(r firmware.Report) []string {
	var out []string
	for _, c := range r.Components {
		var ids []string
		for _, x := range c.Reported {
			ids = append(ids, x.ID+"="+x.Version)
		}
		out = append(out, fmt.Sprintf("%s:%s[%s]", c.Component, c.Status, strings.Join(ids, ",")))
	}
	return out
}

// Drift of every real capture against every real catalog (and the
// built-in matcher catalog): the reported entries are the table's hits
// minus what is not installed firmware, and a model without a catalog
// entry is not drifted.
func TestRealDrift(t *testing.T) {
	nico := func(name string) string {
		if fix, ok := undeclaredDownloads[name]; ok {
			// Published with downloads that cannot prove what they are:
			// their drift is read from the catalog as a site would fix it.
			p := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(p, fix.declare(realdata.Read(t, "firmware", "nico", name)), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		return realdata.Path(t, "firmware", "nico", name)
	}
	builtin := filepath.Join(t.TempDir(), "builtin.toml")
	if err := os.WriteFile(builtin, []byte(builtinCatalog), 0o644); err != nil {
		t.Fatal(err)
	}
	// The firmware directory, with the modification times its test gives
	// (a checkout does not keep them): dir_A_2 written after dir_B_1.
	fwdir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, sub := range []string{"dir_B_1", "dir_A_2"} {
		b := realdata.Read(t, "firmware", "nico", "firmware_directory", sub, "metadata.toml")
		if err := os.MkdirAll(filepath.Join(fwdir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fwdir, sub, "metadata.toml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		mod := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		if err := os.Chtimes(filepath.Join(fwdir, sub), mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	type want struct {
		drifted bool
		lines   []string // nil: no catalog entry
	}
	cases := []struct {
		catalog string
		want    map[string]want
	}{
		{nico("metadata-dell-poweredge_r750.toml"), map[string]want{
			"dell": {true, []string{"uefi:drifted[Installed-159-1.8.2__BIOS.Setup.1-1=1.8.2]", "bmc:drifted[Installed-25227-6.00.30.00__iDRAC.Embedded.1-1=6.00.30.00]"}},
		}},
		{nico("full_config.toml"), map[string]want{
			"dell": {true, []string{"uefi:drifted[Installed-159-1.8.2__BIOS.Setup.1-1=1.8.2]", "bmc:drifted[Installed-25227-6.00.30.00__iDRAC.Embedded.1-1=6.00.30.00]"}},
		}},
		{nico("metadata-dell-poweredge_r760-docs.toml"), map[string]want{}},
		{nico("metadata-lenovo-thinksystem_hs350x_v3.toml"), map[string]want{}},
		{nico("metadata-lenovoami-thinksystem_hs350x_v3.toml"), map[string]want{}},
		{nico("metadata-nvidia-dgxh100-cx7.toml"), map[string]want{
			"ami": {false, []string{"cx7:unmatched[]"}},
		}},
		{fwdir, map[string]want{ // firmware_directory
			"dell": {true, []string{"uefi:drifted[Installed-159-1.8.2__BIOS.Setup.1-1=1.8.2]"}},
		}},
		{builtin, map[string]want{
			"dell":   {false, []string{"bmc:ok[Installed-25227-6.00.30.00__iDRAC.Embedded.1-1=6.00.30.00]", "uefi:ok[Installed-159-1.8.2__BIOS.Setup.1-1=1.8.2]", "cpldmb:ok[Installed-27763-1.0.5__CPLD.Embedded.1=1.0.5]"}},
			"lenovo": {false, []string{"bmc:ok[BMC-Primary=42S-2.83]", "uefi:ok[UEFI=22J-1.51]"}},
			"ami":    {false, []string{"hgxbmc:ok[HGX_FW_BMC_0=HGX-22.10-1-rc57]", "combinedbmcuefi:ok[HostBMC_0=23.11.21]", "uefi:ok[HostBIOS_0=01.01.03]", "cx7:unmatched[]"}},
			// The DGX matcher ^HGX_FW_BMC_0$ hits this HGX baseboard too, but
			// the lookup is by vendor and model first.
		}},
	}
	trees := map[string]firmware.TreeResult{}
	for _, m := range machines {
		trees[m.key] = readMachine(t, m.dir)
	}
	for _, c := range cases {
		name := filepath.Base(c.catalog)
		if c.catalog == fwdir {
			name = "firmware_directory"
		}
		t.Run(name, func(t *testing.T) {
			cat, err := firmware.LoadCatalog(c.catalog)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range machines {
				r := firmware.Drift(cat, trees[m.key].Inventory)
				w, inCatalog := c.want[m.key]
				if !inCatalog {
					if r.InCatalog || r.Drifted || len(r.Components) != 0 || r.Model != m.model {
						t.Errorf("%s: model without an entry reported %+v", m.key, r)
					}
					continue
				}
				if got := summary(r); r.Drifted != w.drifted || !reflect.DeepEqual(got, w.lines) {
					t.Errorf("%s: drifted=%v %q\nwant drifted=%v %q", m.key, r.Drifted, got, w.drifted, w.lines)
				}
			}
		})
	}
}

// A matcher that took the first hit in another order would pick Lenovo's
// pending image; the installed-firmware rule makes the order irrelevant.
func TestRealLenovoPendingInAnyOrder(t *testing.T) {
	inv := readMachine(t, "redfish/lenovo/sr670v2-xcc").Inventory
	cat := mustParse(t, "builtin.toml", builtinCatalog)
	rev := inv
	rev.Entries = append([]firmware.InventoryEntry(nil), inv.Entries...)
	sort.Slice(rev.Entries, func(i, j int) bool { return rev.Entries[i].ID > rev.Entries[j].ID })
	for _, i := range []firmware.Inventory{inv, rev} {
		if r := firmware.Drift(cat, i); r.Drifted {
			t.Fatalf("Lenovo with pending images drifted: %q", summary(r))
		}
	}
}

// The collection-only capture (member documents absent) is read without
// failing; the absent members are named in a warning and left out.
func TestRealCollectionOnlyTree(t *testing.T) {
	res := readMachine(t, "redfish/dell/r750-multi-dpu-idrac9")
	if len(res.Inventory.Entries) != 0 || res.Inventory.Identity.Model != "PowerEdge R750" || res.Inventory.Identity.BMCVendor != bmc.VendorDell {
		t.Fatalf("read %+v", res.Inventory)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "23 of the members") {
		t.Fatalf("warnings %q", res.Warnings)
	}
}

// undeclaredDownloads are the real catalogs whose URL artifacts cannot
// prove what they are: the refusal each gets as published (in every
// message), and the catalog as a site would declare it instead (local
// files, or digests that are digests).
var undeclaredDownloads = map[string]struct {
	refused []string
	declare func([]byte) []byte
}{
	"full_config.toml": {
		refused: []string{"full_config.toml:152: [host_models.dell_r750.components.bmc.known_firmware[0]] url", "full_config.toml:180: [host_models.dell_r750_plus.components.uefi.known_firmware[1]] url",
			"https://letmegooglethat.com/ is downloaded", "its checksum is MD5", "files = [{ url"},
		declare: func(b []byte) []byte {
			return regexp.MustCompile(`, url = "[^"]*"`).ReplaceAll(b, nil) // the filenames, verified by their MD5
		},
	},
	"metadata-dell-poweredge_r760-docs.toml": {
		refused: []string{"metadata-dell-poweredge_r760-docs.toml:11: [components.bmc.known_firmware[0]] url", "sha256"},
		declare: func(b []byte) []byte {
			return regexp.MustCompile(`(?m)^url = .*\n`).ReplaceAll(b, nil)
		},
	},
	"metadata-nvidia-dgxh100-cx7.toml": {
		refused: []string{"metadata-nvidia-dgxh100-cx7.toml:17: [components.cx7.known_firmware[0].files[0]] sha256: \"abc123\" is not a SHA-256",
			"metadata-nvidia-dgxh100-cx7.toml:21: [components.cx7.known_firmware[0].files[1]] sha256: \"def456\" is not a SHA-256"},
		declare: func(b []byte) []byte {
			b = []byte(strings.Replace(string(b), `"abc123"`, `"`+strings.Repeat("ab", 32)+`"`, 1))
			return []byte(strings.Replace(string(b), `"def456"`, `"`+strings.Repeat("de", 32)+`"`, 1))
		},
	},
}

// NICo's own catalogs declare downloads by URL with an MD5 checksum, none,
// or placeholder digests; each is refused where it is declared, naming the
// file, line, table and key.
func TestRealCatalogsWithUndeclaredDownloads(t *testing.T) {
	for name, c := range undeclaredDownloads {
		t.Run(name, func(t *testing.T) {
			_, err := firmware.LoadCatalog(realdata.Path(t, "firmware", "nico", name))
			if !firmware.CatalogInvalid.Is(err) {
				t.Fatalf("LoadCatalog: %v, want FIRMWARE_CATALOG_INVALID", err)
			}
			for _, w := range c.refused {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
