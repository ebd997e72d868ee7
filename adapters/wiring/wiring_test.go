package wiring_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/verify"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeIronicRoot answers Ironic's API root (the microversion negotiation
// Open does) with the given maximum version; every other path is 404.
func fakeIronicRoot(t *testing.T, version string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimSuffix(r.URL.Path, "/") != "/v1" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id": "v1", "version": {"version": "` + version + `", "min_version": "1.1", "status": "CURRENT"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// rig is a lab whose Ironic is a fake API root: enough for Open.
type rig struct {
	lab *lab.Lab
	cfg string // lab.yaml's text
}

func newRig(t *testing.T, ironicURL string) *rig {
	t.Helper()
	l, err := lab.Start(context.Background(), lab.Options{Dir: filepath.Join(t.TempDir(), "lab"), IronicURL: ironicURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	b, err := os.ReadFile(l.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{lab: l, cfg: string(b)}
}

// open parses doc (lab.yaml, edited) and opens it.
func (r *rig) open(t *testing.T, ctx context.Context, doc string, o wiring.Options) (*wiring.Systems, error) {
	t.Helper()
	cfg, err := wiring.Parse("lab.yaml", []byte(doc))
	if err != nil {
		return nil, err
	}
	sys, err := wiring.Open(ctx, cfg, o)
	if err == nil {
		t.Cleanup(func() { _ = sys.Close() })
	}
	return sys, err
}

// Every phase is wired for real: the Ironic phases of each instance carry
// the Redfish link reader (the BMC phase's connector, the vault), the
// inspection verifier and the instance's timing from the config.
func TestOpenWiresEveryPhaseAndTheLinkGuard(t *testing.T) {
	r := newRig(t, fakeIronicRoot(t, "1.82"))
	sys, err := r.open(t, context.Background(), r.cfg, wiring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exec := sys.Enrollment
	if exec.NetBox == nil || exec.Vault == nil || exec.DHCP == nil || exec.BMC == nil || len(exec.Ironic) != 1 {
		t.Fatalf("executor %+v: want NetBox, vault, DHCP, BMC and the lab's Ironic instance", exec)
	}
	// The lab's ledger: section is the fleet manager, the proof store and
	// the projection's ledger, projected from every Ironic instance.
	if sys.Ledger == nil || sys.FleetManager != sys.Ledger || sys.Proofs != sys.Ledger || exec.FleetManager != sys.Ledger {
		t.Errorf("ledger %v, fleet manager %v, proofs %v, executor's fleet manager %v: want the ledger everywhere", sys.Ledger, sys.FleetManager, sys.Proofs, exec.FleetManager)
	}
	if p := sys.Projector; p == nil || len(p.Instances) != 1 || p.Instances[lab.IronicInstance] == nil || p.Ledger != sys.Ledger {
		t.Errorf("projector %+v: want the lab's Ironic instance into the ledger", p)
	}
	want := lab.FastTiming().Phases()
	for name, ph := range exec.Ironic {
		p, ok := ph.(*ironic.Phases)
		if !ok {
			t.Fatalf("%s: %T, want *ironic.Phases", name, ph)
		}
		links, ok := p.Links.(*bmc.LinkReader)
		if !ok || links.Connector != sys.BMCConnector || links.Vault != sys.Vault || p.NoLinkGuard {
			t.Errorf("%s: link guard %#v (NoLinkGuard %v): want the Redfish reader on the BMC connector and the vault", name, p.Links, p.NoLinkGuard)
		}
		if _, ok := p.Verifier.(verify.Verifier); !ok {
			t.Errorf("%s: verifier %T", name, p.Verifier)
		}
		if p.Timing != want {
			t.Errorf("%s: timing %+v, want the config's %+v", name, p.Timing, want)
		}
		if vc, ok := p.Credentials.(ironic.VaultCredentials); !ok || vc.Vault != sys.Vault {
			t.Errorf("%s: credentials %#v", name, p.Credentials)
		}
	}
	// Opening touched no system: NetBox and the BMCs are contacted per call.
	if calls := r.lab.Site.Calls(); calls[fakes.SysNetBox].Reads+calls[fakes.SysNetBox].Writes != 0 {
		t.Errorf("Open called NetBox: %v", calls)
	}
	for h, b := range r.lab.BMCs {
		for _, req := range b.Emulator.Requests() {
			if req.Method != http.MethodPatch || !strings.Contains(req.Path, "/EthernetInterfaces/") && !strings.Contains(req.Path, "/Accounts/") {
				t.Errorf("Open reached the BMC of %s: %+v", h, req)
			}
		}
	}
}

// The link reader the Ironic phases hold reads the host's BMC through
// bmc.endpoints with verified TLS and the per-host admin credential.
func TestOpenLinkReaderReadsTheBMC(t *testing.T) {
	r := newRig(t, fakeIronicRoot(t, "1.82"))
	ctx := context.Background()
	sys, err := r.open(t, ctx, r.cfg, wiring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	factory, err := sys.Vault.Item(ctx, enrollment.DefaultFactoryItem)
	if err != nil {
		t.Fatal(err)
	}
	host := "bad-optics-u32"
	if err := sys.Vault.PutItem(ctx, enrollment.AdminItem(host), factory); err != nil {
		t.Fatal(err)
	}
	h, _ := r.lab.Site.Host(host)
	p := sys.Enrollment.Ironic[labIronic].(*ironic.Phases)
	states, err := p.Links.FrontendLinks(ctx, h.OOBIP, enrollment.AdminItem(host), []string{h.NICs[0].MAC, h.NICs[1].MAC})
	if err != nil || len(states) != 2 {
		t.Fatalf("links of %s: %v, %v", host, states, err)
	}
	for m, st := range states {
		if st != "DOWN" {
			t.Errorf("%s %s: %s, want DOWN (dead optics)", host, m, st)
		}
	}
}

const labIronic = lab.IronicInstance

func TestOpenRefusals(t *testing.T) {
	ironicURL := fakeIronicRoot(t, "1.82")
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return "http://" + addr
	}()
	r := newRig(t, ironicURL)
	dir := t.TempDir()
	exposed := filepath.Join(dir, "exposed")
	if err := os.WriteFile(exposed, []byte("tok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyVault := filepath.Join(dir, "vault.yaml")
	if err := os.WriteFile(emptyVault, []byte("bmc-factory: {username: admin, password: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vaultPath := filepath.Join(r.lab.Dir, lab.VaultFile)
	tokenPath := filepath.Join(r.lab.Dir, lab.TokenFile)
	for _, tc := range []struct {
		name       string
		edit       func(string) string
		code, want string
	}{
		{"token file others can read", func(s string) string { return strings.Replace(s, tokenPath, exposed, 1) },
			wiring.ConfigInvalid.Code, "netbox.token_file: " + exposed + " is readable by group or others"},
		{"token from an unset variable", func(s string) string {
			return strings.Replace(s, "  token_file: '"+tokenPath+"'\n", "  token_env: LAB_NO_SUCH_VARIABLE\n", 1)
		}, wiring.ConfigInvalid.Code, "netbox.token_env: the environment variable LAB_NO_SUCH_VARIABLE is unset"},
		{"missing BMC CA", func(s string) string {
			return strings.Replace(s, "bmc:\n  ca_file: '"+filepath.Join(r.lab.Dir, lab.CAFile)+"'", "bmc:\n  ca_file: '/nonexistent/ca.pem'", 1)
		}, wiring.ConfigInvalid.Code, "bmc.ca_file"},
		{"vault without the DHCP key", func(s string) string { return strings.Replace(s, vaultPath, emptyVault, 1) },
			ssh.CredentialsInvalid.Code, "has no item ssh-config-dhcp"},
		{"Ironic not answering", func(s string) string { return strings.ReplaceAll(s, ironicURL, closed) },
			ironic.Unavailable.Code, "ironic[0] (" + lab.IronicInstance + ", " + closed + ")"},
		{"Ironic too old", func(s string) string { return strings.ReplaceAll(s, ironicURL, fakeIronicRoot(t, "1.46")) },
			wiring.ConfigInvalid.Code, "hostforge needs at least"},
		{"platform-class gate without a ledger", func(s string) string { return s[:strings.Index(s, "ledger:\n")] },
			wiring.ConfigInvalid.Code, "gates.platform_class_activity_ready: is on, but it needs the fleet manager's ledger"},
		{"ledger DSN file others can read", func(s string) string {
			return s[:strings.Index(s, "ledger:\n")] + "ledger:\n  driver: postgres\n  dsn_file: " + exposed + "\n"
		}, wiring.ConfigInvalid.Code, "ledger.dsn_file: " + exposed + " has mode 0644"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.edit(r.cfg)
			if doc == r.cfg {
				t.Fatal("the edit does not apply")
			}
			before := r.lab.Site.Calls()
			_, err := r.open(t, context.Background(), doc, wiring.Options{Getenv: func(string) string { return "" }})
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v\nwant %s containing %q", err, tc.code, tc.want)
			}
			if d := r.lab.Site.Calls().Sub(before); d.Writes() != 0 {
				t.Errorf("a refused Open wrote: %v", d)
			}
		})
	}
}

// A submitter needs NetBox and the site's gates, not the phases: it opens
// neither the vault nor any Ironic.
func TestOpenSubmitOnly(t *testing.T) {
	r := newRig(t, "http://127.0.0.1:1")
	if err := os.Chmod(filepath.Join(r.lab.Dir, lab.VaultFile), 0o644); err != nil {
		t.Fatal(err)
	}
	sys, err := r.open(t, context.Background(), r.cfg, wiring.Options{SubmitOnly: true})
	if err != nil {
		t.Fatalf("a submitter refused what only the phases need: %v", err)
	}
	if sys.NetBox == nil || sys.Enrollment != nil || sys.Vault != nil || !sys.SiteConfig.IronicEnrol || sys.Site != "lab1" {
		t.Fatalf("submit-only systems %+v", sys)
	}
	if sys.Proofs == nil || sys.Proofs != sys.Ledger {
		t.Fatalf("a submitter snapshots identities from the ledger: proofs %v", sys.Proofs)
	}
	// The full wiring refuses the exposed vault.
	_, err = r.open(t, context.Background(), r.cfg, wiring.Options{})
	if !wiring.ConfigInvalid.Is(err) || !strings.Contains(err.Error(), "vault.path") {
		t.Fatalf("full Open with an exposed vault: %v", err)
	}
}

// Open gives up when its context ends, even while an Ironic hangs.
func TestOpenHonoursContext(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hang)
	r := newRig(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.open(t, ctx, r.cfg, wiring.Options{})
	if !hostforge.Cancelled.Is(err) || time.Since(start) > 5*time.Second {
		t.Fatalf("Open under a 200ms context: %v after %s, want CANCELLED at once", err, time.Since(start))
	}
}

// EndpointConnector dials the mapped endpoint, and other addresses as
// they are.
func TestEndpointConnector(t *testing.T) {
	var got []string
	rec := connectorFunc(func(_ context.Context, addr string, _ bmc.Credential) (bmc.Client, error) {
		got = append(got, addr)
		return nil, nil
	})
	c := &wiring.EndpointConnector{Connector: rec, Endpoints: map[string]string{"10.10.0.3": "127.0.0.1:40443"}}
	for _, a := range []string{"10.10.0.3", "10.10.0.4"} {
		if _, err := c.Connect(context.Background(), a, bmc.Credential{}); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, ",") != "127.0.0.1:40443,10.10.0.4" {
		t.Fatalf("dialled %v", got)
	}
}

type connectorFunc func(context.Context, string, bmc.Credential) (bmc.Client, error)

func (f connectorFunc) Connect(ctx context.Context, a string, c bmc.Credential) (bmc.Client, error) {
	return f(ctx, a, c)
}
