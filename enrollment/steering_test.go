package enrollment_test

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
)

// NetBox data must not steer where Ironic sends the BMC credential:
// redfish_address_override is a bare host or IP (in the site's BMC
// networks when it names them), and ironic_driver_info passes only the
// allowed extras. A breach is NETBOX_DATA_INVALID naming the key, before
// anything is written.
func TestNetBoxDataCannotSteerCredentials(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings map[string]any
		site     func(*enrollment.SiteConfig)
		// field is the key a refusal names; "" accepts.
		field string
		// address is the redfish_address an accepted node gets.
		address string
	}{
		{"bare IP override", map[string]any{"redfish_address_override": "10.10.0.77"}, nil, "", "https://10.10.0.77"},
		{"host:port override", map[string]any{"redfish_address_override": "sushy.lab.example:8443"}, nil, "", "https://sushy.lab.example:8443"},
		{"IPv6 with port", map[string]any{"redfish_address_override": "[fd00::7]:8000"}, nil, "", "https://[fd00::7]:8000"},
		{"IPv6 in brackets", map[string]any{"redfish_address_override": "[fd00::7]"}, nil, "", "https://[fd00::7]"},
		{"IPv6 without brackets", map[string]any{"redfish_address_override": "fd00::7"}, nil, "redfish_address_override", ""},
		{"override in the site's BMC networks", map[string]any{"redfish_address_override": "10.10.0.77"}, func(c *enrollment.SiteConfig) { c.BMCNetworks = []string{"10.10.0.0/16"} }, "", "https://10.10.0.77"},
		{"override with a scheme", map[string]any{"redfish_address_override": "http://10.10.0.77"}, nil, "redfish_address_override", ""},
		{"override with user info", map[string]any{"redfish_address_override": "10.10.0.7@evil.example"}, nil, "redfish_address_override", ""},
		{"override with a path", map[string]any{"redfish_address_override": "evil.example/redfish"}, nil, "redfish_address_override", ""},
		{"override with a bad port", map[string]any{"redfish_address_override": "10.10.0.7:99999"}, nil, "redfish_address_override", ""},
		{"override with a space", map[string]any{"redfish_address_override": "10.10.0.7 "}, nil, "redfish_address_override", ""},
		{"override outside the BMC networks", map[string]any{"redfish_address_override": "192.0.2.9"}, func(c *enrollment.SiteConfig) { c.BMCNetworks = []string{"10.10.0.0/16"} }, "redfish_address_override", ""},
		{"host name with BMC networks set", map[string]any{"redfish_address_override": "bmc7.example"}, func(c *enrollment.SiteConfig) { c.BMCNetworks = []string{"10.10.0.0/16"} }, "redfish_address_override", ""},
		{"allowed extras", map[string]any{"ironic_driver_info": map[string]any{"redfish_system_id": "/redfish/v1/Systems/1", "redfish_auth_type": "session", "redfish_verify_ca": true}}, nil, "", ""},
		{"CA path the site allows", map[string]any{"ironic_driver_info": map[string]any{"redfish_verify_ca": "/etc/ironic/bmc-ca.pem"}}, func(c *enrollment.SiteConfig) { c.RedfishVerifyCAPaths = []string{"/etc/ironic/bmc-ca.pem"} }, "", ""},
		{"CA path the site does not allow", map[string]any{"ironic_driver_info": map[string]any{"redfish_verify_ca": "/tmp/attacker-ca.pem"}}, nil, "ironic_driver_info.redfish_verify_ca", ""},
		{"verification turned off", map[string]any{"ironic_driver_info": map[string]any{"redfish_verify_ca": false}}, nil, "ironic_driver_info.redfish_verify_ca", ""},
		{"system id off the BMC", map[string]any{"ironic_driver_info": map[string]any{"redfish_system_id": "@evil.example/redfish/v1/Systems/1"}}, nil, "ironic_driver_info.redfish_system_id", ""},
		{"system id climbing out", map[string]any{"ironic_driver_info": map[string]any{"redfish_system_id": "/redfish/v1/Systems/../../x"}}, nil, "ironic_driver_info.redfish_system_id", ""},
		{"managed password", map[string]any{"ironic_driver_info": map[string]any{"redfish_password": "x"}}, nil, "ironic_driver_info.redfish_password", ""},
		{"managed address", map[string]any{"ironic_driver_info": map[string]any{"redfish_address": "https://evil.example"}}, nil, "ironic_driver_info.redfish_address", ""},
		{"unknown extra", map[string]any{"ironic_driver_info": map[string]any{"deploy_ramdisk": "http://evil.example/ramdisk"}}, nil, "ironic_driver_info.deploy_ramdisk", ""},
		{"bad auth type", map[string]any{"ironic_driver_info": map[string]any{"redfish_auth_type": "none"}}, nil, "ironic_driver_info.redfish_auth_type", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newIronicWorld(t, fakes.HostSpec{Name: "h1"})
			if tc.site != nil {
				tc.site(&w.cfg)
			}
			_ = w.site.NetBox.Update(func(s *fakes.NetBoxState) error {
				is := s.DeviceByName("h1").ConfigContext["ironic_settings"].(map[string]any)
				for k, v := range tc.settings {
					is[k] = v
				}
				return nil
			})
			before := w.site.Calls().Writes()
			res, err := w.enroll(t, enrollment.Params{})
			if tc.field != "" {
				f, ok := hostforge.AsFailure(err)
				if !ok || f.Code != "NETBOX_DATA_INVALID" || !strings.Contains(f.Message, "config_context.ironic_settings."+tc.field) {
					t.Fatalf("err = %v, want NETBOX_DATA_INVALID naming %s", err, tc.field)
				}
				if w.site.Calls().Writes() != before {
					t.Fatalf("refused data led to writes: %s", w.site.Calls())
				}
				return
			}
			if err != nil || !res.Enrolled {
				t.Fatalf("result %+v, %v", res, err)
			}
			if tc.address != "" {
				n, _ := w.ir.Node("h1")
				if got := n.DriverInfo["redfish_address"]; got != tc.address {
					t.Fatalf("redfish_address %v, want %s", got, tc.address)
				}
			}
		})
	}
}

// FuzzRedfishAddressOverride: an override the rule accepts, given to Ironic
// as https://<override>, names that host and nothing else: no user info, no
// path, no other scheme; with BMC networks set, an address inside them.
func FuzzRedfishAddressOverride(f *testing.F) {
	for _, s := range []string{"10.10.0.77", "sushy.lab.example:8443", "[fd00::7]:8000", "fd00::7", "[fd00::7]", "[fe80::1%eth0]", "x:+80", "x:080", "http://x", "a@b", "a/b", "x:0", "[::1]", "10.10.0.7:", "bmc..example"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, v string, withNetworks bool) {
		var nets []string
		if withNetworks {
			nets = []string{"10.10.0.0/16", "fd00::/8"}
		}
		if enrollment.CheckAddressOverride(v, nets) != nil {
			return
		}
		u, err := url.Parse("https://" + v)
		if err != nil || u.Host != v || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("accepted %q: https://%s is %+v (%v)", v, v, u, err)
		}
		if withNetworks {
			ip, perr := netip.ParseAddr(u.Hostname())
			if perr != nil || !(netip.MustParsePrefix("10.10.0.0/16").Contains(ip) || netip.MustParsePrefix("fd00::/8").Contains(ip)) {
				t.Fatalf("accepted %q outside the BMC networks", v)
			}
		}
	})
}
