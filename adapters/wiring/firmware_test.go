package wiring

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/firmware"
)

// firmwareSample is the firmware: sample of FirmwareHelp, unindented.
func firmwareSample(t testing.TB) string {
	t.Helper()
	start := strings.Index(FirmwareHelp, "  firmware:")
	end := start + strings.Index(FirmwareHelp[start:], "\n\n")
	if start < 0 || end < start {
		t.Fatal("no firmware sample in FirmwareHelp")
	}
	var lines []string
	for _, l := range strings.Split(FirmwareHelp[start:end], "\n") {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	return strings.Join(lines, "\n") + "\n"
}

const ledgerSection = "ledger: {driver: sqlite, path: /var/lib/hostforge/state.db}\n"

func TestFirmwareSection(t *testing.T) {
	c, err := Parse("lab.yaml", []byte(goodConfig+ledgerSection+firmwareSample(t)))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Firmware.Settings.Settings()
	if !s.AutoUpdate || s.MaxUploads != 4 || s.RetryInterval != time.Hour || s.RunInterval != 300*time.Second || *s.MaxConcurrentAbsolute != 4 ||
		*s.MaxConcurrentPercent != 10 || s.InstanceAutorebootPeriod == nil || s.TaskPoll != 30*time.Second {
		t.Errorf("settings %+v", s)
	}
	if c.Firmware.ScriptTimeout.D() != time.Hour || c.Firmware.Scout.Listen != "0.0.0.0:8643" {
		t.Errorf("section %+v", c.Firmware)
	}
	bad := []struct{ edit, key string }{
		{"max_uploads: 4", "max_uploads: -1"},
		{"max_concurrent_machine_updates_percent: 10", "max_concurrent_machine_updates_percent: 120"},
		{"script_timeout: 1h", "script_timeout: 6h"},
		{"catalog: [/etc/hostforge/firmware.toml, /opt/hostforge/firmware]", "catalog: []"},
		{"listen: 0.0.0.0:8643\n", "listen: ''\n"},
		{"    autoupdate: true\n", "    autoupdate: true\n    unknown_knob: 1\n"},
	}
	for _, b := range bad {
		doc := strings.Replace(goodConfig+ledgerSection+firmwareSample(t), b.edit, b.key, 1)
		if doc == goodConfig+ledgerSection+firmwareSample(t) {
			t.Fatalf("edit %q matched nothing", b.edit)
		}
		if _, err := Parse("lab.yaml", []byte(doc)); !ConfigInvalid.Is(err) || !strings.Contains(err.Error(), "line") {
			t.Errorf("%s: err = %v; want CONFIG_INVALID naming a line", b.key, err)
		}
	}
	if _, err := Parse("lab.yaml", []byte(goodConfig+firmwareSample(t))); !ConfigInvalid.Is(err) || !strings.Contains(err.Error(), "ledger") {
		t.Errorf("firmware without the ledger's state database: %v", err)
	}
}

func TestOpenFirmwareOnSQLite(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog.toml")
	if err := os.WriteFile(cat, []byte("[host_models.r750]\nvendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[host_models.r750.components.bmc]\ncurrent_version_reported_as = \"^Installed-.*__iDRAC.\"\nknown_firmware = [ { version = \"7.10.30.00\", filename = \"/fw/idrac.exe\", default = true } ]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vaultFile := filepath.Join(dir, "vault.yaml")
	if err := os.WriteFile(vaultFile, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := goodConfig + "ledger: {driver: sqlite, path: " + filepath.Join(dir, "state.db") + "}\nfirmware:\n  catalog: [" + cat + "]\n"
	doc = strings.Replace(doc, "/etc/hostforge/vault.yaml", vaultFile, 1)
	c, err := Parse("lab.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := OpenFirmware(context.Background(), c, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	if _, ok := fs.Catalog.ForHost(firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750"}); !ok {
		t.Error("the catalog lacks the R750")
	}
	if _, err := fs.Store.CreateRequest(context.Background(), firmware.Request{MachineID: "m1", Initiator: "t"}); err != nil {
		t.Fatalf("the store does not work: %v", err)
	}
	if fs.Executor.Scout != nil || fs.Scout != nil || len(fs.Hosts.Instances) != 2 {
		t.Errorf("wired %+v", fs)
	}
}
