package wiring

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
)

const r750Meta = `vendor = "Dell"
model = "PowerEdge R750"
[components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC."
known_firmware = [ { version = "%s", filename = "/fw/idrac-%s.exe", default = true } ]
`

// A new metadata.toml in the firmware directory changes the update
// manager's next pass, with the systems wired once — no restart: the
// worker builds its manager over the wired catalog as this test does.
func TestFirmwareCatalogChangeWithoutRestart(t *testing.T) {
	dir := t.TempDir()
	fwdir := filepath.Join(dir, "firmware")
	write := func(sub, version string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(fwdir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		body := strings.ReplaceAll(r750Meta, "%s", version)
		if err := os.WriteFile(filepath.Join(fwdir, sub, "metadata.toml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("idrac-6.00", "6.00.30.00")
	vaultFile := filepath.Join(dir, "vault.yaml")
	if err := os.WriteFile(vaultFile, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(goodConfig, "/etc/hostforge/vault.yaml", vaultFile, 1) + "ledger: {driver: sqlite, path: " + filepath.Join(dir, "state.db") + "}\n" +
		"firmware:\n  catalog: [" + fwdir + "]\n  settings: {autoupdate: true, max_concurrent_machine_updates_absolute: 5}\n"
	c, err := Parse("lab.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fs, err := OpenFirmware(ctx, c, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	hosts := firmwarefake.NewHosts(firmware.Host{MachineID: "d1", State: firmware.HostReady})
	rep := firmware.Reported{firmware.BMC: {{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Version: "6.00.30.00"}}}
	if err := fs.Store.PutObserved(ctx, firmware.Observed{MachineID: "d1", Identity: firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750"}, Reported: rep, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	m := &firmware.Manager{Store: fs.Store, Hosts: hosts, Catalog: fs.Catalog, Settings: fs.Settings, Clock: clock.Real{}}
	pass, err := m.Pass(ctx)
	if err != nil || len(pass.Started) != 0 || pass.Pending != 0 {
		t.Fatalf("a compliant host: pass %+v, %v", pass, err)
	}

	// A newer directory brings a new default: the next pass sees the drift.
	time.Sleep(20 * time.Millisecond)
	write("idrac-7.10", "7.10.30.00")
	pass, err = m.Pass(ctx)
	if err != nil || len(pass.Started) != 1 || pass.Started[0] != "d1" {
		t.Fatalf("after a new metadata.toml: pass %+v, %v; want d1 started", pass, err)
	}

	// A broken file leaves the last good catalog in force, and says why.
	if err := os.WriteFile(filepath.Join(fwdir, "idrac-7.10", "metadata.toml"), []byte("vendor = \"Dell\"\nbogus = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	st := fs.Catalog.Status()
	if st.Error == "" || !strings.Contains(st.Error, "bogus") || st.Refused != 1 {
		t.Errorf("status after a broken file: %+v", st)
	}
	if mdl, ok := fs.Catalog.Current().ForHost(firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750"}); !ok || mdl.Desired()[firmware.BMC] != "7.10.30.00" {
		t.Errorf("the last good catalog is not in force: %+v", mdl)
	}
}
