package fleetsim

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/retirement"
)

// The retire pass: the other end of the lifecycle over the fleet. Every
// host is enrolled (and its completion proven in the ledger); then half of
// them are decommissioned in NetBox and retired concurrently — a share of
// those with a tenant's instance on their node, which the retirement must
// refuse untouched — through the retirement workflow with real extension
// dispatch on the same runtime; the retired hosts are retired again (which
// must write nothing); and finally they are staged again and re-enrolled.
//
// Invariants, checked after each pass:
//
//   - a node with an instance is never touched: the retirement fails with
//     RETIRE_NODE_IN_USE, and neither the node (its write log), its DHCP
//     reservation, its BMC's monitoring user, its vault item, its ledger
//     record nor its NetBox record changed;
//   - no DHCP reservation outlives its node: a host without a node has no
//     reservation on the DHCP server nor loaded by its service;
//   - a retired host is out everywhere: no node, no monitoring user, its
//     credential archived, no proof nor platform class, offline in NetBox
//     with its run journaled and announced, its two events delivered once;
//   - a retired host's rerun writes nothing, to any system, and fires
//     nothing;
//   - a re-enrolled host ends available with a fresh credential: a new
//     per-host password the BMC takes (the archived one restored, for a
//     Supermicro BMC, which has no password setup).

// RetireOptions tune the pass.
type RetireOptions struct {
	// Share of the hosts retired (default 0.5).
	Share float64
	// InUse is the share of the retiring hosts whose node holds a tenant's
	// instance (default 0.05).
	InUse float64
	// Wall measures wall times (nil: not measured).
	Wall clock.Clock
	// Enroll are the options of the enrollment passes.
	Enroll Options
}

// RetireReport is the pass's figures and broken promises.
type RetireReport struct {
	Hosts    int `json:"hosts"`
	Retiring int `json:"retiring"`
	InUse    int `json:"in_use"`
	// Enroll, Retire, Rerun and Reenroll are the four passes.
	Enroll   PassFigures `json:"enroll"`
	Retire   PassFigures `json:"retire"`
	Rerun    PassFigures `json:"retire_rerun"`
	Reenroll PassFigures `json:"reenroll"`
	// Deliveries counts the extension deliveries of the retire pass.
	Deliveries int      `json:"deliveries"`
	Violations []string `json:"violations"`
}

// PassFigures are one pass's figures.
type PassFigures struct {
	Hosts        int                `json:"hosts"`
	WallSeconds  float64            `json:"wall_seconds"`
	PeakHeapMiB  float64            `json:"peak_heap_mib"`
	CallsPerHost map[string]PerHost `json:"calls_per_host"`
	Writes       int                `json:"writes"`
	// Outcomes counts the hosts by how they ended ("ok" or a code).
	Outcomes map[string]int `json:"outcomes"`
}

func figures(n int, calls fakes.Calls, wall time.Duration, heap uint64, outcomes map[string]int) PassFigures {
	p := PassFigures{Hosts: n, WallSeconds: wall.Seconds(), PeakHeapMiB: float64(heap) / (1 << 20), CallsPerHost: map[string]PerHost{}, Writes: calls.Writes(), Outcomes: outcomes}
	for sys, t := range calls {
		if n > 0 {
			p.CallsPerHost[sys] = PerHost{Reads: float64(t.Reads) / float64(n), Writes: float64(t.Writes) / float64(n)}
		}
	}
	return p
}

func enrollFigures(st RunStats) PassFigures {
	out := map[string]int{}
	for _, o := range st.Outcomes {
		switch {
		case EndedOK(o, st.Config.IronicEnrol):
			out["ok"]++
		case o.Failure != nil:
			out[o.Failure.Code]++
		default:
			out["NOT_ENDED"]++
		}
	}
	return figures(len(st.Outcomes), st.Calls, st.Wall, st.PeakHeap, out)
}

// hostState is what the invariants compare of one host before and after.
type hostState struct {
	nodeWrites  int
	node        bool
	reservation bool
	monitoring  bool
	admin       map[string]string
	status      intent.Status
	journal     int
	proof       bool
	class       string
}

// retireRig is the retirement's executor and dispatch over the fleet.
type retireRig struct {
	steps flow.Steps
	wf    retirement.Workflow
	cfg   retirement.SiteConfig
	log   *slog.Logger
}

func (f *Fleet) retireRig(o Options) retireRig {
	log := slog.New(slog.DiscardHandler)
	rx := enrolltest.RetireExecutor(f.Site, log)
	rx.Secrets = hostforge.NewSecrets()
	if r, ok := rx.BMC.(*bmc.Retirer); ok {
		r.Clock, r.Secrets = f.Clock, rx.Secrets
	}
	// A DNS extension bound to both stages, delivered by a fake runner.
	def := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "dns", "label": "dns", "extensionType": "workflow",
 "vendor": "sim", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverDecommissioned", "tasks": [{"label": "forget", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "https://dns.sim/forget", "method": "POST", "requestTemplate": "{{ server.netboxDevice }}"}}]},
  {"stage": "serverDeleteDNS", "tasks": [{"label": "delete-record", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "https://dns.sim/delete", "method": "POST", "requestTemplate": "{{ serverDNSRecordSet.fqdn }}"}}]}]}`
	x, problems := extensions.Parse([]byte(def), "dns.json")
	if len(problems) > 0 {
		panic(fmt.Sprint(problems))
	}
	reg, err := extensions.NewRegistry(x)
	if err != nil {
		panic(err)
	}
	d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: extensionsfake.NewRunner()}, extensionsfake.NewStore())
	steps, err := flow.Merge(rx, d)
	if err != nil {
		panic(err)
	}
	cfg := enrolltest.RetireSiteConfig(*o.SiteConfig)
	cfg.Events, cfg.DNSZone = true, retirement.DNSZone{Name: "sim.example.net"}
	return retireRig{steps: steps, wf: retirement.Workflow{Announce: announce}, cfg: cfg, log: log}
}

// announce is the extension dispatch the wiring does (adapters/wiring
// builds the events the same way; the simulator stays below the adapters):
// serverDecommissioned with the NetBox device, serverDeleteDNS with the
// BMC's name.
func announce(ctx context.Context, rt flow.Runtime, a retirement.Announcement) ([]retirement.Delivery, error) {
	var payload string
	switch a.Stage {
	case retirement.StageDecommissioned:
		payload = fmt.Sprintf(`{"server": {"netboxDevice": %q, "serverStatus": "decommissioned"}}`, a.Host.Device.Name)
	default:
		payload = fmt.Sprintf(`{"serverDNSRecordSet": {"hostname": %q, "fqdn": %q, "operation": "delete"}}`, a.Host.BMCHostname, a.Host.BMCHostname+"."+a.Host.Zone.Name)
	}
	ev, _, err := extensions.NewEvent(a.ID, extensions.Stage(a.Stage), []byte(payload))
	if err != nil {
		return nil, err
	}
	rep, err := extensions.Fire(ctx, rt, ev)
	var out []retirement.Delivery
	for _, d := range rep.Deliveries {
		out = append(out, retirement.Delivery{Event: rep.EventID, Stage: a.Stage, Extension: d.Extension, Task: d.Task, DeliveryID: d.DeliveryID, Status: string(d.Status), Code: d.Code})
	}
	return out, err
}

// retireOutcome is how one host's retirement ended.
type retireOutcome struct {
	Device  string
	Result  retirement.Result
	Failure *hostforge.Failure
	Panic   any
}

// runRetire retires hosts concurrently on the fleet's virtual time.
func (f *Fleet) runRetire(ctx context.Context, rig retireRig, hosts []string, runs map[string]string) ([]retireOutcome, *heapSampler) {
	heap := newHeapSampler()
	out := make([]retireOutcome, len(hosts))
	f.Clock.Each(len(hosts), 0, func(i int) {
		name := hosts[i]
		o := &out[i]
		o.Device = name
		defer func() {
			if p := recover(); p != nil {
				o.Panic = p
			}
		}()
		h, _ := f.Site.Host(name)
		rt := &flow.Local{Steps: rig.steps, Clock: f.Clock, Log: rig.log, Subject: name, SubjectKey: "device", OnEvent: func(flow.Event) { heap.tick() }}
		req := retirement.NewRequest(name, h.Spec.Class, SiteSlug, runs[name], "fm-"+name, rig.cfg, retirement.Params{})
		res, err := rig.wf.Run(ctx, rt, req)
		o.Result = res
		if err != nil {
			_, o.Failure, _ = hostforge.Classify(err)
		}
	})
	heap.read()
	return out, heap
}

func (f *Fleet) instanceOf(name string) *fakes.Ironic {
	h, _ := f.Site.Host(name)
	return f.Site.Ironic[SiteConfig().IronicInstances[h.Spec.Class]]
}

// state reads a host's state; loaded is the DHCP service's loaded files
// (DHCPServer.Loaded, read once per check: it copies the whole map).
func (f *Fleet) state(name string, loaded map[string]string) hostState {
	var s hostState
	ir := f.instanceOf(name)
	if _, ok := ir.Node(name); ok {
		s.node = true
		s.nodeWrites = len(ir.Writes(name))
	}
	dir := f.Site.DHCP.Config().Dir
	file := path.Join(dir, name+f.Site.DHCP.Config().Flavour.Extension())
	_, s.reservation = f.Site.DHCP.File(file)
	if _, live := loaded[path.Base(file)]; live {
		s.reservation = true
	}
	mon, _ := f.Site.Vault.Peek(fakes.MonitoringItem)
	if b, ok := f.Site.BMCs.Of(name); ok {
		s.monitoring = b.HasAccount(mon[bmc.FieldUsername])
	}
	s.admin, _ = f.Site.Vault.Peek(fakes.AdminItem(name))
	d, _ := f.Site.NetBox.Device(context.Background(), name)
	s.status = d.Status
	s.journal = len(f.Site.NetBox.Journal(name))
	r, _ := f.Site.Proofs.Record(name)
	s.proof, s.class = r.Proof != nil, f.Site.FleetManager.Get(name)
	return s
}

func setStatus(site *fakes.Site, names []string, s intent.Status) {
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		for _, n := range names {
			st.DeviceByName(n).Status = string(s)
		}
		return nil
	})
}

// RetirePass runs enroll → retire (a share) → retire again → re-enroll
// over the fleet and checks the pass's invariants. The fleet must be
// healthy (Config.Broken 0).
func (f *Fleet) RetirePass(ctx context.Context, o RetireOptions) RetireReport {
	if o.Share <= 0 {
		o.Share = 0.5
	}
	if o.InUse <= 0 {
		o.InUse = 0.05
	}
	eo := f.Prepare(o.Enroll)
	eo.Wall = o.Wall
	rep := RetireReport{Hosts: len(f.Names)}
	bad := func(format string, args ...any) {
		rep.Violations = append(rep.Violations, fmt.Sprintf(format, args...))
	}

	// 1. Enroll everything; the ledger proves each enrollment, as
	// settlement does.
	enrolled := f.Run(ctx, eo)
	rep.Enroll = enrollFigures(enrolled)
	for _, h := range enrolled.Outcomes {
		if !EndedOK(h, enrolled.Config.IronicEnrol) {
			bad("enroll %s: did not reach the end state: %v", h.Device, h.Failure)
			continue
		}
		ref := h.Result.Instance + "/" + h.Result.Node
		f.Site.Proofs.Register(h.Device, "fm-"+h.Device)
		f.Site.Proofs.SetReference(h.Device, ref)
		if _, err := f.Site.Proofs.ProveEnrollment(ctx, h.Device, "fm-"+h.Device, ref, 0, "enroll", f.Clock.Now().Add(time.Hour)); err != nil {
			bad("enroll %s: proof: %v", h.Device, err)
		}
	}

	// 2. Decommission a share; a share of those has a tenant on its node.
	var retiring, inUse []string
	held := map[string]bool{}
	step := max(1, int(1/o.Share))
	for i, name := range f.Names {
		if i%step != 0 {
			continue
		}
		retiring = append(retiring, name)
		if float64(len(inUse)) < o.InUse*float64(len(retiring)) {
			inUse = append(inUse, name)
			held[name] = true
			f.instanceOf(name).SetInstance(name, fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		}
	}
	rep.Retiring, rep.InUse = len(retiring), len(inUse)
	setStatus(f.Site, retiring, intent.StatusDecommissioning)
	before := map[string]hostState{}
	loaded := f.Site.DHCP.Loaded()
	for _, name := range inUse {
		before[name] = f.state(name, loaded)
	}
	runs := map[string]string{}
	for i, name := range retiring {
		runs[name] = fmt.Sprintf("retire-sim-%05d", i)
	}

	rig := f.retireRig(eo)
	calls0 := f.Site.Calls()
	start := time.Time{}
	if o.Wall != nil {
		start = o.Wall.Now()
	}
	outs, heap := f.runRetire(ctx, rig, retiring, runs)
	wall := time.Duration(0)
	if o.Wall != nil {
		wall = o.Wall.Now().Sub(start)
	}
	counts := map[string]int{}
	var retired []string
	for _, r := range outs {
		switch {
		case r.Panic != nil:
			bad("retire %s: panic: %v", r.Device, r.Panic)
			counts["PANIC"]++
		case held[r.Device]:
			if r.Failure == nil || r.Failure.Code != retirement.NodeInUse.Code || r.Failure.Owner != hostforge.OwnerTenant {
				bad("retire %s: a tenant's node ended %v, want RETIRE_NODE_IN_USE (TENANT)", r.Device, r.Failure)
			}
			counts[hostforge.CodeOf(r.Failure)]++
		case r.Failure != nil:
			bad("retire %s: %v", r.Device, r.Failure)
			counts[r.Failure.Code]++
		default:
			counts["ok"]++
			retired = append(retired, r.Device)
			rep.Deliveries += len(r.Result.Deliveries)
			if len(r.Result.Deliveries) != 2 || r.Result.Deliveries[0].Event != runs[r.Device]+"/"+retirement.StageDecommissioned {
				bad("retire %s: deliveries %+v, want the run's two events", r.Device, r.Result.Deliveries)
			}
		}
	}
	rep.Retire = figures(len(retiring), f.Site.Calls().Sub(calls0), wall, heap.peak, counts)

	// The invariants after the retirement.
	loaded = f.Site.DHCP.Loaded()
	for _, name := range inUse {
		if now := f.state(name, loaded); !equalState(now, before[name]) {
			bad("retire %s: a node with an instance was touched: before %+v, after %+v", name, before[name], now)
		}
	}
	for _, name := range retired {
		s := f.state(name, loaded)
		arch, archived := f.Site.Vault.Peek(bmc.ArchivedItem(fakes.AdminItem(name)))
		j := retirement.ReadJournal(f.Site.NetBox.Journal(name))
		switch {
		case s.node, s.monitoring, s.admin != nil, s.proof, s.class != "":
			bad("retire %s: not out everywhere: %+v", name, s)
		case !archived || arch[bmc.FieldPassword] == "":
			bad("retire %s: no archived credential", name)
		case s.status != intent.StatusOffline || !j.HasRetired(runs[name]) || !j.HasAnnounced(runs[name]):
			bad("retire %s: NetBox %s, journal %+v", name, s.status, j)
		}
	}
	f.checkReservations(bad)

	// 3. Retire the retired hosts again: nothing written, nothing fired.
	calls0 = f.Site.Calls()
	again := map[string]string{}
	for _, name := range retired {
		again[name] = "retire-sim-rerun-" + name
	}
	if o.Wall != nil {
		start = o.Wall.Now()
	}
	routs, rheap := f.runRetire(ctx, rig, retired, again)
	if o.Wall != nil {
		wall = o.Wall.Now().Sub(start)
	}
	counts = map[string]int{}
	for _, r := range routs {
		switch {
		case r.Failure != nil || r.Panic != nil:
			bad("retire rerun %s: %v %v", r.Device, r.Failure, r.Panic)
			counts[hostforge.CodeOf(r.Failure)]++
		case r.Result.Run != runs[r.Device] || len(r.Result.Deliveries) != 0:
			bad("retire rerun %s: run %s, %d deliveries; want the first run resumed and nothing fired", r.Device, r.Result.Run, len(r.Result.Deliveries))
		default:
			counts["ok"]++
		}
	}
	rep.Rerun = figures(len(retired), f.Site.Calls().Sub(calls0), wall, rheap.peak, counts)
	if rep.Rerun.Writes != 0 {
		bad("retire rerun: %d writes (%s), want none", rep.Rerun.Writes, f.Site.Calls().Sub(calls0))
	}

	// 4. The retired hosts come back: staged again, and enrolled.
	archived := map[string]string{}
	for _, name := range retired {
		arch, _ := f.Site.Vault.Peek(bmc.ArchivedItem(fakes.AdminItem(name)))
		archived[name] = arch[bmc.FieldPassword]
	}
	setStatus(f.Site, retired, intent.StatusStaged)
	eo.Hosts = retired
	back := f.Run(ctx, eo)
	rep.Reenroll = enrollFigures(back)
	for _, h := range back.Outcomes {
		if !EndedOK(h, back.Config.IronicEnrol) {
			bad("re-enroll %s: %v (state %s)", h.Device, h.Failure, h.Result.ProvisionState)
			continue
		}
		admin, _ := f.Site.Vault.Peek(fakes.AdminItem(h.Device))
		b, _ := f.Site.BMCs.Of(h.Device)
		fresh := admin[bmc.FieldPassword] != archived[h.Device]
		if b.Vendor() == "supermicro" {
			fresh = admin[bmc.FieldPassword] == archived[h.Device] // restored: no password setup
		}
		if admin[bmc.FieldPassword] == "" || !fresh || b.Password(admin[bmc.FieldUsername]) != admin[bmc.FieldPassword] {
			bad("re-enroll %s: per-host credential set %v, fresh %v, taken by the BMC %v: want a fresh one the BMC takes",
				h.Device, admin[bmc.FieldPassword] != "", fresh, b.Password(admin[bmc.FieldUsername]) == admin[bmc.FieldPassword])
		}
	}
	f.checkReservations(bad)
	if rep.Violations == nil {
		rep.Violations = []string{}
	}
	return rep
}

// checkReservations: no DHCP reservation outlives its node, on the server
// or in the service's loaded configuration.
func (f *Fleet) checkReservations(bad func(string, ...any)) {
	cfg := f.Site.DHCP.Config()
	loaded := f.Site.DHCP.Loaded()
	for _, name := range f.Names {
		if _, ok := f.instanceOf(name).Node(name); ok {
			continue
		}
		file := path.Join(cfg.Dir, name+cfg.Flavour.Extension())
		_, held := f.Site.DHCP.File(file)
		_, live := loaded[path.Base(file)]
		if held || live {
			bad("%s: a DHCP reservation outlives its node (on the server %v, loaded %v)", name, held, live)
		}
	}
}

func equalState(a, b hostState) bool {
	return a.node == b.node && a.nodeWrites == b.nodeWrites && a.reservation == b.reservation && a.monitoring == b.monitoring &&
		maps.Equal(a.admin, b.admin) && a.status == b.status && a.journal == b.journal && a.proof == b.proof && a.class == b.class
}
