package wiring

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/firmware"
)

// firmwareSample is the firmware: section of the sample config.
func firmwareSample(t testing.TB) string {
	t.Helper()
	for _, k := range Reference {
		if k.Name == "firmware" {
			return sectionExample(k)
		}
	}
	t.Fatal("Reference has no firmware section")
	return ""
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
		{"  site_secret_item: scout-site-secret", "  site_secret_item: ''"},
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
	// Authentication of the agents is mandatory: a scout section without
	// the site secret names the key; the former fleet-wide token names its
	// replacement.
	sample := goodConfig + ledgerSection + firmwareSample(t)
	var without, withToken []string
	for _, l := range strings.Split(sample, "\n") {
		if strings.HasPrefix(l, "    site_secret_item:") {
			withToken = append(withToken, "    token_file: /etc/hostforge/scout.token")
			continue
		}
		without, withToken = append(without, l), append(withToken, l)
	}
	for _, c := range []struct{ doc, want string }{
		{strings.Join(without, "\n"), "firmware.scout.site_secret_item: missing"},
		{strings.Join(withToken, "\n"), "firmware.scout.token_file: no longer accepted"},
	} {
		if c.doc == sample {
			t.Fatal("the sample has no site_secret_item line")
		}
		_, err := Parse("lab.yaml", []byte(c.doc))
		if !ConfigInvalid.Is(err) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "line") {
			t.Errorf("err = %v; want CONFIG_INVALID naming %q and its line", err, c.want)
		}
		if strings.Contains(c.want, "token_file") && !strings.Contains(fmt.Sprint(err), "site_secret_item") {
			t.Errorf("the refusal of token_file does not name its replacement: %v", err)
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
	if _, ok := fs.Catalog.Current().ForHost(firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750"}); !ok {
		t.Error("the catalog lacks the R750")
	}
	if _, err := fs.Store.CreateRequest(context.Background(), firmware.Request{MachineID: "m1", Initiator: "t"}); err != nil {
		t.Fatalf("the store does not work: %v", err)
	}
	if fs.Executor.Scout != nil || fs.Scout != nil || len(fs.Hosts.Instances) != 2 {
		t.Errorf("wired %+v", fs)
	}
}

// writeServerCert writes a self-signed certificate for 127.0.0.1 and its
// key as PEM files.
func writeServerCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	_, cert := caSigned(t)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "scout.crt"), filepath.Join(dir, "scout.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// The agent server's site secret comes from the vault: registered with the
// process's secrets, refused (naming the key) when the item is missing or
// the secret shorter than 8 characters, and the server wired with it
// authenticates each machine by its own token.
func TestOpenFirmwareScoutSiteSecret(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog.toml")
	if err := os.WriteFile(cat, []byte("[host_models.r750]\nvendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := writeServerCert(t, dir)
	vaultFile := filepath.Join(dir, "vault.yaml")
	doc := goodConfig + "ledger: {driver: sqlite, path: " + filepath.Join(dir, "state.db") + "}\nfirmware:\n  catalog: [" + cat + "]\n" +
		"  scout: {listen: '127.0.0.1:0', cert_file: " + certFile + ", key_file: " + keyFile + ", site_secret_item: scout-site}\n"
	doc = strings.Replace(doc, "/etc/hostforge/vault.yaml", vaultFile, 1)
	c, err := Parse("lab.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct{ vault, want string }{
		{"{}\n", `no item "scout-site"`},
		{"scout-site: {secret: Short77}\n", "has 7 characters; want at least 8"},
		{"scout-site: {password: long-enough-but-wrong-field}\n", "has 0 characters"},
	} {
		if err := os.WriteFile(vaultFile, []byte(v.vault), 0o600); err != nil {
			t.Fatal(err)
		}
		secrets := hostforge.NewSecrets()
		fs, err := OpenFirmware(context.Background(), c, nil, nil, secrets)
		if err == nil {
			fs.Close()
		}
		if !ConfigInvalid.Is(err) || !strings.Contains(err.Error(), "firmware.scout.site_secret_item") || !strings.Contains(err.Error(), v.want) {
			t.Errorf("vault %q: err = %v; want CONFIG_INVALID naming the key and %q", v.vault, err, v.want)
		}
		if err != nil && strings.Contains(err.Error(), "Short77") {
			t.Errorf("the refusal quotes the secret: %v", err)
		}
	}
	const secret = "Scout-Site-Secret-0123456789"
	if err := os.WriteFile(vaultFile, []byte("scout-site: {secret: "+secret+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := hostforge.NewSecrets()
	fs, err := OpenFirmware(context.Background(), c, nil, nil, secrets)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	if fs.Scout == nil || string(fs.Scout.SiteSecret) != secret {
		t.Fatal("the agent server was not wired with the vault's site secret")
	}
	if got := secrets.Scrub("site secret " + secret); strings.Contains(got, secret) {
		t.Errorf("the site secret is not registered with the process's secrets: %q", got)
	}
	got, err := ScoutSiteSecret(context.Background(), c, nil, nil)
	if err != nil || string(got) != secret {
		t.Errorf("ScoutSiteSecret = %q, %v", got, err)
	}
	tok, err := scout.MachineToken(got, "gpu-r1-u02")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fs.Scout)
	defer srv.Close()
	for path, want := range map[string]int{"gpu-r1-u02": http.StatusNoContent, "gpu-r1-u03": http.StatusForbidden} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+scout.PathPrefix+"machines/"+path+"/task", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("gpu-r1-u02's token on %s's task: HTTP %d, want %d", path, resp.StatusCode, want)
		}
	}
}
