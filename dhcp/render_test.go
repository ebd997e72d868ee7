package dhcp_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/dhcp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenEntries are the inputs of the golden files in testdata/golden; the
// integration test feeds every golden file to the real dhcpd -t and
// kea-dhcp4 -t.
var goldenEntries = []struct {
	name  string
	entry dhcp.Entry
}{
	{"basic", dhcp.Entry{Hostname: "gpu-node-01", MAC: "0a:1b:2c:3d:4e:5f", IP: "10.10.0.3"}},
	{"fqdn", dhcp.Entry{Hostname: "r07-u12.lab1.example.net", MAC: "b8:ce:f6:00:12:34", IP: "192.0.2.77"}},
	{"uppercase_mac", dhcp.Entry{Hostname: "XCC-7D2V-J30012AB", MAC: "08:94:EF:AA:BB:0C", IP: "172.16.4.10"}},
	{"dashed_mac_underscore_name", dhcp.Entry{Hostname: "cpu_bm_0042", MAC: "3c-ec-ef-01-02-03", IP: "10.255.254.253"}},
	{"dotted_mac_digit_name", dhcp.Entry{Hostname: "1u-node-7", MAC: "0025.90ab.cdef", IP: "100.64.0.1"}},
}

func TestRenderGolden(t *testing.T) {
	for _, f := range []dhcp.Flavour{dhcp.ISC, dhcp.Kea} {
		for _, g := range goldenEntries {
			t.Run(string(f)+"/"+g.name, func(t *testing.T) {
				got, file, err := dhcp.Render(f, "/etc/dhcp/hostforge.d", g.entry)
				if err != nil {
					t.Fatal(err)
				}
				if want := "/etc/dhcp/hostforge.d/" + g.entry.Hostname + f.Extension(); file != want {
					t.Fatalf("path %s, want %s", file, want)
				}
				// Deterministic: a second rendering is byte-identical.
				again, _, _ := dhcp.Render(f, "/etc/dhcp/hostforge.d", g.entry)
				if !bytes.Equal(got, again) {
					t.Fatalf("two renderings differ")
				}
				golden := filepath.Join("testdata", "golden", string(f), g.name+f.Extension())
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./dhcp -run TestRenderGolden -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("rendering differs from %s:\n--- got\n%s--- want\n%s", golden, got, want)
				}
			})
		}
	}
}

func TestRenderNormalisesMAC(t *testing.T) {
	var outs [][]byte
	for _, mac := range []string{"0A:1B:2C:3D:4E:5F", "0a-1b-2c-3d-4e-5f", "0a1b.2c3d.4e5f", "0a:1b:2c:3d:4e:5f"} {
		b, err := dhcp.RenderKea(dhcp.Entry{Hostname: "n", MAC: mac, IP: "10.0.0.1"})
		if err != nil {
			t.Fatalf("%s: %v", mac, err)
		}
		outs = append(outs, b)
	}
	for _, b := range outs[1:] {
		if !bytes.Equal(b, outs[0]) {
			t.Fatalf("MAC spellings render differently:\n%s\n%s", outs[0], b)
		}
	}
	if !bytes.Contains(outs[0], []byte(`"0a:1b:2c:3d:4e:5f"`)) {
		t.Fatalf("MAC not normalised to lower-case colons:\n%s", outs[0])
	}
}

// malformedEntries must be refused, naming the field, by validation and
// by both renderers.
var malformedEntries = []struct {
	name  string
	entry dhcp.Entry
	field string
}{
	{"empty hostname", dhcp.Entry{Hostname: "", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname with space", dhcp.Entry{Hostname: "node 01", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname with double quote", dhcp.Entry{Hostname: `node"01`, MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname with single quote", dhcp.Entry{Hostname: "node'01", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname injecting ISC syntax", dhcp.Entry{Hostname: "x { } host evil { hardware ethernet 0a:00:00:00:00:09; fixed-address 10.0.0.9; }", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname injecting a statement", dhcp.Entry{Hostname: "x;option", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname injecting JSON", dhcp.Entry{Hostname: `x","ip-address":"10.0.0.9`, MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname with newline", dhcp.Entry{Hostname: "node\n}", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname path traversal", dhcp.Entry{Hostname: "../../etc/passwd", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname slash", dhcp.Entry{Hostname: "a/b", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname leading dash", dhcp.Entry{Hostname: "-node", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname empty label", dhcp.Entry{Hostname: "a..b", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"hostname label too long", dhcp.Entry{Hostname: strings.Repeat("a", 64), MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}, "hostname"},
	{"mac not a mac", dhcp.Entry{Hostname: "n", MAC: "not-a-mac", IP: "10.0.0.1"}, "mac"},
	{"mac empty", dhcp.Entry{Hostname: "n", MAC: "", IP: "10.0.0.1"}, "mac"},
	{"mac with trailing syntax", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01; deny booting", IP: "10.0.0.1"}, "mac"},
	{"mac too long (EUI-64)", dhcp.Entry{Hostname: "n", MAC: "02:00:5e:10:00:00:00:01", IP: "10.0.0.1"}, "mac"},
	{"mac multicast", dhcp.Entry{Hostname: "n", MAC: "01:00:5e:00:00:01", IP: "10.0.0.1"}, "mac"},
	{"ip empty", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01", IP: ""}, "ip"},
	{"ip v6", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01", IP: "2001:db8::1"}, "ip"},
	{"ip v4-mapped v6", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01", IP: "::ffff:10.0.0.1"}, "ip"},
	{"ip with prefix", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1/24"}, "ip"},
	{"ip hostname", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01", IP: "bmc.example"}, "ip"},
	{"ip with syntax", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1; }"}, "ip"},
	{"ip unspecified", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01", IP: "0.0.0.0"}, "ip"},
	{"ip broadcast", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01", IP: "255.255.255.255"}, "ip"},
	{"ip leading zeros", dhcp.Entry{Hostname: "n", MAC: "0a:00:00:00:00:01", IP: "010.0.0.1"}, "ip"},
}

func TestMalformedEntriesAreRefused(t *testing.T) {
	for _, tt := range malformedEntries {
		t.Run(tt.name, func(t *testing.T) {
			for _, render := range []func(dhcp.Entry) ([]byte, error){dhcp.RenderISC, dhcp.RenderKea} {
				b, err := render(tt.entry)
				var fe *dhcp.FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("rendered %q, err %v; want a FieldError", b, err)
				}
				if fe.Field != tt.field {
					t.Fatalf("FieldError names %q, want %q (%v)", fe.Field, tt.field, err)
				}
			}
		})
	}
}

func TestConfigResolved(t *testing.T) {
	tests := []struct {
		name    string
		in      dhcp.Config
		want    dhcp.Config
		wantErr string
	}{
		{"zero is isc defaults", dhcp.Config{}, dhcp.Defaults(dhcp.ISC), ""},
		{"kea defaults", dhcp.Config{Flavour: dhcp.Kea}, dhcp.Defaults(dhcp.Kea), ""},
		{"overrides kept", dhcp.Config{Flavour: dhcp.Kea, Dir: "/srv/kea", Restart: "sudo systemctl restart kea-dhcp4-server"},
			dhcp.Config{Flavour: dhcp.Kea, Dir: "/srv/kea", ConfigTest: dhcp.Defaults(dhcp.Kea).ConfigTest, Restart: "sudo systemctl restart kea-dhcp4-server", Status: dhcp.Defaults(dhcp.Kea).Status, Lock: "/srv/kea"}, ""},
		{"lock kept", dhcp.Config{Lock: "/run/lock/hostforge-dhcp"}, func() dhcp.Config { c := dhcp.Defaults(dhcp.ISC); c.Lock = "/run/lock/hostforge-dhcp"; return c }(), ""},
		{"relative lock", dhcp.Config{Lock: "run/lock/x"}, dhcp.Config{}, "lock"},
		{"root lock", dhcp.Config{Lock: "/"}, dhcp.Config{}, "lock"},
		{"unknown flavour", dhcp.Config{Flavour: "dnsmasq"}, dhcp.Config{}, "flavour"},
		{"relative dir", dhcp.Config{Dir: "etc/dhcp"}, dhcp.Config{}, "dir"},
		{"root dir", dhcp.Config{Dir: "/"}, dhcp.Config{}, "dir"},
		{"unclean dir", dhcp.Config{Dir: "/etc/dhcp/../kea"}, dhcp.Config{}, "dir"},
		{"multi-line command", dhcp.Config{Restart: "true\nrm -rf /"}, dhcp.Config{}, "restart"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Resolved()
			if tt.wantErr != "" {
				var fe *dhcp.FieldError
				if !errors.As(err, &fe) || fe.Field != tt.wantErr {
					t.Fatalf("err %v, want a FieldError on %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/etc/dhcp":     `'/etc/dhcp'`,
		"it's":          `'it'\''s'`,
		"a b; rm -rf /": `'a b; rm -rf /'`,
		"":              `''`,
		`$(x) "y" \z`:   `'$(x) "y" \z'`,
	} {
		if got := dhcp.ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
