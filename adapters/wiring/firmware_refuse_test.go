package wiring

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A firmware section that can never work is refused when it is loaded,
// naming the key, before anything is opened: packaged agent scripts without
// the agent's server (every agent attempt would wait out its deadline,
// up to 5 h), and URL artifacts with no cache to download them into
// (every update would fail FIRMWARE_ARTIFACT_MISSING).
func TestFirmwareRefusesConfigsThatCannotWork(t *testing.T) {
	dir := t.TempDir()
	vaultFile := filepath.Join(dir, "vault.yaml")
	if err := os.WriteFile(vaultFile, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.toml")
	if err := os.WriteFile(plain, []byte("[host_models.r750]\nvendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[host_models.r750.components.bmc]\ncurrent_version_reported_as = \"^Installed-.*__iDRAC.\"\nknown_firmware = [ { version = \"7.10.30.00\", filename = \"/fw/idrac.exe\", default = true } ]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withURL := filepath.Join(dir, "url.toml")
	if err := os.WriteFile(withURL, []byte("[host_models.r750]\nvendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[host_models.r750.components.bmc]\ncurrent_version_reported_as = \"^Installed-.*__iDRAC.\"\nknown_firmware = [ { version = \"7.10.30.00\", files = [ { url = \"https://fw.example.net/idrac.exe\", sha256 = \""+strings.Repeat("ab", 32)+"\" } ], default = true } ]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	sqlite := "ledger: {driver: sqlite, path: " + filepath.Join(dir, "state", "state.db") + "}\n"
	postgres := "ledger: {driver: postgres, dsn_file: " + filepath.Join(dir, "absent.dsn") + "}\n"
	config := func(ledger, firmware string) string {
		return strings.Replace(goodConfig, "/etc/hostforge/vault.yaml", vaultFile, 1) + ledger + "firmware:\n" + firmware
	}

	// The agent's scripts without its server: refused while the config is read.
	_, err := Parse("lab.yaml", []byte(config(sqlite, "  catalog: ["+plain+"]\n  scout_scripts: "+dir+"\n")))
	if !ConfigInvalid.Is(err) || !strings.Contains(err.Error(), "firmware.scout_scripts") || !strings.Contains(err.Error(), "firmware.scout") {
		t.Errorf("scout_scripts without firmware.scout: err = %v; want CONFIG_INVALID naming both keys", err)
	}

	// URL artifacts on a shared database without artifact_cache: refused
	// when the catalog is loaded, before the database is opened.
	c, err := Parse("lab.yaml", []byte(config(postgres, "  catalog: ["+withURL+"]\n")))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := OpenFirmware(context.Background(), c, nil, nil, nil)
	if err == nil {
		fs.Close()
	}
	if !ConfigInvalid.Is(err) || !strings.Contains(err.Error(), "firmware.artifact_cache") || !strings.Contains(err.Error(), "https://fw.example.net/idrac.exe") ||
		strings.Contains(err.Error(), "dsn") {
		t.Errorf("URL artifact without a cache: err = %v; want CONFIG_INVALID naming artifact_cache and the URL, before the database", err)
	}

	// On SQLite the cache defaults to a directory beside the state
	// database, and says so.
	c, err = Parse("lab.yaml", []byte(config(sqlite, "  catalog: ["+withURL+"]\n")))
	if err != nil {
		t.Fatal(err)
	}
	fs, err = OpenFirmware(context.Background(), c, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	if want := filepath.Join(dir, "state", DefaultArtifactCacheDir); fs.ArtifactCache != want || !fs.ArtifactCacheDefault {
		t.Errorf("artifact cache %q (default %v), want %q", fs.ArtifactCache, fs.ArtifactCacheDefault, want)
	}
}
