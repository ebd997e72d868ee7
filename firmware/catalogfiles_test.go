package firmware_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
)

type reloadCounter struct{ ok, refused int }

func (r *reloadCounter) CatalogReload(ok bool) {
	if ok {
		r.ok++
	} else {
		r.refused++
	}
}

const bmcMeta = "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.bmc]\ncurrent_version_reported_as = \"^Installed-.*__iDRAC.\"\nknown_firmware = [ { version = \"VERSION\", filename = \"/fw/idrac.exe\", default = true } ]\n"

// CatalogFiles checks its files at most every Every and re-reads them when
// a metadata.toml is new, changed or removed; files that do not load, or
// that the site's check refuses, leave the last good catalog in force,
// counted and shown until the files change again.
func TestCatalogFilesReload(t *testing.T) {
	dir := t.TempDir()
	put := func(sub, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sub, "metadata.toml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		// Each write is a newer directory than the last.
		later := time.Now().Add(time.Duration(len(sub)) * time.Second)
		_ = os.Chtimes(filepath.Join(dir, sub), later, later)
	}
	desired := func(c *firmware.Catalog) string {
		m, ok := c.Model("Dell", "PowerEdge R750")
		if !ok {
			return "none"
		}
		return m.Desired()[firmware.BMC]
	}
	put("a", strings.ReplaceAll(bmcMeta, "VERSION", "6.00"))
	clk := clock.NewFake(time.Now())
	counter := &reloadCounter{}
	refuseURLs := func(c *firmware.Catalog) error {
		if len(c.Downloads()) > 0 {
			return errors.New("URL artifacts and no cache")
		}
		return nil
	}
	cf, err := firmware.OpenCatalogFiles([]string{dir}, firmware.CatalogFilesOptions{Clock: clk, Every: time.Minute, Metrics: counter, Check: refuseURLs})
	if err != nil {
		t.Fatal(err)
	}
	if got := desired(cf.Current()); got != "6.00" {
		t.Fatalf("desired %s", got)
	}
	put("bb", strings.ReplaceAll(bmcMeta, "VERSION", "7.10"))
	if got := desired(cf.Current()); got != "6.00" {
		t.Errorf("the files were read again before Every passed: %s", got)
	}
	clk.Advance(time.Minute)
	if got := desired(cf.Current()); got != "7.10" {
		t.Errorf("a new metadata.toml was not picked up: %s", got)
	}
	if st := cf.Status(); len(st.Files) != 2 || st.Reloads != 1 || st.Error != "" || counter.ok != 1 {
		t.Errorf("status %+v, counted %+v", st, counter)
	}

	// Broken, then refused by the site's check: the last good catalog
	// stays; each bad state is counted once.
	put("bb", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\nunknown_key = 1\n")
	changed, err := cf.Refresh()
	if changed || err == nil || !firmware.CatalogInvalid.Is(err) || desired(cf.Current()) != "7.10" {
		t.Fatalf("a broken file: changed %v, err %v, desired %s", changed, err, desired(cf.Current()))
	}
	if _, err := cf.Refresh(); err == nil || counter.refused != 1 {
		t.Errorf("the same broken files: err %v, counted %d times", err, counter.refused)
	}
	put("bb", strings.ReplaceAll(strings.ReplaceAll(bmcMeta, "VERSION", "7.20"), `filename = "/fw/idrac.exe"`, `files = [ { url = "https://fw.example.net/idrac.exe", sha256 = "`+strings.Repeat("cd", 32)+`" } ]`))
	if _, err := cf.Refresh(); err == nil || !strings.Contains(err.Error(), "no cache") || desired(cf.Current()) != "7.10" {
		t.Errorf("a catalog the site refuses: err %v, desired %s", err, desired(cf.Current()))
	}
	if st := cf.Status(); !strings.Contains(st.Error, "no cache") || st.Refused != 2 || counter.refused != 2 {
		t.Errorf("status %+v, counted %+v", st, counter)
	}

	// Removed: the directory's other file is the catalog again.
	if err := os.RemoveAll(filepath.Join(dir, "bb")); err != nil {
		t.Fatal(err)
	}
	if changed, err := cf.Refresh(); !changed || err != nil || desired(cf.Current()) != "6.00" || cf.Status().Error != "" {
		t.Errorf("a removed metadata.toml: changed %v, err %v, desired %s", changed, err, desired(cf.Current()))
	}
}

// A runtime override is checked against the catalog of files and the
// other overrides before it is written, and refused whole when it would
// not apply; the passes use it at once.
func TestOperatorOverrides(t *testing.T) {
	ctx := context.Background()
	store := firmwarefake.NewMemStore()
	cat := mustParse(t, "world.toml", worldCatalog)
	clk := clock.NewFake(t0)
	op := &firmware.Operator{Store: store, Hosts: firmwarefake.NewHosts(), Clock: clk, Catalog: cat}
	ov := firmware.Override{Vendor: "Dell Inc.", Model: "PowerEdge R750", Component: firmware.BMC,
		Entry: firmware.Entry{Version: "7.20.10.00", Default: true, Artifacts: []firmware.Artifact{{Filename: "/fw/idrac-7.20.exe"}}}}
	if _, err := op.SetOverride(ctx, ov); err != nil {
		t.Fatal(err)
	}
	eff, ovs, err := op.EffectiveCatalog(ctx)
	if err != nil || len(ovs) != 1 {
		t.Fatal(ovs, err)
	}
	if m, _ := eff.Model("Dell", "PowerEdge R750"); m.Desired()[firmware.BMC] != "7.20.10.00" {
		t.Errorf("desired after the override: %v", m.Desired())
	}
	// Setting it again replaces it, later.
	clk.Advance(time.Minute)
	ov.Entry.Artifacts = []firmware.Artifact{{Filename: "/fw/idrac-7.20b.exe"}}
	if _, err := op.SetOverride(ctx, ov); err != nil {
		t.Fatal(err)
	}
	if _, ovs, _ := op.EffectiveCatalog(ctx); len(ovs) != 1 || ovs[0].Entry.Artifacts[0].Filename != "/fw/idrac-7.20b.exe" {
		t.Errorf("overrides %+v", ovs)
	}
	for name, bad := range map[string]firmware.Override{
		"unknown component":     {Vendor: "Dell", Model: "PowerEdge R750", Component: "flux", Entry: firmware.Entry{Version: "1"}},
		"new model, no matcher": {Vendor: "Acme", Model: "Z9", Component: firmware.BMC, Entry: firmware.Entry{Version: "1"}},
		"URL without sha256":    {Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.UEFI, Entry: firmware.Entry{Version: "1.14", Artifacts: []firmware.Artifact{{URL: "https://fw.example.net/bios.exe"}}}},
		"no version":            {Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.UEFI},
	} {
		if _, err := op.SetOverride(ctx, bad); !firmware.CatalogInvalid.Is(err) {
			t.Errorf("%s: %v; want FIRMWARE_CATALOG_INVALID", name, err)
		}
	}
	if _, ovs, _ := op.EffectiveCatalog(ctx); len(ovs) != 1 {
		t.Errorf("a refused override was written: %+v", ovs)
	}
	if _, err := op.DeleteOverride(ctx, "Dell", "poweredge r750", firmware.BMC, "7.20.10.00"); err != nil {
		t.Fatal(err)
	}
	if _, err := op.DeleteOverride(ctx, "Dell", "poweredge r750", firmware.BMC, "7.20.10.00"); !firmware.RequestRefused.Is(err) {
		t.Errorf("deleting an absent override: %v", err)
	}
}
