package retirement_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/retirement"
)

// world is the demo rack with its hosts enrolled, a retirement executor
// over it and an announcer that records what it is asked to fire.
type world struct {
	site  *fakes.Site
	cfg   enrollment.SiteConfig
	rcfg  retirement.SiteConfig
	exec  *retirement.Executor
	heard *announcer
	runs  int
}

// announcer records the events a retirement fires and answers with one
// succeeded delivery each (or failed ones, while fail is set).
type announcer struct {
	mu   sync.Mutex
	got  []retirement.Announcement
	fail int
}

func (a *announcer) announce(_ context.Context, _ flow.Runtime, an retirement.Announcement) ([]retirement.Delivery, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, an)
	d := retirement.Delivery{Event: an.ID, Stage: an.Stage, Extension: "dns", Task: "notify", DeliveryID: "d-" + an.ID, Status: retirement.DeliverySucceeded}
	if a.fail > 0 {
		a.fail--
		d.Status, d.Code = retirement.DeliveryFailed, "EXTENSION_TASK_FAILED"
	}
	return []retirement.Delivery{d}, nil
}

func (a *announcer) ids() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, an := range a.got {
		out = append(out, an.ID)
	}
	return out
}

const cpuHost = "cpu-r1-u10"

func newWorld(t *testing.T, hosts ...string) *world {
	t.Helper()
	w := &world{site: enrolltest.DemoRack(), cfg: enrolltest.DemoSiteConfig(), heard: &announcer{}}
	w.rcfg = enrolltest.RetireSiteConfig(w.cfg)
	w.rcfg.Events = true
	w.rcfg.DNSZone = retirement.DNSZone{Name: "lab1.example.net"}
	if len(hosts) == 0 {
		hosts = []string{cpuHost}
	}
	ex := enrolltest.Executor(w.site, nil)
	for _, h := range hosts {
		d, _ := w.site.NetBox.Device(context.Background(), h)
		req := enrollment.NewRequest(h, d.Role.DeviceClass, "lab1", w.cfg, true, enrollment.Params{})
		if res, err := enrollment.Enroll(context.Background(), ex.Local(w.site.Clock), req); err != nil {
			t.Fatalf("enrolling %s: %+v, %v", h, res, err)
		}
		// The ledger proves the enrollment, as settlement does.
		node, _ := w.site.Ironic[req.Snapshot.Site.IronicInstances[req.DeviceClass]].Node(h)
		ref := req.Snapshot.Site.IronicInstances[req.DeviceClass] + "/" + node.UUID
		w.site.Proofs.Register(h, "fm-"+h)
		w.site.Proofs.SetReference(h, ref)
		if _, err := w.site.Proofs.ProveEnrollment(context.Background(), h, "fm-"+h, ref, 0, "enroll-"+h, w.site.Clock.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		w.setStatus(t, h, intent.StatusDecommissioning)
	}
	w.exec = enrolltest.RetireExecutor(w.site, nil)
	return w
}

func (w *world) setStatus(t *testing.T, device string, s intent.Status) {
	t.Helper()
	if err := w.site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.DeviceByName(device).Status = string(s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func (w *world) request(device string, p retirement.Params) retirement.Request {
	w.runs++
	d, _ := w.site.NetBox.Device(context.Background(), device)
	return retirement.NewRequest(device, d.Role.DeviceClass, "lab1", fmt.Sprintf("retire-%s-%d", device, w.runs), "fm-"+device, w.rcfg, p)
}

func (w *world) runtime(device string) *flow.Local {
	rt := w.exec.Local(w.site.Clock)
	rt.RoundTrip, rt.Subject = true, device
	return rt
}

func (w *world) retire(t *testing.T, device string, p retirement.Params) (retirement.Result, error) {
	t.Helper()
	return w.retireOn(t, w.runtime(device), w.request(device, p))
}

func (w *world) retireOn(t *testing.T, rt flow.Runtime, req retirement.Request) (retirement.Result, error) {
	t.Helper()
	res, err := retirement.Workflow{Announce: w.heard.announce}.Run(context.Background(), rt, req)
	if err != nil {
		if _, ok := err.(*hostforge.Failure); !ok {
			t.Fatalf("Run returned a %T, want *hostforge.Failure: %v", err, err)
		}
		if res.Failure == nil || res.Failure.Code != hostforge.CodeOf(err) || res.Retired {
			t.Fatalf("the result does not carry the failure: %+v", res)
		}
	}
	return res, err
}

func (w *world) instance(device string) *fakes.Ironic {
	d, _ := w.site.NetBox.Device(context.Background(), device)
	return w.site.Ironic[w.cfg.IronicInstances[d.Role.DeviceClass]]
}

func (w *world) dhcpFile(device string) string {
	return path.Join(w.site.DHCP.Config().Dir, device+w.site.DHCP.Config().Flavour.Extension())
}

func (w *world) monitoringUser() string {
	it, _ := w.site.Vault.Peek(fakes.MonitoringItem)
	return it[bmc.FieldUsername]
}

// checkRetired holds the site to a retired host: no node, no DHCP
// reservation, no monitoring user, the credential archived, no proof nor
// platform class, NetBox offline with the run in its journal.
func (w *world) checkRetired(t *testing.T, device string, res retirement.Result) {
	t.Helper()
	if _, ok := w.instance(device).Node(device); ok {
		t.Errorf("%s: the Ironic node is still there", device)
	}
	if _, ok := w.site.DHCP.File(w.dhcpFile(device)); ok {
		t.Errorf("%s: the DHCP reservation is still on the server", device)
	}
	if _, loaded := w.site.DHCP.Loaded()[path.Base(w.dhcpFile(device))]; loaded {
		t.Errorf("%s: the DHCP service still loads the reservation", device)
	}
	h, _ := w.site.Host(device)
	if b, _ := w.site.BMCs.Of(h.Name); b.HasAccount(w.monitoringUser()) {
		t.Errorf("%s: the monitoring user is still on the BMC", device)
	}
	if _, ok := w.site.Vault.Peek(fakes.AdminItem(device)); ok {
		t.Errorf("%s: the per-host credential is still in the vault under its live name", device)
	}
	if arch, ok := w.site.Vault.Peek(bmc.ArchivedItem(fakes.AdminItem(device))); !ok || arch[bmc.FieldPassword] == "" {
		t.Errorf("%s: no archived credential (%v)", device, arch)
	}
	if r, _ := w.site.Proofs.Record(device); r.Proof != nil || w.site.FleetManager.Get(device) != "" {
		t.Errorf("%s: the ledger keeps proof %+v and platform class %q", device, r.Proof, w.site.FleetManager.Get(device))
	}
	d, _ := w.site.NetBox.Device(context.Background(), device)
	j := retirement.ReadJournal(w.site.NetBox.Journal(device))
	if d.Status != intent.StatusOffline || !j.HasRetired(res.Run) || !j.HasAnnounced(res.Run) {
		t.Errorf("%s: NetBox %s, journal %+v; want offline, run %s retired and announced", device, d.Status, j, res.Run)
	}
}

func TestRetireOneHost(t *testing.T) {
	w := newWorld(t)
	node, _ := w.instance(cpuHost).Node(cpuHost)
	res, err := w.retire(t, cpuHost, retirement.Params{})
	if err != nil || !res.Retired {
		t.Fatalf("retire: %+v, %v", res, err)
	}
	w.checkRetired(t, cpuHost, res)
	if res.Node != node.UUID || res.Erase != "metadata" || res.KeptNode || res.Archived != bmc.ArchivedItem(fakes.AdminItem(cpuHost)) {
		t.Fatalf("result %+v", res)
	}
	if got := w.instance(cpuHost).CleanStepsRun(cpuHost); !slices.Equal(got, []string{"deploy.erase_devices_metadata"}) {
		t.Fatalf("clean steps run on the node: %v; want the metadata erase, once, as a manual clean", got)
	}
	for _, ph := range res.Phases {
		if ph.Status != "done" {
			t.Errorf("phase %s: %s (%s)", ph.Phase, ph.Status, ph.Note)
		}
	}
	want := []string{res.Run + "/serverDecommissioned", res.Run + "/serverDeleteDNS"}
	if !slices.Equal(w.heard.ids(), want) {
		t.Fatalf("events fired %v, want %v", w.heard.ids(), want)
	}
	host := w.heard.got[0].Host
	if host.Node != node.UUID || host.BMCHostname != cpuHost || host.BMCAddress == "" || len(host.Inventory) == 0 || host.Zone.Name != "lab1.example.net" {
		t.Fatalf("the events describe %+v", host)
	}
	entries := w.site.NetBox.Journal(cpuHost)
	if len(entries) != 2 || !strings.Contains(entries[0].Comments, "erase: metadata") || !strings.Contains(entries[0].Comments, "node "+node.UUID+" deleted") {
		t.Fatalf("journal %+v", entries)
	}
}

// A retired host's rerun resumes the retirement's run and writes nothing:
// not to Ironic, the DHCP server, the BMC, the vault, the ledger, NetBox,
// nor does it fire the events again.
func TestRerunOfARetiredHostWritesNothing(t *testing.T) {
	w := newWorld(t)
	first, err := w.retire(t, cpuHost, retirement.Params{})
	if err != nil {
		t.Fatal(err)
	}
	fired := len(w.heard.ids())
	before := w.site.Calls()
	again, err := w.retire(t, cpuHost, retirement.Params{})
	if err != nil || !again.Retired || again.Run != first.Run || !again.Resumed {
		t.Fatalf("rerun: %+v, %v; want the first run %s resumed", again, err, first.Run)
	}
	if d := w.site.Calls().Sub(before); d.Writes() != 0 {
		t.Fatalf("the rerun wrote: %s (%v)", d, writeOps(d))
	}
	if len(w.heard.ids()) != fired {
		t.Fatalf("the rerun fired events again: %v", w.heard.ids())
	}
	w.checkRetired(t, cpuHost, first)
}

func writeOps(c fakes.Calls) map[string]map[string]int {
	out := map[string]map[string]int{}
	for sys, t := range c {
		if len(t.WriteOps) > 0 {
			out[sys] = t.WriteOps
		}
	}
	return out
}

// A node a tenant holds is refused before anything is written, to any
// system; so is a deployed node without an instance_uuid.
func TestNodeInUseIsRefusedBeforeAnythingIsWritten(t *testing.T) {
	for name, hold := range map[string]func(w *world){
		"instance": func(w *world) { w.instance(cpuHost).SetInstance(cpuHost, "8d7f5f1e-0000-4000-8000-000000000001") },
		"deployed": func(w *world) { w.instance(cpuHost).SetState(cpuHost, ironic.StateActive) },
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			hold(w)
			before := w.site.Calls()
			res, err := w.retire(t, cpuHost, retirement.Params{})
			f, _ := hostforge.AsFailure(err)
			if f == nil || f.Code != "RETIRE_NODE_IN_USE" || f.Owner != hostforge.OwnerTenant || f.Retryable {
				t.Fatalf("retire: %v; want RETIRE_NODE_IN_USE, owner TENANT, not retryable", err)
			}
			d := w.site.Calls().Sub(before)
			for _, sys := range []string{fakes.SysNetBox, fakes.SysIronic, fakes.SysDHCP, fakes.SysBMC, fakes.SysVault, fakes.SysFleetManager} {
				if d[sys].Writes != 0 {
					t.Errorf("%s: %d writes (%v) before the refusal", sys, d[sys].Writes, d[sys].WriteOps)
				}
			}
			if d[fakes.SysNetBox].Reads == 0 || d[fakes.SysIronic].Reads == 0 {
				t.Fatalf("calls %s: the gate read neither NetBox nor Ironic", d)
			}
			if len(w.heard.ids()) != 0 || res.Retired {
				t.Fatalf("a refused retirement fired %v / reported %+v", w.heard.ids(), res)
			}
			if _, ok := w.instance(cpuHost).Node(cpuHost); !ok {
				t.Fatal("the node went")
			}
		})
	}
}

func TestGate(t *testing.T) {
	t.Run("active is not retired", func(t *testing.T) {
		w := newWorld(t)
		w.setStatus(t, cpuHost, intent.StatusActive)
		before := w.site.Calls()
		if _, err := w.retire(t, cpuHost, retirement.Params{}); !retirement.StatusIneligible.Is(err) {
			t.Fatalf("%v, want RETIRE_STATUS_INELIGIBLE", err)
		}
		if d := w.site.Calls().Sub(before); d.Writes() != 0 || d[fakes.SysIronic].Reads != 0 {
			t.Fatalf("the refused gate made %s", d)
		}
	})
	t.Run("offline by hand needs --force", func(t *testing.T) {
		w := newWorld(t)
		w.setStatus(t, cpuHost, intent.StatusOffline)
		before := w.site.Calls()
		if _, err := w.retire(t, cpuHost, retirement.Params{}); !retirement.DeviceOffline.Is(err) {
			t.Fatalf("%v, want RETIRE_DEVICE_OFFLINE", err)
		}
		if d := w.site.Calls().Sub(before); d.Writes() != 0 {
			t.Fatalf("the refused gate wrote %s", d)
		}
		res, err := w.retire(t, cpuHost, retirement.Params{Force: true})
		if err != nil || res.Resumed {
			t.Fatalf("--force: %+v, %v", res, err)
		}
		w.checkRetired(t, cpuHost, res)
	})
	t.Run("unknown device", func(t *testing.T) {
		w := newWorld(t)
		if _, err := w.retire(t, "ghost", retirement.Params{}); !retirement.DeviceNotFound.Is(err) {
			t.Fatalf("%v, want RETIRE_DEVICE_NOT_FOUND", err)
		}
	})
	t.Run("bad requests change nothing", func(t *testing.T) {
		w := newWorld(t)
		for _, mod := range []func(*retirement.Request){
			func(r *retirement.Request) { r.Run = "" },
			func(r *retirement.Request) { r.Run = "two words" },
			func(r *retirement.Request) { r.Device = "" },
			func(r *retirement.Request) { r.Snapshot.Erase = "shred" },
			func(r *retirement.Request) { r.Snapshot.ArchiveRetention = -time.Hour },
		} {
			req := w.request(cpuHost, retirement.Params{})
			mod(&req)
			before := w.site.Calls()
			if _, err := w.retireOn(t, w.runtime(cpuHost), req); !retirement.InputInvalid.Is(err) {
				t.Fatalf("%+v: %v, want RETIRE_INPUT_INVALID", req, err)
			}
			if d := w.site.Calls().Sub(before); d.Reads()+d.Writes() != 0 {
				t.Fatalf("a bad request reached a system: %s", d)
			}
		}
	})
	t.Run("events without an announcer", func(t *testing.T) {
		w := newWorld(t)
		req := w.request(cpuHost, retirement.Params{})
		before := w.site.Calls()
		_, err := retirement.Retire(context.Background(), w.runtime(cpuHost), req)
		if !retirement.NotWired.Is(err) {
			t.Fatalf("%v, want RETIRE_NOT_WIRED", err)
		}
		if d := w.site.Calls().Sub(before); d.Reads()+d.Writes() != 0 {
			t.Fatalf("an unwired retirement reached a system: %s", d)
		}
	})
}

func TestOptions(t *testing.T) {
	t.Run("--no-erase is recorded", func(t *testing.T) {
		w := newWorld(t)
		res, err := w.retire(t, cpuHost, retirement.Params{NoErase: true})
		if err != nil || !res.NoErase || res.Erase != "skipped (--no-erase)" {
			t.Fatalf("%+v, %v", res, err)
		}
		if got := w.instance(cpuHost).CleanStepsRun(cpuHost); len(got) != 0 {
			t.Fatalf("clean steps ran: %v", got)
		}
		if c := w.site.NetBox.Journal(cpuHost)[0].Comments; !strings.Contains(c, "--no-erase") {
			t.Fatalf("the journal does not record --no-erase: %q", c)
		}
		w.checkRetired(t, cpuHost, res)
	})
	t.Run("full erase", func(t *testing.T) {
		w := newWorld(t)
		w.rcfg.Erase = retirement.EraseFull
		res, err := w.retire(t, cpuHost, retirement.Params{})
		if err != nil || res.Erase != "full" {
			t.Fatalf("%+v, %v", res, err)
		}
		if got := w.instance(cpuHost).CleanStepsRun(cpuHost); !slices.Equal(got, []string{"deploy.erase_devices"}) {
			t.Fatalf("clean steps %v", got)
		}
	})
	t.Run("keep_node", func(t *testing.T) {
		w := newWorld(t)
		w.rcfg.KeepNode = true
		res, err := w.retire(t, cpuHost, retirement.Params{})
		if err != nil || !res.KeptNode {
			t.Fatalf("%+v, %v", res, err)
		}
		n, ok := w.instance(cpuHost).Node(cpuHost)
		if !ok || n.ProvisionState != ironic.StateManageable || !n.Maintenance || n.MaintenanceReason != ironic.RetiredReason || len(w.instance(cpuHost).Ports(cpuHost)) == 0 {
			t.Fatalf("kept node %+v (present %v)", n, ok)
		}
		before := w.site.Calls()
		again, err := w.retire(t, cpuHost, retirement.Params{})
		if err != nil || again.Erase != "none (kept by an earlier retirement)" {
			t.Fatalf("rerun: %+v, %v", again, err)
		}
		if d := w.site.Calls().Sub(before); d.Writes() != 0 {
			t.Fatalf("the rerun of a kept node wrote %s (%v)", d, writeOps(d))
		}
	})
	t.Run("a failed erase is recovered and rerun", func(t *testing.T) {
		w := newWorld(t)
		w.instance(cpuHost).FailCleaning(cpuHost, 1)
		res, err := w.retire(t, cpuHost, retirement.Params{})
		if err != nil || res.Erase != "metadata" {
			t.Fatalf("%+v, %v", res, err)
		}
		w.checkRetired(t, cpuHost, res)
	})
	t.Run("an erase that keeps failing", func(t *testing.T) {
		w := newWorld(t)
		w.instance(cpuHost).FailCleaning(cpuHost, 10)
		before := w.site.Calls()
		res, err := w.retire(t, cpuHost, retirement.Params{})
		if !ironic.EraseFailed.Is(err) || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("%+v, %v; want RETIRE_ERASE_FAILED with Ironic's last_error", res, err)
		}
		if d := w.site.Calls().Sub(before); d[fakes.SysIronic].WriteOps["clean"] != 3 || d[fakes.SysDHCP].Writes+d[fakes.SysNetBox].Writes != 0 {
			t.Fatalf("calls %s (%v): want three erases and nothing past the erase", d, writeOps(d))
		}
		if _, ok := w.instance(cpuHost).Node(cpuHost); !ok {
			t.Fatal("a node whose erase failed was deleted")
		}
	})
	t.Run("an extension task that fails is re-fired by the rerun", func(t *testing.T) {
		w := newWorld(t)
		w.heard.fail = 1
		res, err := w.retire(t, cpuHost, retirement.Params{})
		if !retirement.EventsUndelivered.Is(err) || len(res.Deliveries) != 2 {
			t.Fatalf("%+v, %v; want RETIRE_EVENTS_UNDELIVERED with both deliveries", res, err)
		}
		again, err := w.retire(t, cpuHost, retirement.Params{})
		if err != nil || again.Run != res.Run {
			t.Fatalf("rerun: %+v, %v", again, err)
		}
		want := []string{res.Run + "/serverDecommissioned", res.Run + "/serverDeleteDNS", res.Run + "/serverDecommissioned", res.Run + "/serverDeleteDNS"}
		if !slices.Equal(w.heard.ids(), want) {
			t.Fatalf("fired %v, want the same event IDs twice", w.heard.ids())
		}
		w.checkRetired(t, cpuHost, again)
	})
}

// The other vendors retire the same way.
func TestRetireEveryVendor(t *testing.T) {
	hosts := []string{"gpu-r1-u02", "gpu-r1-u06", "cpu-r1-u11"}
	w := newWorld(t, hosts...)
	for _, h := range hosts {
		res, err := w.retire(t, h, retirement.Params{})
		if err != nil {
			t.Fatalf("%s: %+v, %v", h, res, err)
		}
		w.checkRetired(t, h, res)
	}
}

// An identity that changed since submission (a hardware replacement) keeps
// its ledger record.
func TestReplacedIdentityKeepsItsLedgerRecord(t *testing.T) {
	w := newWorld(t)
	w.site.Proofs.ReplaceIdentity(cpuHost, "fm-replacement")
	w.site.FleetManager.Set(cpuHost, "NOGPU_NEW_NORDMA_01")
	res, err := w.retire(t, cpuHost, retirement.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if w.site.FleetManager.Get(cpuHost) != "NOGPU_NEW_NORDMA_01" {
		t.Fatal("the replacement's platform class was cleared")
	}
	if ph := res.Phases[slices.IndexFunc(res.Phases, func(p retirement.PhaseRecord) bool { return p.Phase == retirement.PhaseLedger })]; !strings.Contains(ph.Note, "replaced") {
		t.Fatalf("ledger phase %+v", ph)
	}
}

// crashRuntime kills the worker of the run once `at` writes of the whole
// run have taken effect: the answer to the last never arrives and the run
// stops there, as a killed process does.
type crashRuntime struct {
	flow.Runtime
	at, wrote int
	tripped   bool
}

func (r *crashRuntime) Do(ctx context.Context, step string, in, out any) error {
	if r.tripped {
		return fakes.ErrCrashed
	}
	cctx, crash := fakes.WithCrash(ctx, r.at-r.wrote)
	defer crash.Release()
	err := r.Runtime.Do(cctx, step, in, out)
	r.wrote += crash.Writes()
	if crash.Tripped() {
		r.tripped = true
		return fakes.ErrCrashed
	}
	return err
}

// A run killed after any of its writes is finished by the rerun: the host
// ends retired, its events fired for one run, and a further rerun writes
// nothing.
func TestRerunAfterACrashAtEveryWriteConverges(t *testing.T) {
	w := newWorld(t)
	// The writes that take effect (a call refused, say for a node lock,
	// counts as a call but changes nothing).
	count := &crashRuntime{Runtime: w.runtime(cpuHost), at: 1 << 30}
	if _, err := w.retireOn(t, count, w.request(cpuHost, retirement.Params{})); err != nil {
		t.Fatal(err)
	}
	total := count.wrote
	if total < 10 {
		t.Fatalf("a retirement makes %d writes; the test expects more", total)
	}
	for at := 1; at <= total; at++ {
		t.Run(fmt.Sprintf("after write %d of %d", at, total), func(t *testing.T) {
			w := newWorld(t)
			crt := &crashRuntime{Runtime: w.runtime(cpuHost), at: at}
			if res, err := w.retireOn(t, crt, w.request(cpuHost, retirement.Params{})); err == nil || !crt.tripped {
				t.Fatalf("the crashed run: %+v, %v (tripped %v)", res, err, crt.tripped)
			}
			res, err := w.retire(t, cpuHost, retirement.Params{})
			if err != nil || !res.Retired {
				t.Fatalf("the rerun after a crash at write %d: %+v, %v", at, res, err)
			}
			w.checkRetired(t, cpuHost, res)
			seen := map[string]int{}
			for _, id := range w.heard.ids() {
				seen[id]++
			}
			for _, stage := range retirement.Stages {
				if seen[res.Run+"/"+stage] == 0 {
					t.Fatalf("the run %s never fired %s: %v", res.Run, stage, w.heard.ids())
				}
			}
			after := w.site.Calls()
			if _, err := w.retire(t, cpuHost, retirement.Params{}); err != nil {
				t.Fatal(err)
			}
			if d := w.site.Calls().Sub(after); d.Writes() != 0 {
				t.Fatalf("the run after the converged one wrote %s (%v)", d, writeOps(d))
			}
		})
	}
}

// The DHCP reservation's removal is rolled back when the service's config
// test refuses the configuration, and the retirement stops there, the node
// already gone; the rerun after the fix finishes.
func TestDHCPRefusalStopsTheRetirement(t *testing.T) {
	w := newWorld(t)
	broken := path.Join(w.site.DHCP.Config().Dir, "broken.conf")
	w.site.DHCP.PutFile(broken, []byte("host broken {\n"))
	res, err := w.retire(t, cpuHost, retirement.Params{})
	if !dhcp.ConfigRejected.Is(err) {
		t.Fatalf("%+v, %v; want DHCP_CONFIG_REJECTED", res, err)
	}
	if f, _ := hostforge.AsFailure(err); f.Phase != dhcp.RemovePhaseName {
		t.Fatalf("phase %q", f.Phase)
	}
	if _, ok := w.site.DHCP.File(w.dhcpFile(cpuHost)); !ok {
		t.Fatal("the reservation was not restored")
	}
	if d, _ := w.site.NetBox.Device(context.Background(), cpuHost); d.Status != intent.StatusDecommissioning {
		t.Fatalf("NetBox %s after a failed retirement", d.Status)
	}
	if _, ok := w.instance(cpuHost).Node(cpuHost); ok {
		t.Fatal("the node is back")
	}
	w.site.DHCP.RemoveFile(broken)
	again, err := w.retire(t, cpuHost, retirement.Params{})
	if err != nil {
		t.Fatal(err)
	}
	w.checkRetired(t, cpuHost, again)
}
