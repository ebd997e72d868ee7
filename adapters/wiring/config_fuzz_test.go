package wiring

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
)

// configErrorForm is what every config error says after the file name: the
// line, or the key when the document has no line for it.
var configErrorForm = regexp.MustCompile(`^fuzz\.yaml: (line [1-9][0-9]*: |[a-z_]+(\[[0-9]+\])?(\.[a-z_]+(\[[0-9]+\])?)*: )`)

// FuzzParseConfig feeds the config reader arbitrary documents: it never
// panics, and every refusal is CONFIG_INVALID naming a line or a key.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(ExampleConfig()))
	f.Add([]byte(goodConfig))
	f.Add([]byte(goodConfig + "ledger:\n  driver: postgres\n  dsn_file: /etc/hostforge/ledger.dsn\n  projection_interval: 1m\n"))
	for _, s := range []string{
		"",
		"# only a comment\n",
		"---\n",
		"site: lab1\n",
		"[1, 2]\n",
		"site: &a lab1\nnetbox: {url: *a}\n",
		"site: lab1\nnetbox: {url: 'https://nb'}\ndhcp: {host: 'dhcp1:22', timeouts: {command: 10m}}\n",
		"site: lab1\nnetbox: {url: 'https://nb'}\ngates: {enrollment_configure_dhcp: true}\ndhcp: {host: dhcp1, flavour: kea}\nvault: {kind: file, path: /v}\n",
		"ironic: &x [{name: a, device_classes: *x}]\n",
		"site: lab1\nnetbox: {url: 'http://127.0.0.1:1'}\nironic: [{name: a, url: 'http://127.0.0.1:6385', device_classes: [GPU_COMPUTE], timing: {link_budget: 20s, state_poll: 1s}}]\nbmc: {endpoints: [{address: 10.10.0.3, endpoint: '127.0.0.1:8443'}]}\n",
		"site: lab1\n\x01\n",
		"site: \xff\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("fuzz.yaml", b)
		if err != nil {
			fl, ok := hostforge.AsFailure(err)
			if !ok || fl.Code != ConfigInvalid.Code {
				t.Fatalf("%v is not CONFIG_INVALID", err)
			}
			if !configErrorForm.MatchString(fl.Message) {
				t.Fatalf("%q names neither a line nor a key", fl.Message)
			}
			return
		}
		// An accepted config holds what validation promised.
		if strings.TrimSpace(c.Site) == "" || checkURL(c.NetBox.URL) != nil {
			t.Fatalf("accepted a config without a site or a NetBox URL: %+v", c)
		}
		sc := c.SiteConfig()
		if sc.IronicEnrol && len(sc.IronicInstances) == 0 {
			t.Fatalf("accepted enrollment_ironic_enrol without an Ironic instance: %+v", c)
		}
		if c.Gates.ConfigureDHCP && c.DHCP == nil {
			t.Fatalf("accepted enrollment_configure_dhcp without a dhcp section: %+v", c)
		}
		if c.DHCP != nil {
			if _, err := c.DHCP.Addr(); err != nil {
				t.Fatalf("accepted dhcp.host %q: %v", c.DHCP.Host, err)
			}
			if _, err := c.DHCP.Server().Resolved(); err != nil {
				t.Fatalf("accepted a dhcp section its phase refuses: %v", err)
			}
		}
		for i, ir := range c.Ironic {
			for _, f := range ir.Timing.fields() {
				if f.d < 0 {
					t.Fatalf("accepted a negative ironic[%d].timing.%s", i, f.key)
				}
			}
		}
		for _, e := range c.BMC.Endpoints {
			if checkHostPort(e.Endpoint) != nil || e.Address == "" {
				t.Fatalf("accepted bmc endpoint %+v", e)
			}
		}
		if (c.Gates.ConfigureDHCP || c.Gates.ConfigureBMC || c.Gates.IronicEnrol) && (c.Vault == nil || c.Vault.Path == "") {
			t.Fatalf("accepted a host-touching gate without a vault: %+v", c)
		}
	})
}

// Aliases of aliases cannot make a small file expand without bound.
func TestParseConfigBoundsAliasExpansion(t *testing.T) {
	classes := strings.TrimSuffix(strings.Repeat("GPU_COMPUTE, ", 300), ", ")
	refs := strings.Repeat(", *i", 400)
	doc := "site: lab1\nironic: [&i {name: a, url: 'https://x', device_classes: [" + classes + "]}" + refs + "]\n"
	if len(doc) > 8<<10 {
		t.Fatalf("the document is %d bytes; the point is a small one", len(doc))
	}
	_, err := Parse("fuzz.yaml", []byte(doc))
	fl, ok := hostforge.AsFailure(err)
	if !ok || fl.Code != ConfigInvalid.Code || !strings.Contains(fl.Message, "expands to more than") || !configErrorForm.MatchString(fl.Message) {
		t.Fatalf("%v, want CONFIG_INVALID naming the line where the expansion passes the bound", err)
	}
	// Without the repetition the same shape is an ordinary validation error.
	_, err = Parse("fuzz.yaml", []byte("site: lab1\nironic: [&i {name: a, url: 'https://x', device_classes: [GPU_COMPUTE]}, *i]\n"))
	if err == nil || strings.Contains(err.Error(), "expands") {
		t.Fatalf("%v, want the ordinary validation error", err)
	}
}
