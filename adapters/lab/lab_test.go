package lab_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/link"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startLab runs the demo rack's lab without Ironic and opens its config
// through the wiring every command uses.
func startLab(t *testing.T) (*lab.Lab, *wiring.Systems) {
	t.Helper()
	ctx := context.Background()
	l, err := lab.Start(ctx, lab.Options{Dir: filepath.Join(t.TempDir(), "lab")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	cfg, err := wiring.Load(l.Config)
	if err != nil {
		t.Fatalf("lab.yaml: %v", err)
	}
	sys, err := wiring.Open(ctx, cfg, wiring.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("wiring lab.yaml: %v", err)
	}
	t.Cleanup(func() { _ = sys.Close() })
	return l, sys
}

func TestLabFiles(t *testing.T) {
	l, sys := startLab(t)
	if len(l.Hosts) != len(enrolltest.DemoRack().HostNames()) || len(l.BMCs) != len(l.Hosts) {
		t.Fatalf("%d hosts, %d BMCs: want one BMC per demo host", len(l.Hosts), len(l.BMCs))
	}
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{lab.ConfigFile, 0o600}, {lab.VaultFile, 0o600}, {lab.TokenFile, 0o600}, {lab.CAFile, 0o644}, {lab.HostsFile, 0o644}} {
		st, err := os.Stat(filepath.Join(l.Dir, f.name))
		if err != nil || st.Mode().Perm() != f.mode {
			t.Errorf("%s: %v, %v; want mode %v", f.name, st.Mode(), err, f.mode)
		}
	}
	b, err := os.ReadFile(filepath.Join(l.Dir, lab.HostsFile))
	if err != nil || strings.Fields(string(b))[0] != l.Hosts[0] {
		t.Errorf("hosts file %q, %v", b, err)
	}
	// Without Ironic the enrol gate is off and nothing contacts an Ironic.
	if sys.SiteConfig.IronicEnrol || len(sys.Enrollment.Ironic) != 0 || !sys.SiteConfig.ConfigureBMC || !sys.SiteConfig.ConfigureDHCP {
		t.Errorf("site config %+v", sys.SiteConfig)
	}
	// The vault holds no per-host admin item but the Supermicro one: the BMC
	// phase creates the others by rotating away from the factory password.
	names, err := sys.Vault.Names(context.Background())
	if err != nil || strings.Join(names, ",") != "bmc-admin-cpu-r1-u11,bmc-factory,ipmi-exporter,ssh-config-dhcp" {
		t.Errorf("vault items %v, %v", names, err)
	}
	// lab.yaml names the fleet manager's ledger in the lab directory, with
	// the platform-class gate on: the ledger records what enrolments write.
	if sys.Ledger == nil || sys.FleetManager != sys.Ledger || sys.Proofs != sys.Ledger || !sys.PlatformClassReady {
		t.Fatalf("ledger %v, fleet manager %v, proofs %v, platform-class gate %v", sys.Ledger, sys.FleetManager, sys.Proofs, sys.PlatformClassReady)
	}
	ctx := context.Background()
	if err := sys.FleetManager.SetPlatformClass(ctx, "cpu-r1-u10", "NOGPU_DELLPOWEREDGER7615_NORDMA_01"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(l.Dir, lab.LedgerFile)); err != nil {
		t.Fatalf("the ledger is not in the lab directory: %v", err)
	}
	// A second lab in the same directory is refused while the first runs:
	// it would replace the running lab's files under it.
	var busy *lab.BusyError
	if _, err := lab.Start(ctx, lab.Options{Dir: l.Dir}); !errors.As(err, &busy) || busy.PID != os.Getpid() {
		t.Fatalf("a second lab beside a running one: %v, want a BusyError naming PID %d", err, os.Getpid())
	}
	if st := lab.Status(l.Dir); !st.Lab || !st.Running || st.PID != os.Getpid() {
		t.Errorf("status of a running lab: %+v", st)
	}
	// Once it stopped, a new lab replaces its files, and starts with an
	// empty ledger.
	l.Close()
	if st := lab.Status(l.Dir); !st.Lab || st.Running {
		t.Errorf("status of a stopped lab: %+v", st)
	}
	l2, err := lab.Start(ctx, lab.Options{Dir: l.Dir})
	if err != nil {
		t.Fatalf("a second lab in %s: %v", l.Dir, err)
	}
	l2.Close()
	cfg2, err := wiring.Load(l2.Config)
	if err != nil {
		t.Fatal(err)
	}
	ledger, db, err := wiring.OpenLedger(ctx, cfg2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if recs, err := ledger.Records(ctx); err != nil || len(recs) != 0 {
		t.Fatalf("the second lab's ledger holds %+v, %v; want it empty", recs, err)
	}
}

// The link guard's reader, as the wiring builds it for the Ironic phases,
// reads each host's links from its emulated BMC over verified TLS with the
// per-host admin credential: the host with dead optics reports every
// frontend link DOWN, a healthy one UP.
func TestLabBMCsReportLinksThroughTheWiring(t *testing.T) {
	l, sys := startLab(t)
	ctx := context.Background()
	factory, err := sys.Vault.Item(ctx, enrollment.DefaultFactoryItem)
	if err != nil {
		t.Fatal(err)
	}
	reader := &bmc.LinkReader{Connector: sys.BMCConnector, Vault: sys.Vault}
	for _, tc := range []struct {
		host string
		want link.State
	}{
		{"bad-optics-u32", link.Down},
		{"cpu-r1-u10", link.Up},
		{"gpu-r1-u02", link.Up},
		{"cpu-r1-u11", link.Up},
		{"gpu-r1-u06", link.Up},
	} {
		t.Run(tc.host, func(t *testing.T) {
			// The BMC phase would have rotated to its own; the factory one
			// is the admin's password until then.
			if err := sys.Vault.PutItem(ctx, enrollment.AdminItem(tc.host), factory); err != nil {
				t.Fatal(err)
			}
			h, _ := l.Site.Host(tc.host)
			var macs []string
			for _, n := range h.NICs {
				macs = append(macs, n.MAC)
			}
			states, err := reader.FrontendLinks(ctx, h.OOBIP, enrollment.AdminItem(tc.host), macs)
			if err != nil {
				t.Fatal(err)
			}
			if len(states) != len(macs) {
				t.Fatalf("states %v for %v", states, macs)
			}
			for m, st := range states {
				if st != tc.want {
					t.Errorf("%s %s: %s, want %s", tc.host, m, st, tc.want)
				}
			}
		})
	}
	// A wrong credential is refused by the emulator, not passed as UNKNOWN.
	if err := sys.Vault.PutItem(ctx, enrollment.AdminItem("cpu-r1-u10"), map[string]string{"username": "admin", "password": "wrong-password"}); err != nil {
		t.Fatal(err)
	}
	h, _ := l.Site.Host("cpu-r1-u10")
	if _, err := reader.FrontendLinks(ctx, h.OOBIP, enrollment.AdminItem("cpu-r1-u10"), []string{h.NICs[0].MAC}); !bmc.LinkUnobservable.Is(err) {
		t.Fatalf("a refused credential: %v, want BMC_LINK_UNOBSERVABLE", err)
	}
}

// The DHCP phase reaches the lab's SSH target and writes the reservation
// into the lab directory, restarting the lab's "service" once.
func TestLabDHCPThroughTheWiring(t *testing.T) {
	l, sys := startLab(t)
	ctx := context.Background()
	req, err := enrollment.Submit(ctx, sys.NetBox, "cpu-r1-u10", enrollment.SubmitOptions{Site: sys.Site, Config: sys.SiteConfig})
	if err != nil {
		t.Fatal(err)
	}
	// Only the DHCP phase and NetBox: BMC off for speed (the emulators'
	// reset and job waits are the integration tests').
	req.Snapshot.Site.ConfigureBMC = false
	rt := &flow.Local{Steps: sys.Enrollment, Clock: clock.Real{}, RoundTrip: true, Subject: "cpu-r1-u10"}
	res, err := enrollment.Enroll(ctx, rt, req)
	if err != nil || !res.Enrolled {
		t.Fatalf("enrol cpu-r1-u10 with DHCP only: %+v, %v", res, err)
	}
	conf, err := os.ReadFile(filepath.Join(l.Dir, lab.DHCPDir, "hostforge.d", "cpu-r1-u10.conf"))
	if err != nil || !strings.Contains(string(conf), "host cpu-r1-u10") {
		t.Fatalf("reservation %q, %v", conf, err)
	}
	restarts, err := os.ReadFile(filepath.Join(l.Dir, lab.DHCPDir, "restarts.log"))
	if err != nil || strings.Count(string(restarts), "\n") != 1 {
		t.Fatalf("restarts.log %q, %v: want one restart", restarts, err)
	}
}
