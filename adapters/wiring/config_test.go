package wiring

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/ironic"
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

// The keys the lab and fast tests need: Ironic timing per instance and the
// BMCs' endpoints.
func TestParseConfigTimingAndBMCEndpoints(t *testing.T) {
	doc := strings.Replace(goodConfig, "    device_classes: [GPU_COMPUTE]\n",
		"    device_classes: [GPU_COMPUTE]\n    timing: {link_budget: 20s, state_poll: 1s, state_poll_max: 3s, clean_poll_min: 1s, clean_poll_max: 2s}\n", 1) +
		"bmc:\n  endpoints:\n    - {address: 10.10.0.3, endpoint: '127.0.0.1:8443'}\n"
	c, err := Parse("lab.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := ironic.Timing{LinkBudget: 20 * time.Second, StatePoll: time.Second, StatePollMax: 3 * time.Second, CleanPollMin: time.Second, CleanPollMax: 2 * time.Second}
	if got := c.Ironic[0].Timing.Phases(); got != want {
		t.Errorf("ironic[0] timing %+v, want %+v", got, want)
	}
	if got := c.Ironic[1].Timing.Phases(); got != (ironic.Timing{}) {
		t.Errorf("ironic[1] has no timing section, got %+v", got)
	}
	if m := c.BMC.EndpointMap(); len(m) != 1 || m["10.10.0.3"] != "127.0.0.1:8443" || c.Path() != "lab.yaml" {
		t.Errorf("bmc endpoints %v, path %q", m, c.Path())
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"negative budget", "link_budget: 20s", "link_budget: -1s", "lab.yaml: line 9: ironic[0].timing.link_budget: negative duration"},
		{"poll bounds reversed", "clean_poll_max: 2s", "clean_poll_max: 500ms", "ironic[0].timing.clean_poll_max: 500ms is shorter than clean_poll_min 1s"},
		{"a cap below its first poll", "state_poll_max: 3s", "state_poll_max: 500ms", "ironic[0].timing.state_poll_max: 500ms is shorter than state_poll 1s"},
		{"unknown timing key", "state_poll: 1s", "state_pol: 1s", "ironic[0].timing.state_pol: unknown key"},
		{"endpoint port out of range", "127.0.0.1:8443", "127.0.0.1:70000", `bmc.endpoints[0].endpoint: "127.0.0.1:70000": the port "70000"`},
		{"endpoint without port", "127.0.0.1:8443", "bmc1.example.net", `bmc.endpoints[0].endpoint: "bmc1.example.net": want host:port`},
		{"address not an IP", "address: 10.10.0.3", "address: bmc1", `bmc.endpoints[0].address: "bmc1": want the BMC's out-of-band IP`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("lab.yaml", []byte(strings.Replace(doc, tc.from, tc.to, 1)))
			if !ConfigInvalid.Is(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "lab.yaml: ") {
				t.Fatalf("error %v, want %q naming the file", err, tc.want)
			}
		})
	}
}
