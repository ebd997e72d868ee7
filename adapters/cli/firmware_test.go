package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/realdata"
)

var (
	fixtureCatalog = filepath.Join("testdata", "firmware", "catalog.toml")
	fixtureTree    = filepath.Join("testdata", "firmware", "tree")
)

func TestFirmwareDriftJSON(t *testing.T) {
	r := run(t, "", nil, "firmware", "drift", "--catalog", fixtureCatalog, "--inventory", fixtureTree, "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	var got struct {
		Vendor     string `json:"vendor"`
		Model      string `json:"model"`
		Drifted    bool   `json:"drifted"`
		InCatalog  bool   `json:"in_catalog"`
		Components []struct {
			Component string  `json:"component"`
			Status    string  `json:"status"`
			Desired   *string `json:"desired"`
			Reported  []struct {
				ID      string `json:"id"`
				Version string `json:"version"`
			} `json:"reported"`
		} `json:"components"`
	}
	dec := json.NewDecoder(strings.NewReader(r.out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("output is not the documented object: %v\n%s", err, r.out)
	}
	if got.Vendor != "Lenovo" || got.Model != "ThinkSystem SR670 V2" || !got.Drifted || !got.InCatalog {
		t.Fatalf("header %+v", got)
	}
	want := map[string]string{"bmc": "ok", "uefi": "drifted", "cx7": "drifted", "gpu": "no-default"}
	if len(got.Components) != len(want) {
		t.Fatalf("components %+v", got.Components)
	}
	for _, c := range got.Components {
		if want[c.Component] != c.Status {
			t.Errorf("%s: %s, want %s", c.Component, c.Status, want[c.Component])
		}
		if c.Component == "cx7" && len(c.Reported) != 2 {
			t.Errorf("cx7 reported %+v, want both cards", c.Reported)
		}
		if c.Component == "bmc" && (len(c.Reported) != 1 || c.Reported[0].ID != "BMC-Primary") {
			t.Errorf("bmc reported %+v: the pending image is not installed firmware", c.Reported)
		}
		if (c.Component == "gpu") != (c.Desired == nil) {
			t.Errorf("%s desired %v", c.Component, c.Desired)
		}
	}
	if !strings.Contains(r.err, "1 of the members") || !strings.Contains(r.err, "PSU1") {
		t.Errorf("no warning for the absent member: %q", r.err)
	}
}

func TestFirmwareDriftText(t *testing.T) {
	r := run(t, "", nil, "firmware", "drift", "--catalog", fixtureCatalog, "--inventory", fixtureTree)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	golden(t, "firmware-drift.txt", r.out)
}

// Bad input exits 2 and names the file; a model without an entry is not
// drifted and lists nothing.
func TestFirmwareDriftInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("vendor = \"Dell\"\nmodel = \"R\"\n[components.bmc]\ncurrent_version_reported_as = \"(\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.toml")
	if err := os.WriteFile(other, []byte("vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.bmc]\ncurrent_version_reported_as = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"bad regex", []string{"--catalog", bad, "--inventory", fixtureTree}, ExitUsage, "bad.toml:4"},
		{"missing catalog", []string{"--catalog", filepath.Join(dir, "none.toml"), "--inventory", fixtureTree}, ExitUsage, "none.toml"},
		{"not a tree", []string{"--catalog", fixtureCatalog, "--inventory", dir}, ExitUsage, "INPUT_INVALID"},
		{"no --inventory", []string{"--catalog", fixtureCatalog}, ExitUsage, "inventory"},
		{"bad -o", []string{"--catalog", fixtureCatalog, "--inventory", fixtureTree, "-o", "yaml"}, ExitUsage, "yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", nil, append([]string{"firmware", "drift"}, c.args...)...)
			if r.code != c.code || !strings.Contains(r.err, c.contains) {
				t.Fatalf("exit %d, stderr %q; want %d containing %q", r.code, r.err, c.code, c.contains)
			}
			if r.out != "" {
				t.Fatalf("bad input printed a report: %s", r.out)
			}
		})
	}
	r := run(t, "", nil, "firmware", "drift", "--catalog", other, "--inventory", fixtureTree, "-o", "json")
	if r.code != ExitOK || strings.TrimSpace(r.out) != "{\n  \"vendor\": \"Lenovo\",\n  \"model\": \"ThinkSystem SR670 V2\",\n  \"in_catalog\": false,\n  \"drifted\": false,\n  \"components\": []\n}" {
		t.Fatalf("model without a catalog entry: exit %d\n%s", r.code, r.out)
	}
}

// The real R750 capture against the real R750 metadata.toml, through the
// command.
func TestFirmwareDriftRealR750(t *testing.T) {
	cat := realdata.Path(t, "firmware", "nico", "metadata-dell-poweredge_r750.toml")
	tree := realdata.Path(t, "redfish", "dell", "r750-idrac9")
	r := run(t, "", nil, "firmware", "drift", "--catalog", cat, "--inventory", tree, "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	var got firmware.Report
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Drifted || len(got.Components) != 2 || got.Components[0].Component != firmware.UEFI ||
		got.Components[0].Reported[0].Version != "1.8.2" || *got.Components[1].Desired != "7.10.30.00" {
		t.Fatalf("report %+v", got)
	}
}

// Each host object says whether a catalog model matched it: a host that is
// not in the catalog is no longer indistinguishable from a compliant one.
func TestFirmwareDriftInCatalog(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.toml")
	if err := os.WriteFile(other, []byte("vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.bmc]\ncurrent_version_reported_as = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		catalog string
		want    bool
	}{{fixtureCatalog, true}, {other, false}} {
		r := run(t, "", nil, "firmware", "drift", "--catalog", c.catalog, "--inventory", fixtureTree, "-o", "json")
		if r.code != ExitOK {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(r.out), &got); err != nil {
			t.Fatal(err)
		}
		in, ok := got["in_catalog"].(bool)
		if !ok || in != c.want {
			t.Errorf("catalog %s: in_catalog %v (present %v), want %v\n%s", c.catalog, got["in_catalog"], ok, c.want, r.out)
		}
	}
}
