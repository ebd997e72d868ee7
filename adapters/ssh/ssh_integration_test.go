//go:build integration

package ssh_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/ssh/sshtest"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/dhcp/dhcptest"
	"github.com/hostforge/hostforge/internal/itenv"
)

// realSSHD is the OpenSSH sshd that scripts/integration.d/sshd.sh starts.
type realSSHD struct {
	addr, user, dir string
	key, knownHosts string
	dhcpd, keaDHCP4 string
}

func needSSHD(t *testing.T) realSSHD {
	t.Helper()
	env := func(k string) string { return os.Getenv(k) }
	r := realSSHD{addr: itenv.Var(t, "HOSTFORGE_SSHD_ADDR", "scripts/integration.d/sshd.sh did not start sshd"), user: env("HOSTFORGE_SSHD_USER"), dir: env("HOSTFORGE_SSHD_DIR"),
		dhcpd: env("HOSTFORGE_DHCPD"), keaDHCP4: env("HOSTFORGE_KEA_DHCP4")}
	for _, f := range []struct {
		dst *string
		env string
	}{{&r.key, "HOSTFORGE_SSHD_KEY"}, {&r.knownHosts, "HOSTFORGE_SSHD_KNOWN_HOSTS"}} {
		b, err := os.ReadFile(env(f.env))
		if err != nil {
			t.Fatalf("%s: %v", f.env, err)
		}
		*f.dst = string(b)
	}
	return r
}

func (r realSSHD) vault() memVault {
	return memVault{ssh.VaultItem: {ssh.FieldPrivateKey: r.key, ssh.FieldKnownHosts: r.knownHosts, ssh.FieldUser: r.user}}
}

func (r realSSHD) dialer(t *testing.T) *ssh.Dialer {
	t.Helper()
	d, err := ssh.New(ssh.Config{Addr: r.addr, Vault: r.vault()})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// scratch makes a fresh directory on the server with mktemp.
func scratch(t *testing.T, rem dhcp.Remote, parent string) string {
	t.Helper()
	out, err := rem.Run(context.Background(), "mktemp -d -p "+dhcp.ShellQuote(parent))
	if err != nil || out.Exit != 0 {
		t.Fatalf("mktemp: %v %q", err, out.Output)
	}
	return strings.TrimSpace(string(out.Output))
}

func TestIntegrationContractRealSSHD(t *testing.T) {
	r := needSSHD(t)
	d := r.dialer(t)
	dhcptest.Run(t, func(t *testing.T) dhcptest.Target {
		rem, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return dhcptest.Target{Remote: rem, Dir: scratch(t, rem, r.dir), Dialer: d, Service: dhcptest.ShellService(t, rem, scratch(t, rem, r.dir))}
	})
}

func TestIntegrationRealSSHDRefusesUnknownHostKeys(t *testing.T) {
	r := needSSHD(t)
	other := sshtest.NewKey(t)
	for name, kh := range map[string]string{
		"changed": fmt.Sprintf("[%s]:%s %s", strings.Split(r.addr, ":")[0], strings.Split(r.addr, ":")[1], strings.TrimSpace(string(other.AuthorizedKey()))),
		"missing": "[192.0.2.1]:22 " + strings.TrimSpace(string(other.AuthorizedKey())),
	} {
		t.Run(name, func(t *testing.T) {
			v := r.vault()
			v[ssh.VaultItem][ssh.FieldKnownHosts] = kh + "\n"
			d, err := ssh.New(ssh.Config{Addr: r.addr, Vault: v})
			if err != nil {
				t.Fatal(err)
			}
			p := dhcp.New(d, dhcp.Config{Dir: "/nonexistent"}, nil)
			_, err = p.Configure(context.Background(), dhcp.Entry{Hostname: "n1", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"})
			if !dhcp.HostKeyRejected.Is(err) {
				t.Fatalf("%v, want DHCP_SSH_HOST_KEY_REJECTED", err)
			}
		})
	}
}

// goldenFiles lists dhcp/testdata/golden/<flavour>/*.
func goldenFiles(t *testing.T, f dhcp.Flavour) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "dhcp", "testdata", "golden", string(f), "*"+f.Extension()))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files for %s (%v)", f, err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

func iscConf(includes ...string) string {
	var b strings.Builder
	b.WriteString("# hostforge integration: the main config includes the host files.\nauthoritative;\n")
	for _, p := range includes {
		fmt.Fprintf(&b, "include %q;\n", p)
	}
	return b.String()
}

func keaConf(includes ...string) string {
	var parts []string
	for _, p := range includes {
		parts = append(parts, fmt.Sprintf("<?include %q?>", p))
	}
	return `{"Dhcp4": {
  "interfaces-config": {"interfaces": []},
  "lease-database": {"type": "memfile", "persist": false},
  "reservations": [` + strings.Join(parts, ",\n    ") + `]
}}
`
}

// TestIntegrationGoldenFilesAcceptedByRealServers uploads every golden file
// through the real sshd and runs the real config checkers over them: each
// file alone, all together, and a malformed control that must be refused.
func TestIntegrationGoldenFilesAcceptedByRealServers(t *testing.T) {
	r := needSSHD(t)
	ctx := context.Background()
	rem, err := r.dialer(t).Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Close()
	for _, fl := range []struct {
		flavour dhcp.Flavour
		conf    func(...string) string
		check   func(conf string) string
		bad     string
	}{
		{dhcp.ISC, iscConf, func(c string) string { return r.dhcpd + " -t -q -cf " + dhcp.ShellQuote(c) }, "host broken {\n  hardware ethernet zz;\n}\n"},
		{dhcp.Kea, keaConf, func(c string) string { return r.keaDHCP4 + " -t " + dhcp.ShellQuote(c) }, "{\"hw-address\": \"nope\", \"ip-address\": \"10.0.0.1\"}\n"},
	} {
		t.Run(string(fl.flavour), func(t *testing.T) {
			dir := scratch(t, rem, r.dir)
			files := goldenFiles(t, fl.flavour)
			names := make([]string, 0, len(files))
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			var all []string
			check := func(label string, wantOK bool, includes ...string) {
				t.Helper()
				conf := path.Join(dir, "main-"+label+".conf")
				if err := rem.Upload(ctx, conf, []byte(fl.conf(includes...))); err != nil {
					t.Fatal(err)
				}
				out, err := rem.Run(ctx, fl.check(conf))
				if err != nil {
					t.Fatal(err)
				}
				if (out.Exit == 0) != wantOK {
					t.Fatalf("%s: %s exited %d, want ok=%v:\n%s", label, fl.check(conf), out.Exit, wantOK, out.Output)
				}
				t.Logf("%s: %s: exit %d", label, fl.check(conf), out.Exit)
			}
			for _, n := range names {
				p := path.Join(dir, n)
				if err := rem.Upload(ctx, p, files[n]); err != nil {
					t.Fatal(err)
				}
				all = append(all, p)
				check(strings.TrimSuffix(n, fl.flavour.Extension()), true, p)
			}
			check("all", true, all...)
			bad := path.Join(dir, "broken"+fl.flavour.Extension())
			if err := rem.Upload(ctx, bad, []byte(fl.bad)); err != nil {
				t.Fatal(err)
			}
			check("malformed-control", false, append(all, bad)...)
		})
	}
}

// TestIntegrationPhaseWithRealKeaCheck runs the phase through the real sshd
// with the real kea-dhcp4 -t as its config test: changed, then skipped.
func TestIntegrationPhaseWithRealKeaCheck(t *testing.T) {
	r := needSSHD(t)
	ctx := context.Background()
	rem, err := r.dialer(t).Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := scratch(t, rem, r.dir)
	e := dhcp.Entry{Hostname: "gpu-node-07", MAC: "0a:1b:2c:3d:4e:07", IP: "10.10.0.7"}
	hostDir := path.Join(base, "hostforge.d")
	conf := path.Join(base, "kea-dhcp4.conf")
	if err := rem.Upload(ctx, conf, []byte(keaConf(path.Join(hostDir, e.Hostname+".json")))); err != nil {
		t.Fatal(err)
	}
	restarts := path.Join(base, "restarts")
	rem.Close()
	cfg := dhcp.Config{
		Flavour:    dhcp.Kea,
		Dir:        hostDir,
		ConfigTest: r.keaDHCP4 + " -t " + dhcp.ShellQuote(conf),
		Restart:    "echo restart >> " + dhcp.ShellQuote(restarts),
		Status:     "test -s " + dhcp.ShellQuote(restarts),
	}
	p := dhcp.New(r.dialer(t), cfg, nil)
	res, err := p.Configure(ctx, e)
	if err != nil || !res.Changed {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	res, err = p.Configure(ctx, e)
	if err != nil || res.Changed {
		t.Fatalf("second run: %+v, %v; want a skip", res, err)
	}
}
