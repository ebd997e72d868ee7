package fakes_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment/ledgertest"
	"github.com/hostforge/hostforge/fakes"
)

// TestFleetLedgerContract runs the ledger contract suite on the fake fleet
// manager: FleetProofs for proof and the projection, FleetManager for the
// platform_class record.
func TestFleetLedgerContract(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) ledgertest.Ledger {
		site := fakes.NewSite()
		return ledgertest.Ledger{
			Proofs:     site.Proofs,
			References: site.Proofs,
			Fleet:      site.FleetManager,
			SetIdentity: func(_ context.Context, device, identity string) error {
				site.Proofs.ReplaceIdentity(device, identity)
				return nil
			},
			Inspect: func(_ context.Context, device string) (ledgertest.Record, error) {
				r, _ := site.Proofs.Record(device)
				rec := ledgertest.Record{Identity: r.Identity, Reference: r.Reference, Revision: r.Revision,
					PlatformClass: site.FleetManager.Get(device), Version: r.Version + site.FleetManager.Changes(device)}
				if p := r.Proof; p != nil {
					rec.Proof = &ledgertest.Proof{Identity: p.Identity, Reference: p.Reference, Revision: p.Revision, Run: p.Run}
				}
				return rec, nil
			},
			Now:    site.Clock.Now,
			Down:   func() { site.Inject(fakes.SysFleetManager, "*", 1<<30, hostforge.ErrUnavailable) },
			Retire: site.Proofs,
		}
	})
}

// far is a proof deadline no test reaches.
var far = clock.Epoch.Add(24 * time.Hour)

func TestFleetProofsSemantics(t *testing.T) {
	ctx := context.Background()
	type step struct {
		op       string // ref, replace, prove, fail
		arg      string // reference or identity
		identity string
		wantErr  error
		cleared  bool
	}
	tests := []struct {
		name      string
		steps     []step
		wantValid bool
		wantProof bool
	}{
		{"cas succeeds on a matching reference",
			[]step{{op: "ref", arg: "ironic-a/n1"}, {op: "prove", arg: "ironic-a/n1", identity: "id1"}}, true, true},
		{"cas refused while the projection lags",
			[]step{{op: "ref", arg: "ironic-a/n0"}, {op: "prove", arg: "ironic-a/n1", identity: "id1", wantErr: hostforge.ErrConflict}}, false, false},
		{"cas refused for a replaced identity",
			[]step{{op: "ref", arg: "ironic-a/n1"}, {op: "replace", arg: "id2"}, {op: "prove", arg: "ironic-a/n1", identity: "id1", wantErr: hostforge.ErrNotFound}}, false, false},
		{"A to B to A does not resurrect proof",
			[]step{{op: "ref", arg: "A"}, {op: "prove", arg: "A", identity: "id1"}, {op: "ref", arg: "B"}, {op: "ref", arg: "A"}}, false, false},
		{"A to B to A refuses a proof across the flip",
			[]step{{op: "ref", arg: "A"}, {op: "ref", arg: "B"}, {op: "ref", arg: "A"}, {op: "prove", arg: "A", identity: "id1", wantErr: hostforge.ErrConflict}}, false, false},
		{"setting the same reference keeps proof",
			[]step{{op: "ref", arg: "A"}, {op: "prove", arg: "A", identity: "id1"}, {op: "ref", arg: "A"}}, true, true},
		{"failure write preserves matching proof",
			[]step{{op: "ref", arg: "A"}, {op: "prove", arg: "A", identity: "id1"}, {op: "fail", identity: "id1"}}, true, true},
		{"failure write clears stale metadata of the operated identity",
			[]step{{op: "ref", arg: "A"}, {op: "prove", arg: "A", identity: "id1"}, {op: "replace", arg: "id2"}, {op: "fail", identity: "id2", cleared: true}}, false, false},
		{"failure write leaves a replacement identity untouched",
			[]step{{op: "ref", arg: "A"}, {op: "prove", arg: "A", identity: "id1"}, {op: "replace", arg: "id2"}, {op: "fail", identity: "id1"}}, false, true},
		{"failure write on a device without proof changes nothing",
			[]step{{op: "ref", arg: "A"}, {op: "fail", identity: "id1"}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := fakes.NewSite()
			p := site.Proofs
			p.Register("h1", "id1")
			for i, s := range tt.steps {
				switch s.op {
				case "ref":
					p.SetReference("h1", s.arg)
				case "replace":
					p.ReplaceIdentity("h1", s.arg)
				case "prove":
					_, err := p.ProveEnrollment(ctx, "h1", s.identity, s.arg, 0, fmt.Sprintf("run-%d", i), far)
					if !errors.Is(err, s.wantErr) || (s.wantErr == nil && err != nil) {
						t.Fatalf("step %d prove: err = %v, want %v", i, err, s.wantErr)
					}
				case "fail":
					cleared, err := p.FailEnrollment(ctx, "h1", s.identity, "run-f")
					if err != nil || cleared != s.cleared {
						t.Fatalf("step %d fail: cleared=%v err=%v, want cleared=%v", i, cleared, err, s.cleared)
					}
				}
			}
			rec, _ := p.Record("h1")
			if rec.Valid() != tt.wantValid || (rec.Proof != nil) != tt.wantProof {
				t.Fatalf("record %+v (proof %+v): valid=%v proof=%v, want valid=%v proof=%v", rec, rec.Proof, rec.Valid(), rec.Proof != nil, tt.wantValid, tt.wantProof)
			}
		})
	}
}

func TestFleetProofsCountsAndFaults(t *testing.T) {
	ctx := context.Background()
	site := fakes.NewSite()
	site.Proofs.Register("h1", "id1")
	site.Proofs.SetReference("h1", "A")
	site.Inject(fakes.SysFleetManager, "prove_enrollment", 1, hostforge.ErrUnavailable)
	if _, err := site.Proofs.ProveEnrollment(ctx, "h1", "id1", "A", 0, "r1", far); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("injected fault: err = %v", err)
	}
	if rec, _ := site.Proofs.Record("h1"); rec.Proof != nil {
		t.Fatalf("a failed call wrote proof: %+v", rec.Proof)
	}
	if _, err := site.Proofs.ProveEnrollment(ctx, "h1", "id1", "A", 0, "r1", far); err != nil {
		t.Fatal(err)
	}
	if _, _, err := site.Proofs.Snapshot(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := site.Proofs.Snapshot(ctx, "nope"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("unknown device: %v", err)
	}
	fm := site.Calls()[fakes.SysFleetManager]
	if fm.Writes != 2 || fm.Reads != 2 || fm.Ops["prove_enrollment"] != 2 {
		t.Fatalf("calls = %+v, want 2 writes (prove) and 2 reads (snapshot)", fm)
	}
	if _, err := site.Proofs.ProveEnrollment(ctx, "h1", "", "A", 0, "r", far); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("empty identity: %v", err)
	}
}

// model is the simplest statement of the proof semantics: no revisions, no
// locks, one device.
type model struct {
	identity, ref string
	proof         *struct{ identity, ref, run string }
}

func (m *model) setRef(r string) {
	if r != m.ref {
		m.ref, m.proof = r, nil
	}
}

func (m *model) prove(id, r, run string) error {
	switch {
	case id != m.identity:
		return hostforge.ErrNotFound
	case r != m.ref:
		return hostforge.ErrConflict
	}
	if m.proof != nil && m.proof.identity == id && m.proof.ref == r {
		return nil // the first writer of the revision keeps it
	}
	m.proof = &struct{ identity, ref, run string }{id, r, run}
	return nil
}

func (m *model) fail(id string) bool {
	if id != m.identity || m.proof == nil || (m.proof.identity == m.identity && m.proof.ref == m.ref) {
		return false
	}
	m.proof = nil
	return true
}

// TestFleetProofsModel drives random operation sequences against the fake
// and the model and requires them to agree after every step.
func TestFleetProofsModel(t *testing.T) {
	ctx := context.Background()
	refs := []string{"A", "B", "C"}
	ids := []string{"id1", "id2", "id3"}
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		site := fakes.NewSite()
		p := site.Proofs
		p.Register("h1", "id1")
		m := &model{identity: "id1"}
		for i := 0; i < 60; i++ {
			var desc string
			switch rng.IntN(4) {
			case 0:
				r := refs[rng.IntN(len(refs))]
				p.SetReference("h1", r)
				m.setRef(r)
				desc = "ref " + r
			case 1:
				id := ids[rng.IntN(len(ids))]
				p.ReplaceIdentity("h1", id)
				m.identity = id
				desc = "replace " + id
			case 2:
				id, r, run := ids[rng.IntN(len(ids))], refs[rng.IntN(len(refs))], fmt.Sprintf("run-%d", i)
				rec, _ := p.Record("h1")
				_, got := p.ProveEnrollment(ctx, "h1", id, r, rec.Revision, run, far)
				want := m.prove(id, r, run)
				if (want == nil) != (got == nil) || (want != nil && !errors.Is(got, want)) {
					t.Fatalf("seed %d step %d prove %s %s: fake %v, model %v", seed, i, id, r, got, want)
				}
				desc = "prove " + id + " " + r
			case 3:
				id := ids[rng.IntN(len(ids))]
				got, err := p.FailEnrollment(ctx, "h1", id, "f")
				if err != nil || got != m.fail(id) {
					t.Fatalf("seed %d step %d fail %s: fake cleared=%v err=%v disagrees with the model", seed, i, id, got, err)
				}
				desc = "fail " + id
			}
			rec, _ := p.Record("h1")
			if rec.Identity != m.identity || rec.Reference != m.ref || (rec.Proof == nil) != (m.proof == nil) {
				t.Fatalf("seed %d step %d (%s): fake %+v proof %+v, model %+v proof %+v", seed, i, desc, rec, rec.Proof, m, m.proof)
			}
			if m.proof != nil {
				if rec.Proof.Identity != m.proof.identity || rec.Proof.Reference != m.proof.ref || rec.Proof.Run != m.proof.run {
					t.Fatalf("seed %d step %d (%s): fake proof %+v, model %+v", seed, i, desc, rec.Proof, m.proof)
				}
				wantValid := m.proof.identity == m.identity && m.proof.ref == m.ref
				if rec.Valid() != wantValid {
					t.Fatalf("seed %d step %d (%s): valid=%v, model says %v", seed, i, desc, rec.Valid(), wantValid)
				}
			}
		}
	}
}

// TestFleetProofsConcurrent hammers one device from many goroutines while a
// watcher checks that no proof ever outlives a reference change.
func TestFleetProofsConcurrent(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	site := fakes.NewSite()
	p := site.Proofs
	p.Register("h1", "id1")
	p.SetReference("h1", "A")

	stop := make(chan struct{})
	bad := make(chan string, 1)
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			rec, _ := p.Record("h1")
			if rec.Proof != nil && rec.Proof.Identity == rec.Identity && (rec.Proof.Reference != rec.Reference || rec.Proof.Revision != rec.Revision) {
				select {
				case bad <- fmt.Sprintf("proof %+v survived a reference change: record %+v", rec.Proof, rec):
				default:
				}
				return
			}
		}
	}()

	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; i < 400; i++ {
				r := []string{"A", "B"}[rng.IntN(2)]
				switch rng.IntN(3) {
				case 0:
					p.SetReference("h1", r)
				case 1:
					_, _ = p.ProveEnrollment(ctx, "h1", "id1", r, 0, fmt.Sprintf("g%d-%d", g, i), far)
				case 2:
					_, _ = p.FailEnrollment(ctx, "h1", "id1", "f")
				}
			}
		}(g)
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	select {
	case msg := <-bad:
		t.Fatal(msg)
	default:
	}
	rec, _ := p.Record("h1")
	if rec.Proof != nil && !rec.Valid() {
		t.Fatalf("final proof %+v is not valid for %+v", rec.Proof, rec)
	}
}
