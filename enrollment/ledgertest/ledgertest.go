package ledgertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/platformclass"
	"github.com/hostforge/hostforge/retirement"
)

// Ledger is one ledger under test and the hooks the suite drives it with.
type Ledger struct {
	Proofs     enrollment.ProofStore
	References enrollment.ReferenceLedger
	Fleet      enrollment.FleetManager
	// SetIdentity gives the device the identity, recording the device if it
	// is new (how the fleet manager learns of a device, and a hardware
	// replacement). Existing proof stays, as stale metadata when the
	// identity changes.
	SetIdentity func(ctx context.Context, device, identity string) error
	// Inspect reads the device's whole record.
	Inspect func(ctx context.Context, device string) (Record, error)
	// Now is the ledger's own clock, the one it judges deadlines by.
	Now func() time.Time
	// Down makes the ledger unreachable for the rest of the subtest (the
	// fake injects faults; the SQL ledger closes its database).
	Down func()
	// Retire is the ledger's retirement side (retirement.Ledger); nil
	// skips its cases.
	Retire retirement.Ledger
}

// Record is a device's ledger record as the suite compares it.
type Record struct {
	Identity      string
	Reference     string
	Revision      int64
	PlatformClass string
	// Version increases on every write that changes the record; a write
	// that changes nothing leaves it.
	Version int64
	// Proof is nil when the device has none.
	Proof *Proof
}

// Proof is the established proof of a record.
type Proof struct {
	Identity  string
	Reference string
	Revision  int64
	Run       string
}

// Valid reports whether the record's proof holds for its current identity,
// reference and revision.
func (r Record) Valid() bool {
	p := r.Proof
	return p != nil && p.Identity == r.Identity && p.Reference == r.Reference && p.Revision == r.Revision
}

const (
	refA = "ironic-gpu/11111111-1111-1111-1111-111111111111"
	refB = "ironic-gpu/22222222-2222-2222-2222-222222222222"
)

// Run runs the suite; newLedger is called once per subtest and returns an
// empty ledger.
func Run(t *testing.T, newLedger func(t *testing.T) Ledger) {
	tests := []struct {
		name string
		fn   func(t *testing.T, l Ledger)
	}{
		{"snapshot", testSnapshot},
		{"compare-and-set against the projection", testCompareAndSet},
		{"reference changes clear proof with a revision", testChangesClear},
		{"A to B to A inside the window leaves no proof", testABA},
		{"identity-guarded failure writes", testFailureWrites},
		{"diagnostic and unclassifiable completions write nothing", testNoWrite},
		{"platform_class get and set", testPlatformClass},
		{"two writers racing the same compare-and-set: exactly one wins", testRace},
		{"no lost update under concurrent writers", testNoLostUpdate},
		{"a write after the deadline is refused by the store", testDeadline},
		{"a ledger that is down", testDown},
		{"a retirement clears proof and platform class, identity-guarded", testRetire},
		{"a retirement on a ledger that is down", testRetireDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newLedger(t)) })
	}
}

// fixture is a ledger with helpers that fail the test on setup errors.
type fixture struct {
	t   *testing.T
	l   Ledger
	ctx context.Context
}

func (f fixture) identity(device, id string) {
	f.t.Helper()
	if err := f.l.SetIdentity(f.ctx, device, id); err != nil {
		f.t.Fatalf("SetIdentity(%s, %s): %v", device, id, err)
	}
}

func (f fixture) project(device, ref string) bool {
	f.t.Helper()
	changed, err := f.l.References.ProjectReference(f.ctx, device, ref)
	if err != nil {
		f.t.Fatalf("ProjectReference(%s, %q): %v", device, ref, err)
	}
	return changed
}

func (f fixture) record(device string) Record {
	f.t.Helper()
	r, err := f.l.Inspect(f.ctx, device)
	if err != nil {
		f.t.Fatalf("Inspect(%s): %v", device, err)
	}
	return r
}

func (f fixture) snapshot(device string) (string, int64) {
	f.t.Helper()
	id, rev, err := f.l.Proofs.Snapshot(f.ctx, device)
	if err != nil {
		f.t.Fatalf("Snapshot(%s): %v", device, err)
	}
	return id, rev
}

func (f fixture) later() time.Time { return f.l.Now().Add(time.Hour) }

func (f fixture) prove(device, id, ref string, since int64, run string) (string, error) {
	return f.l.Proofs.ProveEnrollment(f.ctx, device, id, ref, since, run, f.later())
}

func fix(t *testing.T, l Ledger) fixture {
	return fixture{t: t, l: l, ctx: context.Background()}
}

func testSnapshot(t *testing.T, l Ledger) {
	f := fix(t, l)
	if _, _, err := l.Proofs.Snapshot(f.ctx, "ghost"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("Snapshot of an unknown device: %v, want ErrNotFound", err)
	}
	f.identity("h1", "id1")
	id, rev := f.snapshot("h1")
	if id != "id1" || rev != 0 {
		t.Fatalf("Snapshot = %q rev %d, want id1 rev 0", id, rev)
	}
	f.project("h1", refA)
	if _, rev := f.snapshot("h1"); rev != 1 {
		t.Fatalf("revision after one projection = %d, want 1", rev)
	}
	// The projector records a device it learns of from Ironic.
	f.project("h2", refB)
	if id, rev := f.snapshot("h2"); id == "" || rev != 1 {
		t.Fatalf("a device first seen by the projector: identity %q rev %d", id, rev)
	}
	refs, err := l.References.ProjectedReferences(f.ctx)
	if err != nil || refs["h1"] != refA || refs["h2"] != refB {
		t.Fatalf("ProjectedReferences = %v, %v", refs, err)
	}
}

func testCompareAndSet(t *testing.T, l Ledger) {
	f := fix(t, l)
	f.identity("h1", "id1")
	_, since := f.snapshot("h1")
	f.project("h1", refA)
	tests := []struct {
		name     string
		device   string
		identity string
		ref      string
		since    int64
		deadline time.Time
		want     error
	}{
		{"reference does not match the projection", "h1", "id1", refB, since, f.later(), hostforge.ErrConflict},
		{"identity is not the device's", "h1", "id0", refA, since, f.later(), hostforge.ErrNotFound},
		{"unknown device", "ghost", "id1", refA, 0, f.later(), hostforge.ErrNotFound},
		{"no identity", "h1", "", refA, since, f.later(), hostforge.ErrInvalid},
		{"no reference", "h1", "id1", "", since, f.later(), hostforge.ErrInvalid},
		{"no deadline", "h1", "id1", refA, since, time.Time{}, hostforge.ErrInvalid},
		{"a revision from the future", "h1", "id1", refA, 7, f.later(), hostforge.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.record("h1")
			_, err := l.Proofs.ProveEnrollment(f.ctx, tt.device, tt.identity, tt.ref, tt.since, "run-x", tt.deadline)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ProveEnrollment: %v, want %v", err, tt.want)
			}
			if after := f.record("h1"); after.Proof != nil || after.Version != before.Version {
				t.Fatalf("a refused compare-and-set wrote: %+v -> %+v", before, after)
			}
		})
	}
	holder, err := f.prove("h1", "id1", refA, since, "run-1")
	if err != nil || holder != "run-1" {
		t.Fatalf("matching compare-and-set: holder %q, %v", holder, err)
	}
	r := f.record("h1")
	if !r.Valid() || r.Proof.Run != "run-1" || r.Proof.Reference != refA || r.Proof.Revision != r.Revision {
		t.Fatalf("record after proof: %+v %+v", r, r.Proof)
	}
	// A retry of the same run (a lost answer) is idempotent.
	if holder, err := f.prove("h1", "id1", refA, since, "run-1"); err != nil || holder != "run-1" {
		t.Fatalf("retry: holder %q, %v", holder, err)
	}
	// A later run of the same revision learns who holds the proof.
	if holder, err := f.prove("h1", "id1", refA, since, "run-2"); err != nil || holder != "run-1" {
		t.Fatalf("second run: holder %q, %v", holder, err)
	}
	if after := f.record("h1"); after.Version != r.Version || after.Proof.Run != "run-1" {
		t.Fatalf("re-proving the same revision wrote: %+v -> %+v", r, after)
	}
}

func testChangesClear(t *testing.T, l Ledger) {
	f := fix(t, l)
	f.identity("h1", "id1")
	f.project("h1", refA)
	if _, err := f.prove("h1", "id1", refA, 0, "run-1"); err != nil {
		t.Fatal(err)
	}
	r := f.record("h1")
	if f.project("h1", refA) {
		t.Fatal("projecting the same reference reported a change")
	}
	if again := f.record("h1"); again.Version != r.Version || !again.Valid() {
		t.Fatalf("projecting the same reference wrote or cleared proof: %+v", again)
	}
	for i, ref := range []string{refB, refA, "", refA} {
		if !f.project("h1", ref) {
			t.Fatalf("change %d to %q not reported", i, ref)
		}
		got := f.record("h1")
		if got.Proof != nil || got.Revision != r.Revision+int64(i)+1 || got.Reference != ref {
			t.Fatalf("after change %d to %q: %+v proof %+v; want no proof at revision %d", i, ref, got, got.Proof, r.Revision+int64(i)+1)
		}
	}
}

func testABA(t *testing.T, l Ledger) {
	f := fix(t, l)
	f.identity("h1", "id1")
	f.project("h1", refA)
	_, since := f.snapshot("h1")
	// Inside the window the projection flips away and back before any
	// compare-and-set lands.
	f.project("h1", refB)
	f.project("h1", refA)
	if _, err := f.prove("h1", "id1", refA, since, "run-1"); !errors.Is(err, hostforge.ErrConflict) {
		t.Fatalf("proof across A -> B -> A: %v, want ErrConflict", err)
	}
	if r := f.record("h1"); r.Proof != nil {
		t.Fatalf("A -> B -> A left proof: %+v", r.Proof)
	}
	// A run submitted after the flip proves the current revision.
	_, since = f.snapshot("h1")
	if holder, err := f.prove("h1", "id1", refA, since, "run-2"); err != nil || holder != "run-2" {
		t.Fatalf("a run snapshotted after the flip: %q, %v", holder, err)
	}
	// A projection that lags, then catches up, proves once it matches.
	f.identity("h2", "id2")
	_, since = f.snapshot("h2")
	if _, err := f.prove("h2", "id2", refB, since, "run-3"); !errors.Is(err, hostforge.ErrConflict) {
		t.Fatalf("before the projection catches up: %v, want ErrConflict", err)
	}
	f.project("h2", refA)
	f.project("h2", refB)
	if holder, err := f.prove("h2", "id2", refB, since, "run-3"); err != nil || holder != "run-3" {
		t.Fatalf("after the projection caught up: %q, %v", holder, err)
	}
	// Through the agent: a completion closed at A, then A -> B -> A inside
	// the window, never establishes proof.
	f.identity("h3", "id3")
	f.project("h3", refA)
	_, since = f.snapshot("h3")
	f.project("h3", refB)
	f.project("h3", refA)
	out, err := agent(l).Settle(f.ctx, qualifying("h3", "id3", since, refA, l.Now()))
	if hostforge.CodeOf(err) != enrollment.ProofRejected.Code || out.Action != enrollment.ProofRejectedAct {
		t.Fatalf("agent across A -> B -> A: %+v, %v; want %s", out, err, enrollment.ProofRejected.Code)
	}
	if r := f.record("h3"); r.Proof != nil {
		t.Fatalf("the agent left proof across A -> B -> A: %+v", r.Proof)
	}
}

func testFailureWrites(t *testing.T, l Ledger) {
	tests := []struct {
		name string
		// setup leaves device d in a state; operated is the identity the
		// failure write names.
		setup       func(f fixture, d string)
		operated    string
		wantCleared bool
		wantProof   bool
		wantValid   bool
	}{
		{"matching current proof is preserved", func(f fixture, d string) {
			f.identity(d, "id1")
			f.project(d, refA)
			mustProve(f, d, "id1", refA)
		}, "id1", false, true, true},
		{"stale metadata is cleared when the operated identity still matches", func(f fixture, d string) {
			f.identity(d, "id0")
			f.project(d, refA)
			mustProve(f, d, "id0", refA)
			f.identity(d, "id1")
		}, "id1", true, false, false},
		{"a replacement identity is untouched", func(f fixture, d string) {
			f.identity(d, "id1")
			f.project(d, refA)
			mustProve(f, d, "id1", refA)
			f.identity(d, "id2")
		}, "id1", false, true, false},
		{"no proof: nothing to clear", func(f fixture, d string) {
			f.identity(d, "id1")
			f.project(d, refA)
		}, "id1", false, false, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fix(t, l)
			d := fmt.Sprintf("fw-%d", i) // each case on its own device
			tt.setup(f, d)
			before := f.record(d)
			cleared, err := l.Proofs.FailEnrollment(f.ctx, d, tt.operated, "run-f")
			if err != nil || cleared != tt.wantCleared {
				t.Fatalf("FailEnrollment: cleared %v, %v; want cleared %v", cleared, err, tt.wantCleared)
			}
			after := f.record(d)
			if (after.Proof != nil) != tt.wantProof || after.Valid() != tt.wantValid {
				t.Fatalf("after the failure write: %+v proof %+v", after, after.Proof)
			}
			if !tt.wantCleared && after.Version != before.Version {
				t.Fatalf("a failure write that cleared nothing wrote: version %d -> %d", before.Version, after.Version)
			}
		})
	}
	if _, err := l.Proofs.FailEnrollment(context.Background(), "ghost", "id1", "run-f"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("failure write of an unknown device: %v, want ErrNotFound", err)
	}
}

func mustProve(f fixture, device, id, ref string) {
	f.t.Helper()
	_, since := f.snapshot(device)
	if _, err := f.prove(device, id, ref, since, "run-earlier"); err != nil {
		f.t.Fatalf("proving %s: %v", device, err)
	}
}

// agent is the completion-proof agent on the ledger, on a fake clock at
// the ledger's time with a short window.
func agent(l Ledger) *enrollment.ProofAgent {
	return &enrollment.ProofAgent{Store: l.Proofs, Clock: clock.NewFake(l.Now()), Window: time.Minute, Interval: 15 * time.Second}
}

func qualifying(device, id string, since int64, ref string, closed time.Time) enrollment.Completion {
	inst, node, _ := cutRef(ref)
	res := enrollment.Result{Device: device, Instance: inst, Node: node, Enrolled: true, ProvisionState: "available",
		Phases: []enrollment.PhaseRecord{{Phase: enrollment.PhaseIronic, Status: "done"}}}
	b, _ := json.Marshal(res)
	return enrollment.Completion{Device: device, Identity: id, Since: since, Run: "wf/" + device, Status: enrollment.CompletionCompleted, ClosedAt: closed, Output: b}
}

func cutRef(ref string) (string, string, bool) {
	for i := range ref {
		if ref[i] == '/' {
			return ref[:i], ref[i+1:], true
		}
	}
	return ref, "", false
}

func testNoWrite(t *testing.T, l Ledger) {
	f := fix(t, l)
	f.identity("h1", "id0")
	f.project("h1", refA)
	mustProve(f, "h1", "id0", refA)
	f.identity("h1", "id1") // the proof is now stale metadata a failure write would clear
	_, since := f.snapshot("h1")
	good := qualifying("h1", "id1", since, refA, l.Now())
	diagnostic := good
	diagnostic.Diagnostic = true
	failedDiagnostic := diagnostic
	failedDiagnostic.Status = enrollment.CompletionFailed
	unclassifiable := good
	unclassifiable.Output = json.RawMessage(`{"enrolled": tru`)
	noIdentity := good
	noIdentity.Identity = ""
	tests := []struct {
		name string
		c    enrollment.Completion
		kind enrollment.CompletionKind
	}{
		{"diagnostic completion", diagnostic, enrollment.KindDiagnostic},
		{"failed diagnostic completion", failedDiagnostic, enrollment.KindDiagnostic},
		{"undecodable output", unclassifiable, enrollment.KindUnclassifiable},
		{"no operated identity", noIdentity, enrollment.KindUnclassifiable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.record("h1")
			out, err := agent(l).Settle(f.ctx, tt.c)
			if err != nil || out.Kind != tt.kind || out.Action != enrollment.ProofNoAction || out.Attempts != 0 {
				t.Fatalf("Settle = %+v, %v; want %s with no action", out, err, tt.kind)
			}
			after := f.record("h1")
			if after.Version != before.Version || after.Proof == nil || after.Proof.Run != before.Proof.Run {
				t.Fatalf("%s wrote: %+v -> %+v", tt.kind, before, after)
			}
		})
	}
	// The same completion, qualifying, does write: the projection matches.
	out, err := agent(l).Settle(f.ctx, good)
	if err != nil || out.Action != enrollment.ProofEstablished || !f.record("h1").Valid() {
		t.Fatalf("qualifying completion: %+v, %v", out, err)
	}
}

func testPlatformClass(t *testing.T, l Ledger) {
	f := fix(t, l)
	if v, err := l.Fleet.PlatformClass(f.ctx, "ghost"); err != nil && !errors.Is(err, hostforge.ErrNotFound) || v != "" {
		t.Fatalf("PlatformClass of an unknown device = %q, %v; want empty", v, err)
	}
	f.identity("h1", "id1")
	const key = "GB300_LENOVOHG635NV2_IB_01"
	if err := l.Fleet.SetPlatformClass(f.ctx, "h1", key); err != nil {
		t.Fatal(err)
	}
	if v, err := l.Fleet.PlatformClass(f.ctx, "h1"); err != nil || v != key {
		t.Fatalf("PlatformClass = %q, %v", v, err)
	}
	r := f.record("h1")
	if r.PlatformClass != key {
		t.Fatalf("record platform class %q", r.PlatformClass)
	}
	if err := l.Fleet.SetPlatformClass(f.ctx, "h1", key); err != nil {
		t.Fatal(err)
	}
	if again := f.record("h1"); again.Version != r.Version {
		t.Fatalf("setting an equal value wrote: version %d -> %d", r.Version, again.Version)
	}
	if err := l.Fleet.SetPlatformClass(f.ctx, "h1", "NOGPU_DELLR7615_NORDMA_01"); err != nil {
		t.Fatal(err)
	}
	if again := f.record("h1"); again.Version == r.Version || again.PlatformClass != "NOGPU_DELLR7615_NORDMA_01" {
		t.Fatalf("a different value: %+v", again)
	}
	// The platform class does not touch proof or the projection.
	f.project("h1", refA)
	mustProve(f, "h1", "id1", refA)
	if err := l.Fleet.SetPlatformClass(f.ctx, "h1", key); err != nil {
		t.Fatal(err)
	}
	if r := f.record("h1"); !r.Valid() || r.Reference != refA {
		t.Fatalf("setting the platform class disturbed proof: %+v", r)
	}
	// The write policy on top: a rerun writes nothing to the ledger.
	res, err := platformclass.Record(f.ctx, nopNetBox{}, l.Fleet, platformclass.Target{Device: "h1", NetBoxValue: key}, key, false, nil)
	if err != nil || res.FleetWrite || res.NetBoxWrite {
		t.Fatalf("platformclass.Record on a converged device: %+v, %v", res, err)
	}
	// A key longer than both systems accept is refused.
	long := make([]byte, platformclass.MaxLen+1)
	for i := range long {
		long[i] = 'A'
	}
	if err := l.Fleet.SetPlatformClass(f.ctx, "h1", string(long)); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("a %d-character key: %v, want ErrInvalid", len(long), err)
	}
}

type nopNetBox struct{}

func (nopNetBox) SetPlatformClass(context.Context, int, string) error {
	return errors.New("NetBox must not be written")
}

func testRace(t *testing.T, l Ledger) {
	f := fix(t, l)
	f.identity("h1", "id1")
	f.project("h1", refA)
	_, since := f.snapshot("h1")
	const writers = 8
	holders := make([]string, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	deadline := f.later()
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			holders[i], errs[i] = l.Proofs.ProveEnrollment(f.ctx, "h1", "id1", refA, since, fmt.Sprintf("run-%d", i), deadline)
		}(i)
	}
	close(start)
	wg.Wait()
	winners := 0
	for i := 0; i < writers; i++ {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v", i, errs[i])
		}
		if holders[i] == fmt.Sprintf("run-%d", i) {
			winners++
		}
		if holders[i] != holders[0] {
			t.Fatalf("writers disagree on the holder: %q and %q", holders[0], holders[i])
		}
	}
	if winners != 1 {
		t.Fatalf("%d writers won the same compare-and-set, want exactly 1", winners)
	}
	if r := f.record("h1"); !r.Valid() || r.Proof.Run != holders[0] {
		t.Fatalf("record %+v proof %+v, want the winner %s", r, r.Proof, holders[0])
	}
}

func testNoLostUpdate(t *testing.T, l Ledger) {
	f := fix(t, l)
	f.identity("h1", "id1")
	f.project("h1", refA)
	_, since := f.snapshot("h1")
	start := f.record("h1").Revision
	const writers, rounds = 8, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	changes := int64(0)
	fail := make(chan error, writers)
	deadline := f.later()
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				ref := []string{refA, refB}[(g+i)%2]
				if g%2 == 0 {
					changed, err := l.References.ProjectReference(f.ctx, "h1", ref)
					if err != nil {
						fail <- err
						return
					}
					if changed {
						mu.Lock()
						changes++
						mu.Unlock()
					}
					continue
				}
				_, err := l.Proofs.ProveEnrollment(f.ctx, "h1", "id1", ref, since, fmt.Sprintf("g%d-%d", g, i), deadline)
				if err != nil && !errors.Is(err, hostforge.ErrConflict) {
					fail <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Fatalf("concurrent writer: %v", err)
	}
	r := f.record("h1")
	if r.Revision != start+changes {
		t.Fatalf("revision %d after %d reported changes from %d: an update was lost", r.Revision, changes, start)
	}
	if r.Proof != nil && !r.Valid() {
		t.Fatalf("proof %+v survived a reference change: record %+v", r.Proof, r)
	}
}

func testDeadline(t *testing.T, l Ledger) {
	f := fix(t, l)
	f.identity("h1", "id1")
	f.project("h1", refA)
	_, since := f.snapshot("h1")
	// The caller's own check would have let it through (its clock is
	// behind); the store judges the deadline by its own clock.
	late := l.Now().Add(-time.Second)
	if _, err := l.Proofs.ProveEnrollment(f.ctx, "h1", "id1", refA, since, "run-late", late); !errors.Is(err, hostforge.ErrConflict) {
		t.Fatalf("a compare-and-set after its deadline: %v, want ErrConflict", err)
	}
	if r := f.record("h1"); r.Proof != nil {
		t.Fatalf("a late compare-and-set wrote proof: %+v", r.Proof)
	}
	if holder, err := l.Proofs.ProveEnrollment(f.ctx, "h1", "id1", refA, since, "run-on-time", l.Now().Add(time.Minute)); err != nil || holder != "run-on-time" {
		t.Fatalf("a compare-and-set within its window: %q, %v", holder, err)
	}
}

func testDown(t *testing.T, l Ledger) {
	f := fix(t, l)
	f.identity("h1", "id1")
	f.project("h1", refA)
	_, since := f.snapshot("h1")
	l.Down()
	unavailable := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, hostforge.ErrUnavailable) {
			t.Fatalf("%s on a ledger that is down: %v, want ErrUnavailable", what, err)
		}
	}
	_, _, err := l.Proofs.Snapshot(f.ctx, "h1")
	unavailable("Snapshot", err)
	_, err = f.prove("h1", "id1", refA, since, "run-1")
	unavailable("ProveEnrollment", err)
	_, err = l.Proofs.FailEnrollment(f.ctx, "h1", "id1", "run-1")
	unavailable("FailEnrollment", err)
	_, err = l.References.ProjectedReferences(f.ctx)
	unavailable("ProjectedReferences", err)
	_, err = l.References.ProjectReference(f.ctx, "h1", refB)
	unavailable("ProjectReference", err)
	_, err = l.Fleet.PlatformClass(f.ctx, "h1")
	unavailable("PlatformClass", err)
	unavailable("SetPlatformClass", l.Fleet.SetPlatformClass(f.ctx, "h1", "NOGPU_X_NORDMA_01"))

	// What the consumers make of it.
	_, err = platformclass.Record(f.ctx, nopNetBox{}, l.Fleet, platformclass.Target{Device: "h1", NetBoxValue: "NOGPU_X_NORDMA_01"}, "NOGPU_X_NORDMA_01", false, nil)
	if f, ok := hostforge.AsFailure(err); !ok || f.Code != platformclass.RecordFailed.Code || !f.Retryable || f.Owner != hostforge.OwnerFleetManager {
		t.Fatalf("platform class on a ledger that is down: %v, want retryable FLEET_MANAGER %s", err, platformclass.RecordFailed.Code)
	}
	out, err := agent(l).Settle(f.ctx, qualifying("h1", "id1", since, refA, l.Now()))
	if hostforge.CodeOf(err) != enrollment.ProofRejected.Code || out.Attempts < 2 {
		t.Fatalf("proof on a ledger that is down: %+v, %v; want %s after retries", out, err, enrollment.ProofRejected.Code)
	}
	failed := qualifying("h1", "id1", since, refA, l.Now())
	failed.Status, failed.Output = enrollment.CompletionFailed, nil
	if _, err := agent(l).Settle(f.ctx, failed); hostforge.CodeOf(err) != enrollment.FleetManagerUnavailable.Code {
		t.Fatalf("failure write on a ledger that is down: %v, want %s", err, enrollment.FleetManagerUnavailable.Code)
	}
}
