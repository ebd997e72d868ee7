package enrollment_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/ironic"
)

// nodes is a node lister with a fixed answer.
type nodes struct {
	list []ironic.Node
	err  error
}

func (n *nodes) ListNodes(ctx context.Context) ([]ironic.Node, error) { return n.list, n.err }

func node(name, uuid string) ironic.Node { return ironic.Node{Name: name, UUID: uuid} }

func TestProjectorPass(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		before      map[string]string
		gpu, cpu    *nodes
		want        map[string]string
		wantChanges int
		wantCode    string
		ambiguous   []string
	}{
		{name: "new nodes are projected",
			gpu:  &nodes{list: []ironic.Node{node("g1", "u-g1")}},
			cpu:  &nodes{list: []ironic.Node{node("c1", "u-c1"), {UUID: "u-unnamed"}}},
			want: map[string]string{"g1": "ironic-gpu/u-g1", "c1": "ironic-cpu/u-c1"}, wantChanges: 2},
		{name: "an unchanged projection writes nothing",
			before: map[string]string{"g1": "ironic-gpu/u-g1"},
			gpu:    &nodes{list: []ironic.Node{node("g1", "u-g1")}}, cpu: &nodes{},
			want: map[string]string{"g1": "ironic-gpu/u-g1"}},
		{name: "a new node UUID moves the reference",
			before: map[string]string{"g1": "ironic-gpu/u-old"},
			gpu:    &nodes{list: []ironic.Node{node("g1", "u-new")}}, cpu: &nodes{},
			want: map[string]string{"g1": "ironic-gpu/u-new"}, wantChanges: 1},
		{name: "a node gone from a listed instance projects no node",
			before: map[string]string{"g1": "ironic-gpu/u-g1", "c1": "ironic-cpu/u-c1"},
			gpu:    &nodes{}, cpu: &nodes{list: []ironic.Node{node("c1", "u-c1")}},
			want: map[string]string{"g1": "", "c1": "ironic-cpu/u-c1"}, wantChanges: 1},
		{name: "a node moving between instances",
			before: map[string]string{"g1": "ironic-cpu/u-g1"},
			gpu:    &nodes{list: []ironic.Node{node("g1", "u-g2")}}, cpu: &nodes{},
			want: map[string]string{"g1": "ironic-gpu/u-g2"}, wantChanges: 1},
		{name: "an instance that cannot be listed keeps its devices' references",
			before: map[string]string{"g1": "ironic-gpu/u-g1", "c1": "ironic-cpu/u-c1"},
			gpu:    &nodes{err: hostforge.ErrUnavailable}, cpu: &nodes{list: []ironic.Node{node("c1", "u-c2")}},
			want: map[string]string{"g1": "ironic-gpu/u-g1", "c1": "ironic-cpu/u-c2"}, wantChanges: 1, wantCode: enrollment.ProjectionListFailed.Code},
		{name: "a device name on two instances is ambiguous and left alone",
			before: map[string]string{"x1": "ironic-gpu/u-a"},
			gpu:    &nodes{list: []ironic.Node{node("x1", "u-a")}}, cpu: &nodes{list: []ironic.Node{node("x1", "u-b")}},
			want: map[string]string{"x1": "ironic-gpu/u-a"}, ambiguous: []string{"x1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := fakes.NewSite()
			for d, ref := range tt.before {
				site.Proofs.Register(d, "id-"+d)
				site.Proofs.SetReference(d, ref)
			}
			p := &enrollment.Projector{Instances: map[string]enrollment.NodeLister{"ironic-gpu": tt.gpu, "ironic-cpu": tt.cpu}, Ledger: site.Proofs}
			before := site.Calls()
			rep, err := p.Project(ctx)
			if hostforge.CodeOf(err) != tt.wantCode {
				t.Fatalf("Project error %v, want code %q", err, tt.wantCode)
			}
			got := map[string]string{}
			for _, d := range site.Proofs.Devices() {
				r, _ := site.Proofs.Record(d)
				got[d] = r.Reference
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("projection %v, want %v", got, tt.want)
			}
			if len(rep.Changes) != tt.wantChanges || !reflect.DeepEqual(rep.Ambiguous, tt.ambiguous) {
				t.Fatalf("report %+v, want %d changes and ambiguous %v", rep, tt.wantChanges, tt.ambiguous)
			}
			if w := site.Calls().Sub(before)[fakes.SysFleetManager].Writes; w != tt.wantChanges {
				t.Fatalf("%d ledger writes for %d changes", w, tt.wantChanges)
			}
		})
	}
}

func TestProjectorLedgerDown(t *testing.T) {
	site := fakes.NewSite()
	site.Inject(fakes.SysFleetManager, "*", 10, hostforge.ErrUnavailable)
	p := &enrollment.Projector{Instances: map[string]enrollment.NodeLister{"ironic-gpu": &nodes{list: []ironic.Node{node("g1", "u")}}}, Ledger: site.Proofs}
	_, err := p.Project(context.Background())
	f, ok := hostforge.AsFailure(err)
	if !ok || f.Code != enrollment.FleetManagerUnavailable.Code || f.Phase != enrollment.PhaseProjection || !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("ledger down: %v, want FLEET_MANAGER_UNAVAILABLE in %s", err, enrollment.PhaseProjection)
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.Instances["ironic-gpu"] = enrolltest.SiteNodes{Site: site, Instance: "ironic-gpu"}
	if _, err := p.Project(cctx); hostforge.CodeOf(err) != hostforge.Cancelled.Code {
		t.Fatalf("cancelled pass: %v", err)
	}
}

// TestProofAgainstTheProjection enrolls a host on the fake site, lets the
// projector read the node from the fake Ironic into the ledger, and
// settles the run against that view — never against the result it checks.
// A new node UUID for the device in the next pass then clears the proof.
func TestProofAgainstTheProjection(t *testing.T) {
	site := enrolltest.DemoRack()
	exec := enrolltest.Executor(site, nil)
	ctx := context.Background()
	const host = "cpu-r1-u10"
	site.Proofs.Register(host, "id-1")
	_, since, err := site.Proofs.Snapshot(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	req, err := enrollment.Submit(ctx, site.NetBox, host, enrollment.SubmitOptions{Site: "lab1", Config: enrolltest.DemoSiteConfig(), PlatformClassReady: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := enrollment.Enroll(ctx, &flow.Local{Steps: exec, Clock: site.Clock}, req)
	if err != nil {
		t.Fatal(err)
	}
	proj := enrolltest.Projector(site)
	rep, err := proj.Project(ctx)
	if err != nil || len(rep.Changes) == 0 {
		t.Fatalf("projection after the enrollment: %+v, %v", rep, err)
	}
	out, _ := json.Marshal(res)
	c := enrollment.Completion{Device: host, Identity: "id-1", Since: since, Run: "run-1", Status: enrollment.CompletionCompleted, ClosedAt: site.Clock.Now(), Output: out}
	agent := &enrollment.ProofAgent{Store: site.Proofs, Clock: site.Clock}
	got, err := agent.Settle(ctx, c)
	if err != nil || got.Action != enrollment.ProofEstablished {
		t.Fatalf("settle = %+v, %v", got, err)
	}
	rec, _ := site.Proofs.Record(host)
	n, _ := site.Ironic[res.Instance].Node(host)
	if !rec.Valid() || rec.Reference != res.Instance+"/"+n.UUID {
		t.Fatalf("record %+v: proof of the projected node %s", rec, n.UUID)
	}

	// The node is replaced in Ironic (a new UUID): the projection moves and
	// the proof is gone.
	flipped := &nodes{list: []ironic.Node{node(host, "replaced-"+n.UUID)}}
	proj.Instances[res.Instance] = flipped
	if _, err := proj.Project(ctx); err != nil {
		t.Fatal(err)
	}
	if rec, _ := site.Proofs.Record(host); rec.Proof != nil || rec.Reference != res.Instance+"/replaced-"+n.UUID {
		t.Fatalf("after the node flip: %+v proof %+v", rec, rec.Proof)
	}
	// A result claiming a node Ironic does not have never proves.
	c.Run = "run-2"
	c.ClosedAt = site.Clock.Now()
	agent.Window = enrollment.DefaultProofInterval * 2
	if got, err := agent.Settle(ctx, c); hostforge.CodeOf(err) != enrollment.ProofRejected.Code {
		t.Fatalf("settle of the old node after the flip: %+v, %v", got, err)
	}
}

// TestProjectorRunEvery: passes repeat on the clock until the context ends,
// and a failed pass does not stop the next.
func TestProjectorRunEvery(t *testing.T) {
	site := fakes.NewSite()
	lister := &countingNodes{nodes: nodes{list: []ironic.Node{node("g1", "u1")}}}
	p := &enrollment.Projector{Instances: map[string]enrollment.NodeLister{"ironic-gpu": lister}, Ledger: site.Proofs}
	site.Inject(fakes.SysFleetManager, "projected_references", 1, hostforge.ErrUnavailable)
	ctx, cancel := context.WithCancel(context.Background())
	clk := &cancelAfter{Fake: clock.NewFake(clock.Epoch), n: 3, cancel: cancel}
	if err := p.RunEvery(ctx, clk, 30*time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunEvery = %v", err)
	}
	if lister.calls != 3 || clk.Now().Sub(clock.Epoch) != 90*time.Second {
		t.Fatalf("%d passes over %s, want 3 passes 30s apart", lister.calls, clk.Now().Sub(clock.Epoch))
	}
	if r, _ := site.Proofs.Record("g1"); r.Reference != "ironic-gpu/u1" {
		t.Fatalf("the pass after a failed one did not project: %+v", r)
	}
}

type countingNodes struct {
	nodes
	calls int
}

func (c *countingNodes) ListNodes(ctx context.Context) ([]ironic.Node, error) {
	c.calls++
	return c.nodes.ListNodes(ctx)
}

// cancelAfter cancels the context on its n-th sleep.
type cancelAfter struct {
	*clock.Fake
	n      int
	cancel func()
}

func (c *cancelAfter) Sleep(ctx context.Context, d time.Duration) error {
	if err := c.Fake.Sleep(ctx, d); err != nil {
		return err
	}
	if c.n--; c.n == 0 {
		c.cancel()
		return ctx.Err()
	}
	return nil
}

// observed records what a projection pass showed its observer.
type observed map[string]int

func (o observed) ObserveNodes(_ context.Context, instance string, nodes []ironic.Node) {
	o[instance] += len(nodes)
}

// The observer is shown each listed instance's nodes, and not an instance
// that could not be listed.
func TestProjectorShowsTheObserverEachListedInstance(t *testing.T) {
	site := fakes.NewSite()
	obs := observed{}
	p := &enrollment.Projector{Ledger: site.Proofs, Observer: obs, Instances: map[string]enrollment.NodeLister{
		"ironic-gpu": &nodes{list: []ironic.Node{node("g1", "u-g1"), node("g2", "u-g2")}},
		"ironic-cpu": &nodes{err: hostforge.ErrUnavailable},
	}}
	if _, err := p.Project(context.Background()); !enrollment.ProjectionListFailed.Is(err) {
		t.Fatalf("Project: %v", err)
	}
	if !reflect.DeepEqual(obs, observed{"ironic-gpu": 2}) {
		t.Fatalf("observer saw %v, want the gpu instance's two nodes", obs)
	}
}
