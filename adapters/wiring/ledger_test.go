package wiring_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
)

// withLedger replaces lab.yaml's ledger: section with section.
func withLedger(doc, section string) string {
	return doc[:strings.Index(doc, "ledger:\n")] + section
}

// The lab's SQLite ledger is wired as the fleet manager: what the
// platform-class write policy records is read back from the ledger file by
// another process's view of it.
func TestOpenLedgerRecordsPlatformClasses(t *testing.T) {
	r := newRig(t, fakeIronicRoot(t, "1.82"))
	ctx := context.Background()
	sys, err := r.open(t, ctx, r.cfg, wiring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := enrollment.Backfill(ctx, sys.NetBox, sys.NetBox, sys.FleetManager, []string{"cpu-r1-u10"}, false, nil)
	if err != nil || len(entries) != 1 || entries[0].Failure != nil {
		t.Fatalf("backfill: %+v, %v", entries, err)
	}
	l, db, err := wiring.OpenLedger(ctx, sys.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec, err := l.Record(ctx, "cpu-r1-u10")
	if err != nil || rec.PlatformClass != "NOGPU_DELLPOWEREDGER7615_NORDMA_01" {
		t.Fatalf("ledger record %+v, %v", rec, err)
	}
}

// A ledger that does not answer when Open runs is logged, not fatal: the
// platform-class write and proof then fail with their codes (retryable,
// FLEET_MANAGER), never printing the DSN, and the ledger is used as soon
// as it answers (a worker outlives a database restart).
func TestOpenLedgerDown(t *testing.T) {
	r := newRig(t, fakeIronicRoot(t, "1.82"))
	ctx := context.Background()
	dir := t.TempDir()
	const secret = "pw-never-logged"
	dsn := filepath.Join(dir, "ledger.dsn")
	if err := os.WriteFile(dsn, []byte("postgres://hf:"+secret+"@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	sys, err := r.open(t, ctx, withLedger(r.cfg, "ledger:\n  driver: postgres\n  dsn_file: "+dsn+"\n"), wiring.Options{Log: log})
	if err != nil {
		t.Fatalf("Open with the ledger down: %v", err)
	}
	if !strings.Contains(logs.String(), "ledger does not answer") {
		t.Errorf("the outage is not logged:\n%s", logs.String())
	}

	entries, err := enrollment.Backfill(ctx, sys.NetBox, sys.NetBox, sys.FleetManager, []string{"cpu-r1-u10"}, false, log)
	if err != nil || len(entries) != 1 {
		t.Fatalf("backfill: %+v, %v", entries, err)
	}
	if f := entries[0].Failure; f == nil || f.Code != "PLATFORM_CLASS_RECORD_FAILED" || !f.Retryable || f.Owner != hostforge.OwnerFleetManager {
		t.Fatalf("platform class with the ledger down: %+v", f)
	}
	clk := clock.NewFake(clock.Epoch)
	agent := &enrollment.ProofAgent{Store: sys.Proofs, Clock: clk, Window: time.Minute, Interval: 10 * time.Second}
	_, err = agent.Settle(ctx, enrollment.Completion{Device: "cpu-r1-u10", Identity: "fm-1", Run: "r1", Status: enrollment.CompletionFailed, ClosedAt: clk.Now()})
	if f, ok := hostforge.AsFailure(err); !ok || f.Code != enrollment.FleetManagerUnavailable.Code || !f.Retryable {
		t.Fatalf("proof with the ledger down: %v", err)
	}
	if strings.Contains(logs.String()+err.Error()+entries[0].Failure.Error(), secret) {
		t.Fatal("the DSN leaked into a log or an error")
	}

	// A SQLite ledger whose directory appears after Open: the first call
	// after that opens it.
	later := filepath.Join(t.TempDir(), "later")
	sys, err = r.open(t, ctx, withLedger(r.cfg, "ledger:\n  driver: sqlite\n  path: "+filepath.Join(later, "ledger.db")+"\n"), wiring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sys.FleetManager.PlatformClass(ctx, "cpu-r1-u10"); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("a ledger that cannot open: %v, want unavailable", err)
	}
	if err := os.Mkdir(later, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := sys.FleetManager.SetPlatformClass(ctx, "cpu-r1-u10", "NOGPU_DELLPOWEREDGER7615_NORDMA_01"); err != nil {
		t.Fatalf("the ledger is back: %v", err)
	}
	if id, rev, err := sys.Proofs.Snapshot(ctx, "cpu-r1-u10"); err != nil || id == "" || rev != 0 {
		t.Fatalf("snapshot after reconnecting: %q %d %v", id, rev, err)
	}
}

func TestOpenLedgerCommand(t *testing.T) {
	ctx := context.Background()
	parse := func(section string) *wiring.Config {
		t.Helper()
		cfg, err := wiring.Parse("c.yaml", []byte("site: lab1\nnetbox:\n  url: https://netbox.example.net\n"+section))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if _, _, err := wiring.OpenLedger(ctx, parse("")); !wiring.ConfigInvalid.Is(err) || !strings.Contains(err.Error(), "c.yaml: ledger: missing") {
		t.Fatalf("without a ledger section: %v", err)
	}
	dsn := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(dsn, []byte("postgres://hf:pw@127.0.0.1:1/l?connect_timeout=2"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := wiring.OpenLedger(ctx, parse("ledger:\n  driver: postgres\n  dsn_file: "+dsn+"\n"))
	if !sqlstore.Unavailable.Is(err) || strings.Contains(err.Error(), "pw@") {
		t.Fatalf("a ledger that does not answer: %v, want STATE_STORE_UNAVAILABLE without the DSN", err)
	}
	l, db, err := wiring.OpenLedger(ctx, parse("ledger:\n  driver: sqlite\n  path: "+filepath.Join(t.TempDir(), "l.db")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := l.Register(ctx, "cpu-r1-u10")
	if rec, rerr := l.Record(ctx, "cpu-r1-u10"); err != nil || rerr != nil || rec.Identity != id || id == "" {
		t.Fatalf("the opened ledger: %q %v, record %+v %v", id, err, rec, rerr)
	}
}

func TestParseLedgerSection(t *testing.T) {
	base := "site: lab1\nnetbox:\n  url: https://netbox.example.net\n"
	for _, tc := range []struct {
		name, section, want string
	}{
		{"unknown driver", "ledger:\n  driver: mysql\n", "line 5: ledger.driver: \"mysql\": want sqlite or postgres"},
		{"sqlite without a path", "ledger:\n  driver: sqlite\n", "ledger.path: missing"},
		{"postgres with a path", "ledger:\n  driver: postgres\n  dsn_file: /x\n  path: /y\n", "line 7: ledger.path: is for driver sqlite"},
		{"negative projection interval", "ledger:\n  driver: sqlite\n  path: /y\n  projection_interval: -1s\n", "ledger.projection_interval: negative duration"},
		{"unknown key", "ledger:\n  driver: sqlite\n  dsn: x\n", "line 6: ledger.dsn: unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wiring.Parse("c.yaml", []byte(base+tc.section))
			if !wiring.ConfigInvalid.Is(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
	cfg, err := wiring.Parse("c.yaml", []byte(base+"ledger:\n  driver: sqlite\n  path: /var/lib/hostforge/ledger.db\n  projection_interval: 30s\n"))
	if err != nil || cfg.Ledger.ProjectionInterval.D() != 30*time.Second || cfg.Ledger.Path != "/var/lib/hostforge/ledger.db" {
		t.Fatalf("%+v, %v", cfg, err)
	}
}
