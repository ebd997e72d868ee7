package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/retirement"
)

// 'retire --config' retires through the lab's real adapters: the NetBox
// emulator (journal entry, offline), the DHCP server over SSH, the BMC over
// Redfish, the vault file and the SQLite ledger. A device offline by hand
// is refused; the retired host's rerun resumes its run and writes nothing.
func TestRetireThroughTheLab(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := startLab(t)
	const host = "cpu-r1-u11" // Supermicro: no rotation, no reset
	if r := run(t, "", nil, "enroll", "--config", l.Config, "--log-level", "off", host); r.code != ExitOK {
		t.Fatalf("enroll: %d\n%s\n%s", r.code, r.out, r.err)
	}
	reservation := filepath.Join(l.Dir, lab.DHCPDir, "hostforge.d", host+".conf")
	if _, err := os.Stat(reservation); err != nil {
		t.Fatalf("no reservation after the enrollment: %v", err)
	}
	_ = l.Site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.DeviceByName(host).Status = string(intent.StatusDecommissioning)
		return nil
	})

	r := run(t, "", nil, "retire", "--config", l.Config, "--log-level", "off", "-o", "json", host, "bad-offline-u18")
	wantCode(t, r, ExitInfra)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 2 {
		t.Fatalf("-o json:\n%s", r.out)
	}
	var ok, refused retireJSON
	if json.Unmarshal([]byte(lines[0]), &ok) != nil || json.Unmarshal([]byte(lines[1]), &refused) != nil {
		t.Fatalf("-o json:\n%s", r.out)
	}
	if !ok.Retired || ok.Run == "" || ok.ExitCode != ExitOK || ok.Archived == "" || ok.ArchivedUntil == nil {
		t.Fatalf("%s: %s", host, lines[0])
	}
	for _, ph := range []string{retirement.PhaseDHCP, retirement.PhaseBMC, retirement.PhaseLedger, retirement.PhaseNetBox} {
		if s := phaseStatus(t, lines[0], ph); s != "done" {
			t.Errorf("%s: phase %s %s", host, ph, s)
		}
	}
	if refused.Failure == nil || refused.Failure.Code != retirement.DeviceOffline.Code || refused.ExitCode != ExitInfra {
		t.Fatalf("bad-offline-u18: %s", lines[1])
	}
	if _, err := os.Stat(reservation); !os.IsNotExist(err) {
		t.Fatalf("the reservation is still on the DHCP server: %v", err)
	}
	d, _ := l.Site.NetBox.Device(ctx, host)
	journal := l.Site.NetBox.Journal(host)
	if d.Status != intent.StatusOffline || len(journal) != 1 || !strings.Contains(journal[0].Comments, ok.Run) {
		t.Fatalf("NetBox: %s, journal %+v", d.Status, journal)
	}

	// The rerun: the same run, nothing written (the emulator's journal and
	// the reservation stay as they are), the text summary.
	before := l.Site.Calls()
	again := run(t, "", nil, "retire", "--config", l.Config, "--log-level", "off", host)
	wantCode(t, again, ExitOK)
	if !summaryHas(again.out, host, "retired") || !strings.Contains(again.out, ok.Run) || !strings.Contains(again.out, "1 of 1 retired.") {
		t.Fatalf("summary:\n%s", again.out)
	}
	if w := l.Site.Calls().Sub(before)[fakes.SysNetBox].Writes; w != 0 || len(l.Site.NetBox.Journal(host)) != 1 {
		t.Fatalf("the rerun wrote to NetBox (%d writes, journal %+v)", w, l.Site.NetBox.Journal(host))
	}
}

func TestRetireRefusesBadUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"retire", "--config", "x.yaml"}, ExitUsage, "DEVICE"},
		{[]string{"retire", "h1"}, ExitUsage, "--config"},
		{[]string{"retire", "--config", "x.yaml", "--parallel", "0", "h1"}, ExitUsage, "--parallel"},
		{[]string{"retire", "--config", "x.yaml", "h1", "h1"}, ExitUsage, "named twice"},
		{[]string{"retire", "--config", filepath.Join(t.TempDir(), "missing.yaml"), "h1"}, ExitUsage, "CONFIG_UNREADABLE"},
	} {
		r := run(t, "", nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.err+r.out, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d mentioning %q", tc.args, r.code, r.err, tc.code, tc.want)
		}
	}
}

// A tenant's host is the tenant team's: exit code 8, and a run over several
// hosts reports it after the engineers' failures.
func TestTenantExitCode(t *testing.T) {
	tenant := retirement.NodeInUse.New("node holds an instance")
	if got := exitCodeOf(tenant); got != ExitTenant {
		t.Fatalf("exit code of %s: %d, want %d", tenant.Code, got, ExitTenant)
	}
	if got := worst([]*hostforge.Failure{tenant, hostforge.Cancelled.New("x")}); got != ExitTenant {
		t.Fatalf("tenant and cancelled: %d, want %d", got, ExitTenant)
	}
	if got := worst([]*hostforge.Failure{tenant, retirement.StatusIneligible.New("x")}); got != ExitInfra {
		t.Fatalf("tenant and infra: %d, want %d", got, ExitInfra)
	}
}
