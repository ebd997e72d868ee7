package bmc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/fakes"
)

func (w *world) retirer() *bmc.Retirer {
	return &bmc.Retirer{Connector: w.site.BMCs, Vault: w.site.Vault, Clock: w.site.Clock}
}

func (w *world) retireTarget() bmc.RetireTarget {
	return bmc.RetireTarget{Device: w.host.Name, Address: w.host.OOBIP, AdminItem: fakes.AdminItem(w.host.Name),
		MonitoringItem: fakes.MonitoringItem, Retention: 30 * 24 * time.Hour, Run: "run-1"}
}

func (w *world) monitoringUser() string {
	it, _ := w.site.Vault.Peek(fakes.MonitoringItem)
	return it[bmc.FieldUsername]
}

// A configured BMC is retired: the monitoring user goes, the per-host
// credential moves to the archive; a rerun writes nothing.
func TestRetireRemovesTheMonitoringUserAndArchivesTheCredential(t *testing.T) {
	for _, vendor := range []string{"dell", "lenovo", "ami", "supermicro"} {
		t.Run(vendor, func(t *testing.T) {
			w := newWorld(t, vendor)
			w.configure(t, w.target())
			cred := w.admin()
			if !w.b.HasAccount(w.monitoringUser()) {
				t.Fatal("the BMC phase left no monitoring user to remove")
			}
			before := w.site.Calls()
			res, err := w.retirer().Retire(context.Background(), w.retireTarget())
			if err != nil {
				t.Fatal(err)
			}
			if res.MonitoringUser != "removed" || res.Writes != 3 || w.b.HasAccount(w.monitoringUser()) {
				t.Fatalf("result %+v, monitoring user still there: %v", res, w.b.HasAccount(w.monitoringUser()))
			}
			if d := w.site.Calls().Sub(before); d[fakes.SysBMC].Writes != 1 || d[fakes.SysVault].Writes != 2 {
				t.Fatalf("writes: %s; want one BMC write (the deletion) and two vault writes (archive, delete)", d)
			}
			if _, ok := w.site.Vault.Peek(fakes.AdminItem(w.host.Name)); ok {
				t.Fatal("the admin item is still in the vault")
			}
			arch, ok := w.site.Vault.Peek(bmc.ArchivedItem(fakes.AdminItem(w.host.Name)))
			if !ok || arch[bmc.FieldPassword] != cred[bmc.FieldPassword] || arch[bmc.FieldUsername] != cred[bmc.FieldUsername] || arch[bmc.FieldRetiredRun] != "run-1" {
				t.Fatalf("archive %v, want the per-host credential and the run", arch)
			}
			want := w.site.Clock.Now().Add(30 * 24 * time.Hour)
			if !res.ArchivedUntil.Equal(want) || arch[bmc.FieldPurgeAfter] != want.UTC().Format(time.RFC3339Nano) {
				t.Fatalf("archived until %s (%s), want %s", res.ArchivedUntil, arch[bmc.FieldPurgeAfter], want)
			}
			// The archive still reaches the BMC (an RMA return).
			if _, err := w.site.BMCs.Connect(context.Background(), w.host.OOBIP, bmc.Credential{Username: arch[bmc.FieldUsername], Password: arch[bmc.FieldPassword]}); err != nil {
				t.Fatalf("the archived credential does not reach the BMC: %v", err)
			}

			before = w.site.Calls()
			again, err := w.retirer().Retire(context.Background(), w.retireTarget())
			if err != nil || again.MonitoringUser != "absent" || again.Writes != 0 {
				t.Fatalf("rerun: %+v, %v; want the monitoring user absent and no write", again, err)
			}
			if d := w.site.Calls().Sub(before); d.Writes() != 0 {
				t.Fatalf("the rerun wrote: %s", d)
			}
		})
	}
}

// Past its retention the archive is deleted by the next run, which touches
// nothing else; until then it stays.
func TestRetireDeletesTheArchiveAfterItsRetention(t *testing.T) {
	w := newWorld(t, "dell")
	w.configure(t, w.target())
	tg := w.retireTarget()
	if _, err := w.retirer().Retire(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	archive := bmc.ArchivedItem(fakes.AdminItem(w.host.Name))
	w.site.Clock.Advance(tg.Retention - time.Minute)
	if res, err := w.retirer().Retire(context.Background(), tg); err != nil || res.Purged {
		t.Fatalf("a run before the retention passed: %+v, %v; want the archive kept", res, err)
	}
	w.site.Clock.Advance(2 * time.Minute)
	before := w.site.Calls()
	res, err := w.retirer().Retire(context.Background(), tg)
	if err != nil || !res.Purged {
		t.Fatalf("a run after the retention: %+v, %v; want the archive purged", res, err)
	}
	if _, ok := w.site.Vault.Peek(archive); ok {
		t.Fatal("the archive is still in the vault")
	}
	if d := w.site.Calls().Sub(before); d[fakes.SysBMC].Reads+d[fakes.SysBMC].Writes != 0 || d[fakes.SysVault].Writes != 1 {
		t.Fatalf("the purging run made %s; want one vault write and no BMC call", d)
	}
	before = w.site.Calls()
	if res, err := w.retirer().Retire(context.Background(), tg); err != nil || res.MonitoringUser != "not_checked" || res.Writes != 0 {
		t.Fatalf("a run after the purge: %+v, %v", res, err)
	}
	if d := w.site.Calls().Sub(before); d.Writes() != 0 {
		t.Fatalf("a run after the purge wrote: %s", d)
	}
}

// A vault that fails between the archive and the admin item's deletion: the
// rerun finishes, keeping the archive's stamps; no second deletion.
func TestRetireConvergesAfterAFailedVaultWrite(t *testing.T) {
	w := newWorld(t, "lenovo")
	w.configure(t, w.target())
	cred := w.admin()
	w.site.Inject(fakes.SysVault, "delete_item", 1, hostforge.ErrUnavailable)
	_, err := w.retirer().Retire(context.Background(), w.retireTarget())
	if !bmc.VaultUnavailable.Is(err) {
		t.Fatalf("%v, want BMC_VAULT_UNAVAILABLE", err)
	}
	if f, _ := hostforge.AsFailure(err); f.Phase != bmc.PhaseRetire {
		t.Fatalf("phase %q, want %q", f.Phase, bmc.PhaseRetire)
	}
	archive := bmc.ArchivedItem(fakes.AdminItem(w.host.Name))
	first, _ := w.site.Vault.Peek(archive)
	w.site.Clock.Advance(time.Hour)
	res, err := w.retirer().Retire(context.Background(), w.retireTarget())
	if err != nil || res.MonitoringUser != "absent" {
		t.Fatalf("rerun: %+v, %v", res, err)
	}
	second, _ := w.site.Vault.Peek(archive)
	if second[bmc.FieldRetiredAt] != first[bmc.FieldRetiredAt] || second[bmc.FieldPassword] != cred[bmc.FieldPassword] {
		t.Fatalf("archive after the rerun %v, want the first attempt's %v", second, first)
	}
	if _, ok := w.site.Vault.Peek(fakes.AdminItem(w.host.Name)); ok {
		t.Fatal("the admin item survived the rerun")
	}
}

// A host enrolled again after its retirement is reached with the archived
// credential and rotated to a fresh one.
func TestEnrollingARetiredHostRotatesAwayFromTheArchive(t *testing.T) {
	w := newWorld(t, "dell")
	w.configure(t, w.target())
	old := w.admin()
	if _, err := w.retirer().Retire(context.Background(), w.retireTarget()); err != nil {
		t.Fatal(err)
	}
	tg := w.target()
	// Without the archive the BMC, which keeps the per-host password, is unreachable.
	if o := w.converge(tg); !bmc.CredentialInvalid.Is(o.Err) {
		t.Fatalf("re-enrolment without the archived item: %v, want BMC_CREDENTIAL_INVALID", o.Err)
	}
	tg.ArchivedItem = bmc.ArchivedItem(tg.AdminItem)
	o := w.configure(t, tg)
	fresh := w.admin()
	if fresh[bmc.FieldPassword] == "" || fresh[bmc.FieldPassword] == old[bmc.FieldPassword] || w.b.Password(fresh[bmc.FieldUsername]) != fresh[bmc.FieldPassword] {
		t.Fatalf("after re-enrolment the admin item is %v (BMC password %q); want a fresh credential the BMC takes", fresh, w.b.Password(fresh[bmc.FieldUsername]))
	}
	if !w.b.HasAccount(w.monitoringUser()) {
		t.Fatal("re-enrolment did not recreate the monitoring user")
	}
	if !contains(stepNames(o.Attempts[0]), "password") {
		t.Fatalf("steps %v", o.Steps())
	}
	// A second run is converged: it writes nothing.
	w.rerunWritesNothing(t, tg)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestRetireRefusesBadInput(t *testing.T) {
	w := newWorld(t, "ami")
	for _, tg := range []bmc.RetireTarget{
		{Device: w.host.Name, Address: w.host.OOBIP, MonitoringItem: fakes.MonitoringItem},
		{Device: w.host.Name, Address: w.host.OOBIP, AdminItem: fakes.MonitoringItem, MonitoringItem: fakes.MonitoringItem},
	} {
		before := w.site.Calls()
		if _, err := w.retirer().Retire(context.Background(), tg); !bmc.InputInvalid.Is(err) {
			t.Fatalf("Retire(%+v): %v, want BMC_INPUT_INVALID", tg, err)
		}
		if d := w.site.Calls().Sub(before); d.Reads()+d.Writes() != 0 {
			t.Fatalf("bad input reached a system: %s", d)
		}
	}
	var f *hostforge.Failure
	_, err := (&bmc.Retirer{}).Retire(context.Background(), w.retireTarget())
	// A retirer wired without its connector or vault is a defect of the
	// program that built it, not the operator's input.
	if !errors.As(err, &f) || f.Code != hostforge.Unclassified.Code {
		t.Fatalf("an unwired retirer: %v, want %s", err, hostforge.Unclassified.Code)
	}
}

// A Supermicro BMC has no password setup: a retired one enrolled again gets
// its archived credential back as its per-host credential.
func TestEnrollingARetiredSupermicroRestoresTheArchive(t *testing.T) {
	w := newWorld(t, "supermicro")
	w.configure(t, w.target())
	old := w.admin()
	if _, err := w.retirer().Retire(context.Background(), w.retireTarget()); err != nil {
		t.Fatal(err)
	}
	tg := w.target()
	tg.ArchivedItem = bmc.ArchivedItem(tg.AdminItem)
	o := w.configure(t, tg)
	if got := w.admin(); got[bmc.FieldPassword] != old[bmc.FieldPassword] || got[bmc.FieldUsername] != old[bmc.FieldUsername] {
		t.Fatalf("admin item %v, want the archived credential restored", got)
	}
	if !contains(o.Steps(), "password:restored_from_archive") {
		t.Fatalf("steps %v", o.Steps())
	}
	w.rerunWritesNothing(t, tg)
}
