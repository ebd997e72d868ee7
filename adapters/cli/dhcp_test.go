package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/ssh/sshtest"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
)

// dhcpRig is a NetBox emulator over the demo rack, an in-process SSH+SFTP
// server standing in for the DHCP server, and a vault file holding the SSH
// key and known_hosts in the item the DHCP adapter reads.
type dhcpRig struct {
	site  *fakes.Site
	srv   *sshtest.Server
	dir   string // the test's scratch directory
	hosts string // the DHCP-owned directory on the "server"
	log   string // one line per restart
	vault string
	token string
	nbURL string
}

func newDHCPRig(t *testing.T) *dhcpRig {
	t.Helper()
	r := &dhcpRig{site: newDemoSite(), dir: t.TempDir()}
	nb := httptest.NewServer(netboxhttp.New(r.site.NetBox, netboxhttp.Options{Token: "tok-lab1"}))
	t.Cleanup(nb.Close)
	client := sshtest.NewKey(t)
	r.srv = sshtest.Start(t, client.PublicKey())
	r.hosts = filepath.Join(r.dir, "server", "hostforge.d")
	r.log = filepath.Join(r.dir, "server", "restarts")
	r.writeVault(t, map[string]map[string]string{ssh.VaultItem: r.srv.VaultItem(client, "deploy")})
	r.token = writeFile(t, r.dir, "token", "tok-lab1\n", 0o600)
	r.nbURL = nb.URL
	return r
}

func (r *dhcpRig) writeVault(t *testing.T, items map[string]map[string]string) {
	t.Helper()
	b, err := yaml.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	r.vault = writeFile(t, r.dir, "vault.yaml", string(b), 0o600)
}

// config is a config file with only the DHCP gate on; extra lines are
// appended to the dhcp section.
func (r *dhcpRig) config(t *testing.T, extra ...string) string {
	t.Helper()
	doc := `site: lab1
netbox:
  url: ` + r.nbURL + `
  token_file: ` + r.token + `
ironic:
  - name: ironic-cpu
    url: https://ironic-cpu.example.net:6385
    device_classes: [CPU_BAREMETAL, HYPERVISOR]
gates:
  enrollment_configure_dhcp: true
dhcp:
  host: ` + r.srv.Addr + `
  dir: ` + r.hosts + `
  restart: echo restart >> ` + dhcp.ShellQuote(r.log) + `
  status: test -f ` + dhcp.ShellQuote(r.log) + `
`
	for _, l := range extra {
		doc += "  " + l + "\n"
	}
	doc += "vault:\n  kind: file\n  path: " + r.vault + "\n"
	return writeFile(t, r.dir, "lab1.yaml", doc, 0o644)
}

// wantFile is the reservation the DHCP server must hold for device.
func (r *dhcpRig) wantFile(t *testing.T, flavour dhcp.Flavour, device string) (string, []byte) {
	t.Helper()
	d, err := r.site.NetBox.Device(context.Background(), device)
	if err != nil {
		t.Fatal(err)
	}
	e := dhcp.Entry{Hostname: d.Name, IP: d.OOBIP}
	for _, i := range d.Interfaces {
		if i.MgmtOnly && i.MAC != "" {
			e.MAC = i.MAC
			break
		}
	}
	data, file, err := dhcp.Render(flavour, r.hosts, e)
	if err != nil {
		t.Fatalf("rendering the expected reservation for %s: %v", device, err)
	}
	return file, data
}

func (r *dhcpRig) restarts(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(r.log)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "restart\n")
}

// phaseStatus is the status enroll -o json recorded for a phase.
func phaseStatus(t *testing.T, line, phase string) string {
	t.Helper()
	var res enrollJSON
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatalf("-o json line %q: %v", line, err)
	}
	for _, p := range res.Phases {
		if p.Phase == phase {
			return p.Status
		}
	}
	return ""
}

func TestEnrollConfigDHCPOverSSH(t *testing.T) {
	for _, tc := range []struct {
		flavour dhcp.Flavour
		extra   []string
	}{
		{dhcp.ISC, nil},
		{dhcp.Kea, []string{"flavour: kea"}},
	} {
		t.Run(string(tc.flavour), func(t *testing.T) {
			r := newDHCPRig(t)
			file, want := r.wantFile(t, tc.flavour, "cpu-r1-u10")
			// The config test proves the file is in place before the restart.
			cfg := r.config(t, append(tc.extra, "config_test: test -s "+dhcp.ShellQuote(file))...)

			res := run(t, "", nil, "enroll", "--config", cfg, "--log-level", "off", "-o", "json", "cpu-r1-u10")
			wantCode(t, res, ExitOK)
			if got := phaseStatus(t, strings.TrimSpace(res.out), "configure_dhcp"); got != "done" {
				t.Fatalf("configure_dhcp %q, want done:\n%s", got, res.out)
			}
			got, err := os.ReadFile(file)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("the DHCP server holds %q (%v), want %q", got, err, want)
			}
			if st, _ := os.Stat(file); st.Mode().Perm() != 0o644 {
				t.Errorf("%s has mode %v, want 0644", file, st.Mode().Perm())
			}
			if n := r.restarts(t); n != 1 {
				t.Errorf("%d restarts, want 1", n)
			}
			entries, _ := os.ReadDir(r.hosts)
			if len(entries) != 1 {
				t.Errorf("the host directory holds %d entries, want only %s", len(entries), filepath.Base(file))
			}

			// A rerun finds the same content: no upload, no restart.
			res = run(t, "", nil, "enroll", "--config", cfg, "--log-level", "off", "-o", "json", "cpu-r1-u10")
			wantCode(t, res, ExitOK)
			if n := r.restarts(t); n != 1 {
				t.Errorf("after the rerun: %d restarts, want still 1", n)
			}
		})
	}
}

func TestEnrollConfigDHCPFailures(t *testing.T) {
	t.Run("host key not in known_hosts", func(t *testing.T) {
		r := newDHCPRig(t)
		stranger := sshtest.NewKey(t)
		items := map[string]map[string]string{ssh.VaultItem: r.srv.VaultItem(stranger, "deploy")}
		items[ssh.VaultItem][ssh.FieldKnownHosts] = r.srv.KnownHosts(stranger.PublicKey())
		r.writeVault(t, items)
		res := run(t, "", nil, "enroll", "--config", r.config(t), "--log-level", "off", "cpu-r1-u10")
		wantCode(t, res, ExitInfra)
		if !strings.Contains(res.out, "DHCP_SSH_HOST_KEY_REJECTED") {
			t.Errorf("a changed host key is not reported as DHCP_SSH_HOST_KEY_REJECTED:\n%s", res.out)
		}
		if strings.Contains(res.out+res.err, "PRIVATE KEY") {
			t.Errorf("key material leaked:\n%s%s", res.out, res.err)
		}
		if _, err := os.Stat(r.hosts); !os.IsNotExist(err) {
			t.Errorf("something was written to the server after a host-key failure: %v", err)
		}
	})
	t.Run("vault has no ssh item", func(t *testing.T) {
		r := newDHCPRig(t)
		r.writeVault(t, map[string]map[string]string{"ipmi-exporter": {"username": "ipmi", "password": "s3cret"}})
		res := run(t, "", nil, "enroll", "--config", r.config(t), "--log-level", "off", "cpu-r1-u10")
		wantCode(t, res, ExitInfra)
		wantError(t, res, "DHCP_SSH_CREDENTIALS_INVALID", ssh.VaultItem)
	})
	t.Run("vault item without known_hosts", func(t *testing.T) {
		r := newDHCPRig(t)
		r.writeVault(t, map[string]map[string]string{ssh.VaultItem: {ssh.FieldPrivateKey: sshtest.NewKey(t).PEM, ssh.FieldUser: "deploy"}})
		res := run(t, "", nil, "enroll", "--config", r.config(t), "--log-level", "off", "cpu-r1-u10")
		wantCode(t, res, ExitInfra)
		wantError(t, res, "DHCP_SSH_CREDENTIALS_INVALID", ssh.FieldKnownHosts)
		if strings.Contains(res.err, "PRIVATE KEY") {
			t.Errorf("key material leaked:\n%s", res.err)
		}
	})
	t.Run("no login user anywhere", func(t *testing.T) {
		r := newDHCPRig(t)
		item := r.srv.VaultItem(sshtest.NewKey(t), "")
		delete(item, ssh.FieldUser)
		r.writeVault(t, map[string]map[string]string{ssh.VaultItem: item})
		res := run(t, "", nil, "enroll", "--config", r.config(t), "--log-level", "off", "cpu-r1-u10")
		wantCode(t, res, ExitUsage)
		wantError(t, res, "CONFIG_INVALID", "line 11: dhcp.user: missing")
	})
}

func TestParseConfigDHCPSection(t *testing.T) {
	base := `site: lab1
netbox:
  url: https://netbox.example.net
gates:
  enrollment_configure_dhcp: true
dhcp:
  host: dhcp1.example.net
vault:
  kind: file
  path: /etc/hostforge/vault.yaml
`
	c, err := wiring.Parse("lab1.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if addr, err := c.DHCP.Addr(); err != nil || addr != "dhcp1.example.net:22" {
		t.Errorf("Addr() = %q, %v; want port 22 added", addr, err)
	}
	if got, err := c.DHCP.Server().Resolved(); err != nil || got != dhcp.Defaults(dhcp.ISC) {
		t.Errorf("an empty section resolves to %+v (%v), want the ISC defaults", got, err)
	}

	for _, tc := range []struct {
		name, line, want string
	}{
		{"ipv6 with port", "host: '[2001:db8::1]:2222'", ""},
		{"bare ipv6", "host: '2001:db8::1'", ""},
		{"kea", "flavour: kea", ""},
		{"timeouts", "timeouts: {command: 10m, transfer: 300}", ""},
		{"bad flavour", "flavour: dnsmasq", `line 8: dhcp.flavour: "dnsmasq": want "isc" or "kea"`},
		{"relative dir", "dir: hosts.d", `line 8: dhcp.dir: "hosts.d": want a clean absolute directory path`},
		{"root dir", "dir: /", `line 8: dhcp.dir: "/": want a clean absolute`},
		{"multi-line restart", "restart: \"systemctl restart a\\nrm -rf /\"", "line 8: dhcp.restart: "},
		{"user in host", "host: deploy@dhcp1", "put the login user in dhcp.user"},
		{"bad port", "host: dhcp1:ssh", `the port "ssh" is not a number`},
		{"port out of range", "host: dhcp1:70000", `the port "70000"`},
		{"url as host", "host: ssh://dhcp1", "want host or host:port"},
		{"negative timeout", "timeouts: {login: -1s}", "line 8: dhcp.timeouts.login: negative duration"},
		{"bad timeout", "timeouts: {login: soon}", `line 8: dhcp.timeouts.login: invalid duration "soon"`},
		{"unknown key", "flavor: kea", "line 8: dhcp.flavor: unknown key (known here: config_test, dir, flavour, host, restart, status, timeouts, user)"},
		{"space in user", "user: 'de ploy'", `line 8: dhcp.user: "de ploy"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(base, "  host: dhcp1.example.net\n", "  host: dhcp1.example.net\n  "+tc.line+"\n", 1)
			if strings.HasPrefix(tc.line, "host:") {
				doc = strings.Replace(base, "  host: dhcp1.example.net\n", "  user: deploy\n  "+tc.line+"\n", 1)
			}
			_, err := wiring.Parse("lab1.yaml", []byte(doc))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%s: %v", tc.line, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: error %v, want it to contain %q", tc.line, err, tc.want)
			}
			if !strings.Contains(err.Error(), "lab1.yaml: line ") {
				t.Errorf("%q does not name the line", err)
			}
		})
	}

	// The section is checked even while its gate is off.
	off := strings.Replace(base, "enrollment_configure_dhcp: true", "enrollment_configure_dhcp: false", 1)
	off = strings.Replace(off, "host: dhcp1.example.net", "host: dhcp1.example.net\n  flavour: dnsmasq", 1)
	if _, err := wiring.Parse("lab1.yaml", []byte(off)); err == nil || !strings.Contains(err.Error(), "dhcp.flavour") {
		t.Errorf("a bad flavour with the gate off: %v, want an error naming dhcp.flavour", err)
	}
}
