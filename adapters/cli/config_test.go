package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/intent"
)

// goodConfig is a valid config file (the wiring tests parse the same).
const goodConfig = `site: lab1
netbox:
  url: https://netbox.example.net
  token_env: LAB1_NETBOX_TOKEN
ironic:
  - name: ironic-gpu
    url: https://ironic-gpu.example.net:6385
    device_classes: [GPU_COMPUTE]
  - name: ironic-cpu
    url: https://ironic-cpu.example.net:6385
    device_classes: [CPU_BAREMETAL, HYPERVISOR]
gates:
  enrollment_configure_dhcp: false
  enrollment_configure_bmc: false
  enrollment_ironic_enrol: true
  switch_to_ipmi_after_inspection: true
  restrict_boot: false
  platform_class_activity_ready: false
  ironic_tag: enrolled
  node_lock_max_wait: 20m
  cleaning_deadline: 7200
  max_attempts: 5
  enrol_project: baremetal-enrol
vault:
  kind: file
  path: /etc/hostforge/vault.yaml
`

func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEnrollConfigErrors(t *testing.T) {
	dir := t.TempDir()
	vault := writeFile(t, dir, "vault.yaml", "ipmi-exporter: {username: ipmi, password: s3cret-ipmi}\n", 0o600)
	cfg := strings.Replace(goodConfig, "/etc/hostforge/vault.yaml", vault, 1)

	// A bad file: CONFIG_INVALID with the file, the key and the line.
	bad := writeFile(t, dir, "bad.yaml", strings.Replace(cfg, "max_attempts: 5", "max_attempts: lots", 1), 0o644)
	r := run(t, "", nil, "enroll", "--config", bad, "cpu-r1-u10")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "CONFIG_INVALID", bad, "line 22: gates.max_attempts")

	r = run(t, "", nil, "enroll", "--config", filepath.Join(dir, "missing.yaml"), "cpu-r1-u10")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "CONFIG_UNREADABLE", "missing.yaml")

	// The token comes from the environment variable the config names.
	good := writeFile(t, dir, "good.yaml", cfg, 0o644)
	r = run(t, "", nil, "enroll", "--config", good, "cpu-r1-u10")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "line 4: netbox.token_env", "LAB1_NETBOX_TOKEN is unset")

	// A vault file others can read is refused, and its content never printed.
	open := writeFile(t, dir, "open-vault.yaml", "ipmi-exporter: {username: ipmi, password: s3cret-ipmi}\n", 0o644)
	r = run(t, "", map[string]string{"LAB1_NETBOX_TOKEN": "tok-123"}, "enroll", "--config",
		writeFile(t, dir, "open.yaml", strings.Replace(cfg, vault, open, 1), 0o644), "cpu-r1-u10")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "vault.path", "readable by group or others")
	if strings.Contains(r.err+r.out, "s3cret") || strings.Contains(r.err+r.out, "tok-123") {
		t.Errorf("a secret leaked:\n%s%s", r.out, r.err)
	}
}

func TestBackfillConfigRefusesWithoutFleetManager(t *testing.T) {
	dir := t.TempDir()
	cfg := strings.Replace(goodConfig, "  enrollment_ironic_enrol: true\n", "  enrollment_ironic_enrol: false\n", 1)
	cfg = strings.Replace(cfg, "kind: file\n  path: /etc/hostforge/vault.yaml\n", "kind: file\n  path: "+writeFile(t, dir, "v.yaml", "{}\n", 0o600)+"\n", 1)
	var hits int
	nb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++; http.NotFound(w, r) }))
	defer nb.Close()
	cfg = strings.Replace(cfg, "https://netbox.example.net", nb.URL, 1)
	r := run(t, "", map[string]string{"LAB1_NETBOX_TOKEN": "tok"}, "platform-class", "backfill", "--config", writeFile(t, dir, "c.yaml", cfg, 0o644))
	wantCode(t, r, ExitUsage)
	wantError(t, r, "fleet manager")
	if hits != 0 {
		t.Errorf("NetBox was called %d times before the refusal", hits)
	}
}

func TestEnrollConfigAgainstNetBoxEmulator(t *testing.T) {
	site := newDemoSite()
	nb := httptest.NewServer(netboxhttp.New(site.NetBox, netboxhttp.Options{Token: "tok-lab1"}))
	defer nb.Close()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "lab1.yaml", `site: lab1
netbox:
  url: `+nb.URL+`
  token_file: `+writeFile(t, dir, "token", "tok-lab1\n", 0o600)+`
ironic:
  - name: ironic-cpu
    url: https://ironic-cpu.example.net:6385
    device_classes: [CPU_BAREMETAL, HYPERVISOR]
gates:
  enrollment_ironic_enrol: false
`, 0o644)
	// Every host-touching gate is off: routing, the status gate and the NetBox
	// activation run over HTTP through the NetBox adapter.
	r := run(t, "", nil, "enroll", "--config", cfg, "--log-level", "off", "-o", "json", "cpu-r1-u10", "bad-offline-u18")
	wantCode(t, r, ExitInfra)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"enrolled":true`) || !strings.Contains(lines[1], "NETBOX_STATUS_INELIGIBLE") {
		t.Fatalf("enroll over the emulator:\n%s", r.out)
	}
	d, err := site.NetBox.Device(context.Background(), "cpu-r1-u10")
	if err != nil || d.Status != intent.StatusActive {
		t.Errorf("cpu-r1-u10 after enrollment: status %q, %v; want active", d.Status, err)
	}

	// A wrong token is the operator's to fix, and never printed.
	writeFile(t, dir, "token", "not-the-token\n", 0o600)
	r = run(t, "", nil, "enroll", "--config", cfg, "--log-level", "off", "cpu-r1-u11")
	wantCode(t, r, ExitInfra)
	if !strings.Contains(r.out, "NETBOX_UNAUTHORIZED") || strings.Contains(r.out+r.err, "not-the-token") {
		t.Errorf("wrong token:\n%s\n%s", r.out, r.err)
	}
}
