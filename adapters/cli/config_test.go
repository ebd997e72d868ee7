package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/intent"
)

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

func TestParseConfig(t *testing.T) {
	c, err := parseConfig([]byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	off := false
	want := enrollment.SiteConfig{
		IronicEnrol:                 true,
		SwitchToIPMIAfterInspection: true,
		RestrictBoot:                &off,
		IronicTag:                   "enrolled",
		NodeLockMaxWait:             enrollment.Duration(20 * time.Minute),
		CleaningDeadline:            enrollment.Duration(2 * time.Hour),
		MaxAttempts:                 5,
		IronicInstances:             map[string]string{"GPU_COMPUTE": "ironic-gpu", "CPU_BAREMETAL": "ironic-cpu", "HYPERVISOR": "ironic-cpu"},
		EnrolProject:                "baremetal-enrol",
	}
	if diff := cmp.Diff(want, c.SiteConfig()); diff != "" {
		t.Errorf("SiteConfig (-want +got):\n%s", diff)
	}
	if c.Site != "lab1" || c.NetBox.TokenEnv != "LAB1_NETBOX_TOKEN" || c.Vault.Path != "/etc/hostforge/vault.yaml" {
		t.Errorf("config: %+v", c)
	}
}

func TestParseConfigErrorsNameKeyAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           string
	}{
		{"unknown top key", "site: lab1\n", "site: lab1\nsitee: lab2\n", "line 2: sitee: unknown key"},
		{"unknown nested key", "  token_env: LAB1_NETBOX_TOKEN\n", "  token_env: LAB1_NETBOX_TOKEN\n  tokn: x\n", "line 5: netbox.tokn: unknown key (known here: ca_file, insecure_skip_verify, token_env, token_file, url)"},
		{"wrong bool", "enrollment_ironic_enrol: true", "enrollment_ironic_enrol: yes-please", `line 15: gates.enrollment_ironic_enrol: want true or false, got "yes-please"`},
		{"wrong int", "max_attempts: 5", "max_attempts: five", `line 22: gates.max_attempts: want a whole number, got "five"`},
		{"bad duration", "node_lock_max_wait: 20m", "node_lock_max_wait: soon", `line 20: gates.node_lock_max_wait: invalid duration "soon"`},
		{"list wanted", "device_classes: [GPU_COMPUTE]", "device_classes: GPU_COMPUTE", "line 8: ironic[0].device_classes: want a list"},
		{"missing url", "  url: https://netbox.example.net\n", "", "line 2: netbox.url: missing"},
		{"bad url", "url: https://netbox.example.net", "url: netbox.example.net", `line 3: netbox.url: "netbox.example.net" is not an http(s) URL`},
		{"credentials in url", "url: https://netbox.example.net", "url: https://admin:hunter2@netbox.example.net", "line 3: netbox.url: the URL carries credentials"},
		{"class twice", "device_classes: [CPU_BAREMETAL, HYPERVISOR]", "device_classes: [CPU_BAREMETAL, GPU_COMPUTE]", "line 11: ironic[1].device_classes[1]: GPU_COMPUTE is already routed to ironic-gpu"},
		{"unknown class", "device_classes: [GPU_COMPUTE]", "device_classes: [SWITCH]", `line 8: ironic[0].device_classes[0]: "SWITCH" is not a device class`},
		{"instance twice", "name: ironic-cpu", "name: ironic-gpu", `line 9: ironic[1].name: instance "ironic-gpu" is named twice`},
		{"dhcp missing", "enrollment_configure_dhcp: false", "enrollment_configure_dhcp: true", "dhcp: missing: gates.enrollment_configure_dhcp is on"},
		{"vault kind", "kind: file", "kind: onepassword", `line 25: vault.kind: "onepassword": want file`},
		{"not yaml", "site: lab1\n", "site: [lab1\n", "not valid YAML"},
		{"key twice", "site: lab1\n", "site: lab1\nsite: lab2\n", "site"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(goodConfig, tc.from, tc.to, 1)
			if doc == goodConfig {
				t.Fatalf("the test's replacement %q does not apply", tc.from)
			}
			_, err := parseConfig([]byte(doc))
			if err == nil {
				t.Fatalf("no error for:\n%s", doc)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

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

	// A bad file: CLI_CONFIG_INVALID with the file, the key and the line.
	bad := writeFile(t, dir, "bad.yaml", strings.Replace(cfg, "max_attempts: 5", "max_attempts: lots", 1), 0o644)
	r := run(t, "", nil, "enroll", "--config", bad, "cpu-r1-u10")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "CLI_CONFIG_INVALID", bad, "line 22: gates.max_attempts")

	r = run(t, "", nil, "enroll", "--config", filepath.Join(dir, "missing.yaml"), "cpu-r1-u10")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "CLI_CONFIG_INVALID", "missing.yaml")

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
	r := run(t, "", map[string]string{"LAB1_NETBOX_TOKEN": "tok"}, "platform-class", "backfill", "--config", writeFile(t, dir, "c.yaml", cfg, 0o644), "--dry-run")
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

// The sample in 'enroll --help' is a valid config.
func TestHelpSampleParses(t *testing.T) {
	start := strings.Index(configHelp, "  site: lab1")
	end := start + strings.Index(configHelp[start:], "\n\n")
	if start < 0 || end < start {
		t.Fatal("no sample in configHelp")
	}
	var lines []string
	for _, l := range strings.Split(configHelp[start:end], "\n") {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	c, err := parseConfig([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("the help's sample config does not parse: %v", err)
	}
	if sc := c.SiteConfig(); sc.IronicInstances["HYPERVISOR"] != "ironic-cpu" || !sc.ConfigureDHCP {
		t.Errorf("sample config maps to %+v", sc)
	}
}
