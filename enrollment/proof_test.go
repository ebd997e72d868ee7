package enrollment_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
)

const (
	refA = "ironic-gpu/11111111-1111-1111-1111-111111111111"
	refB = "ironic-gpu/22222222-2222-2222-2222-222222222222"
)

func output(t testing.TB, r enrollment.Result) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func enrolledResult(device, ref string) enrollment.Result {
	inst, node, _ := cut(ref)
	return enrollment.Result{Device: device, Instance: inst, Node: node, Enrolled: true, ProvisionState: "available",
		Phases: []enrollment.PhaseRecord{{Phase: enrollment.PhaseRouting, Status: "done"}, {Phase: enrollment.PhaseIronic, Status: "done"}}}
}

func cut(ref string) (string, string, bool) {
	for i := range ref {
		if ref[i] == '/' {
			return ref[:i], ref[i+1:], true
		}
	}
	return ref, "", false
}

func TestCompletionClassify(t *testing.T) {
	closed := clock.Epoch
	good := output(t, enrolledResult("h1", refA))
	noNode := enrolledResult("h1", refA)
	noNode.Node = ""
	skipped := enrolledResult("h1", refA)
	skipped.Phases[1].Status = "skipped"
	notEnrolled := enrolledResult("h1", refA)
	notEnrolled.Enrolled = false
	other := enrolledResult("h2", refA)
	tests := []struct {
		name string
		c    enrollment.Completion
		want enrollment.CompletionKind
	}{
		{"qualifying", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, ClosedAt: closed, Output: good}, enrollment.KindQualifying},
		{"failed", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionFailed}, enrollment.KindUnsuccessful},
		{"canceled", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCanceled}, enrollment.KindUnsuccessful},
		{"terminated", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionTerminated}, enrollment.KindUnsuccessful},
		{"timed out", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionTimedOut}, enrollment.KindUnsuccessful},
		{"qualifying output without node", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, Output: output(t, noNode)}, enrollment.KindMalformedQualifying},
		{"completed but not enrolled", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, Output: output(t, notEnrolled)}, enrollment.KindMalformedQualifying},
		{"output for another device", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, Output: output(t, other)}, enrollment.KindMalformedQualifying},
		{"ironic gated off", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, Output: output(t, skipped)}, enrollment.KindDiagnostic},
		{"diagnostic run", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, Diagnostic: true, Output: good}, enrollment.KindDiagnostic},
		{"failed diagnostic run", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionFailed, Diagnostic: true}, enrollment.KindDiagnostic},
		{"no device", enrollment.Completion{Identity: "id1", Status: enrollment.CompletionCompleted, Output: good}, enrollment.KindUnclassifiable},
		{"no identity", enrollment.Completion{Device: "h1", Status: enrollment.CompletionFailed}, enrollment.KindUnclassifiable},
		{"unknown status", enrollment.Completion{Device: "h1", Identity: "id1", Status: "continued_as_new", Output: good}, enrollment.KindUnclassifiable},
		{"no output", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted}, enrollment.KindUnclassifiable},
		{"null output", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, Output: json.RawMessage("null")}, enrollment.KindUnclassifiable},
		{"garbage output", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, Output: json.RawMessage(`{"enrolled": "yes"`)}, enrollment.KindUnclassifiable},
		{"array output", enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, Output: json.RawMessage(`[1]`)}, enrollment.KindUnclassifiable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ref := tt.c.Classify()
			if got != tt.want {
				t.Fatalf("Classify = %s, want %s", got, tt.want)
			}
			if (got == enrollment.KindQualifying) != ref.Complete() {
				t.Fatalf("reference %+v for kind %s", ref, got)
			}
			if got == enrollment.KindQualifying && ref.String() != refA {
				t.Fatalf("reference %s, want %s", ref, refA)
			}
		})
	}
}

// event is a change in the fleet manager at a virtual time.
type event struct {
	at       time.Time
	ref      string // SetReference when identity == ""
	identity string // ReplaceIdentity when set
}

// schedClock is a fake clock that applies scheduled fleet-manager changes
// as virtual time passes, so the agent's retries interleave with them.
type schedClock struct {
	*clock.Fake
	mu     sync.Mutex
	events []event
	apply  func(event)
}

func (c *schedClock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Now()
	for len(c.events) > 0 && !c.events[0].at.After(now) {
		c.apply(c.events[0])
		c.events = c.events[1:]
	}
}

func (c *schedClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := c.Fake.Sleep(ctx, d); err != nil {
		return err
	}
	c.fire()
	return nil
}

func (c *schedClock) drain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.events {
		c.apply(e)
	}
	c.events = nil
}

// proveNow establishes proof of the device's current reference revision
// directly in the fake, as an earlier run would have.
func proveNow(t *testing.T, p *fakes.FleetProofs, device, identity, ref string) {
	t.Helper()
	rec, _ := p.Record(device)
	if _, err := p.ProveEnrollment(context.Background(), device, identity, ref, rec.Revision, "earlier", clock.Epoch.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
}

func newAgent(site *fakes.Site, clk clock.Clock) *enrollment.ProofAgent {
	return &enrollment.ProofAgent{Store: site.Proofs, Clock: clk, Window: 2 * time.Minute, Interval: 15 * time.Second}
}

func TestProofAgentSettle(t *testing.T) {
	ctx := context.Background()
	closed := clock.Epoch
	qualifying := func(ref string) enrollment.Completion {
		return enrollment.Completion{Device: "h1", Identity: "id1", Run: "wf/run", Status: enrollment.CompletionCompleted, ClosedAt: closed, Output: output(t, enrolledResult("h1", ref))}
	}
	failed := enrollment.Completion{Device: "h1", Identity: "id1", Run: "wf/run2", Status: enrollment.CompletionFailed, ClosedAt: closed}
	tests := []struct {
		name string
		// setup before the agent runs; the proof of "old" is pre-established on refA.
		preProof   bool
		replaceTo  string
		projection string
		events     []event
		startAfter time.Duration
		c          enrollment.Completion
		wantAction string
		wantCode   string
		wantValid  bool
		wantProof  bool
		wantTries  int
	}{
		{name: "projection already matches", projection: refA, c: qualifying(refA), wantAction: enrollment.ProofEstablished, wantValid: true, wantProof: true, wantTries: 1},
		{name: "projection catches up within the window", projection: refB, events: []event{{at: closed.Add(40 * time.Second), ref: refA}},
			c: qualifying(refA), wantAction: enrollment.ProofEstablished, wantValid: true, wantProof: true, wantTries: 4},
		{name: "projection never catches up", projection: refB, c: qualifying(refA),
			wantAction: enrollment.ProofRejectedAct, wantCode: enrollment.ProofRejected.Code, wantTries: 9},
		{name: "agent starting after the window never tries", projection: refA, startAfter: 3 * time.Minute, c: qualifying(refA),
			wantAction: enrollment.ProofRejectedAct, wantCode: enrollment.ProofRejected.Code, wantTries: 0},
		{name: "identity replaced before the proof", projection: refA, replaceTo: "id2", c: qualifying(refA),
			wantAction: enrollment.ProofRejectedAct, wantCode: enrollment.ProofRejected.Code, wantTries: 1},
		{name: "failure preserves matching proof", preProof: true, projection: refA, c: failed,
			wantAction: enrollment.ProofFailureWrite, wantValid: true, wantProof: true, wantTries: 1},
		{name: "failure clears the old identity's stale proof", preProof: true, projection: refA, replaceTo: "id1", c: failed,
			wantAction: enrollment.ProofFailureWrite, wantValid: false, wantProof: false, wantTries: 1},
		{name: "failure on a replaced identity is untouched", preProof: true, projection: refA, replaceTo: "id2", c: failed,
			wantAction: enrollment.ProofFailureWrite, wantValid: false, wantProof: true, wantTries: 1},
		{name: "malformed qualifying output submits a failure write", preProof: true, projection: refA,
			c:          enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, ClosedAt: closed, Output: json.RawMessage(`{"device":"h1","enrolled":true,"phases":[{"phase":"ironic","status":"done"}]}`)},
			wantAction: enrollment.ProofFailureWrite, wantValid: true, wantProof: true, wantTries: 1},
		{name: "diagnostic preserves proof without a write", preProof: true, projection: refA,
			c:          enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionFailed, Diagnostic: true, ClosedAt: closed},
			wantAction: enrollment.ProofNoAction, wantValid: true, wantProof: true},
		{name: "unclassifiable preserves proof without a write", preProof: true, projection: refA,
			c:          enrollment.Completion{Device: "h1", Identity: "id1", Status: enrollment.CompletionCompleted, ClosedAt: closed, Output: json.RawMessage("{")},
			wantAction: enrollment.ProofNoAction, wantValid: true, wantProof: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := fakes.NewSite()
			p := site.Proofs
			p.Register("h1", "id0")
			p.SetReference("h1", tt.projection)
			if tt.preProof {
				proveNow(t, p, "h1", "id0", tt.projection)
				if tt.replaceTo == "" {
					// The earlier proof belongs to the operated identity.
					p.ReplaceIdentity("h1", "id1")
					p.SetReference("h1", "")
					p.SetReference("h1", tt.projection)
					proveNow(t, p, "h1", "id1", tt.projection)
				}
			}
			if tt.replaceTo != "" {
				p.ReplaceIdentity("h1", tt.replaceTo)
			} else {
				p.ReplaceIdentity("h1", "id1")
			}
			clk := &schedClock{Fake: clock.NewFake(closed.Add(tt.startAfter)), events: tt.events, apply: func(e event) { p.SetReference("h1", e.ref) }}
			before := site.Calls()
			out, err := newAgent(site, clk).Settle(ctx, tt.c)
			if got := hostforge.CodeOf(err); got != tt.wantCode || (tt.wantCode == "" && err != nil) {
				t.Fatalf("Settle error = %v, want code %q", err, tt.wantCode)
			}
			if err != nil {
				var f *hostforge.Failure
				if !errors.As(err, &f) {
					t.Fatalf("error %T is not a Failure", err)
				}
			}
			if out.Action != tt.wantAction || out.Attempts != tt.wantTries {
				t.Fatalf("outcome %+v, want action %s after %d attempts", out, tt.wantAction, tt.wantTries)
			}
			writes := site.Calls().Sub(before)[fakes.SysFleetManager].Writes
			if writes != tt.wantTries {
				t.Fatalf("%d fleet manager writes, want %d", writes, tt.wantTries)
			}
			rec, _ := p.Record("h1")
			if rec.Valid() != tt.wantValid || (rec.Proof != nil) != tt.wantProof {
				t.Fatalf("record %+v proof %+v: valid=%v, want valid=%v proof=%v", rec, rec.Proof, rec.Valid(), tt.wantValid, tt.wantProof)
			}
		})
	}
}

func TestProofAgentTransientErrors(t *testing.T) {
	ctx := context.Background()
	site := fakes.NewSite()
	site.Proofs.Register("h1", "id1")
	site.Proofs.SetReference("h1", refA)
	site.Inject(fakes.SysFleetManager, "prove_enrollment", 2, hostforge.ErrUnavailable)
	c := enrollment.Completion{Device: "h1", Identity: "id1", Run: "r", Status: enrollment.CompletionCompleted, ClosedAt: clock.Epoch, Output: output(t, enrolledResult("h1", refA))}
	out, err := newAgent(site, clock.NewFake(clock.Epoch)).Settle(ctx, c)
	if err != nil || out.Action != enrollment.ProofEstablished || out.Attempts != 3 {
		t.Fatalf("outcome %+v err %v, want established on the third attempt", out, err)
	}

	site.Inject(fakes.SysFleetManager, "fail_enrollment", 100, hostforge.ErrUnavailable)
	c.Status = enrollment.CompletionFailed
	out, err = newAgent(site, clock.NewFake(clock.Epoch)).Settle(ctx, c)
	if hostforge.CodeOf(err) != enrollment.FleetManagerUnavailable.Code || out.Attempts != 8 {
		t.Fatalf("outcome %+v err %v, want FLEET_MANAGER_UNAVAILABLE after 8 attempts in a 2m window", out, err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	c.Status = enrollment.CompletionCompleted
	if _, err := newAgent(site, clock.NewFake(clock.Epoch)).Settle(cctx, c); hostforge.CodeOf(err) != hostforge.Cancelled.Code {
		t.Fatalf("cancelled context: %v", err)
	}
	if _, err := (&enrollment.ProofAgent{}).Settle(ctx, c); hostforge.CodeOf(err) != enrollment.NotImplemented.Code {
		t.Fatalf("agent without a store: %v", err)
	}
}

// refModel is the reference model of the fleet manager and the agent
// together: the simplest statement of what must come out.
type refModel struct {
	identity, ref string
	proofID       string
	proofRef      string
	proofRun      string
	has           bool
	// resolved is the reference the current round's completion resolved;
	// entered counts the times the projection became it since the round's
	// submission snapshot (proof needs exactly one: A -> B -> A refuses).
	resolved string
	entered  int
}

func (m *refModel) apply(e event) {
	if e.identity != "" {
		m.identity = e.identity
		return
	}
	if e.ref != m.ref {
		m.ref, m.has = e.ref, false
		if e.ref == m.resolved {
			m.entered++
		}
	}
}

// submit snapshots the round: the resolved reference and its entries.
func (m *refModel) submit(resolved string) {
	m.resolved, m.entered = resolved, 0
	if m.ref == resolved {
		m.entered = 1
	}
}

// TestProofModel drives random interleavings of completions of every kind
// and fleet-manager changes (reference moves, identity replacements) at
// random times around the agent's retries, and checks the fake's final
// proof against the reference model.
func TestProofModel(t *testing.T) {
	ctx := context.Background()
	const window, interval = 2 * time.Minute, 15 * time.Second
	refs := []string{refA, refB, ""}
	ids := []string{"id1", "id2"}
	statuses := []enrollment.CompletionStatus{enrollment.CompletionCompleted, enrollment.CompletionCompleted, enrollment.CompletionFailed, enrollment.CompletionCanceled, enrollment.CompletionTimedOut, enrollment.CompletionTerminated}
	for seed := uint64(1); seed <= 400; seed++ {
		rng := rand.New(rand.NewPCG(seed, 42))
		site := fakes.NewSite()
		p := site.Proofs
		m := &refModel{identity: "id1"}
		p.Register("h1", "id1")
		// A few completions in sequence; each with its own random events.
		start := clock.Epoch
		for round := 0; round < 4; round++ {
			closed := start.Add(time.Duration(rng.IntN(60)) * time.Second)
			agentStart := closed.Add(time.Duration(rng.IntN(150)) * time.Second)
			var evs []event
			for i, n := 0, rng.IntN(5); i < n; i++ {
				e := event{at: start.Add(time.Duration(rng.IntN(240)) * time.Second)}
				if rng.IntN(5) == 0 {
					e.identity = ids[rng.IntN(len(ids))]
				} else {
					e.ref = refs[rng.IntN(len(refs))]
				}
				evs = append(evs, e)
			}
			sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
			resolved := refs[rng.IntN(2)]
			rec, _ := p.Record("h1")
			m.submit(resolved)
			c := enrollment.Completion{Device: "h1", Identity: ids[rng.IntN(len(ids))], Run: fmt.Sprintf("run-%d", round), Since: rec.Revision,
				Status: statuses[rng.IntN(len(statuses))], ClosedAt: closed, Output: output(t, enrolledResult("h1", resolved))}
			switch rng.IntN(6) {
			case 0:
				c.Diagnostic = true
			case 1:
				c.Output = json.RawMessage(`{"device":"h1","enrolled":true,"phases":[{"phase":"ironic","status":"done"}]}`) // malformed qualifying
			case 2:
				c.Output = json.RawMessage(`not json`)
			}
			kind, _ := c.Classify()

			// The model: apply events up to each attempt, as the agent sees them.
			pending := append([]event(nil), evs...)
			upTo := func(t time.Time) {
				for len(pending) > 0 && !pending[0].at.After(t) {
					m.apply(pending[0])
					pending = pending[1:]
				}
			}
			wantAction := enrollment.ProofNoAction
			switch kind {
			case enrollment.KindQualifying:
				wantAction = enrollment.ProofRejectedAct
				for at := agentStart; !at.After(closed.Add(window)); at = at.Add(interval) {
					upTo(at)
					if c.Identity != m.identity {
						break
					}
					if m.ref == resolved && m.entered == 1 {
						if !(m.has && m.proofID == m.identity && m.proofRef == m.ref) {
							m.has, m.proofID, m.proofRef, m.proofRun = true, c.Identity, resolved, c.Run
						}
						wantAction = enrollment.ProofEstablished
						break
					}
				}
			case enrollment.KindUnsuccessful, enrollment.KindMalformedQualifying:
				upTo(agentStart)
				wantAction = enrollment.ProofFailureWrite
				if c.Identity == m.identity && m.has && !(m.proofID == m.identity && m.proofRef == m.ref) {
					m.has = false
				}
			}
			for _, e := range pending {
				m.apply(e)
			}

			// The system: the fake fleet manager and the agent on a clock
			// that applies the same events as it advances.
			clk := &schedClock{Fake: clock.NewFake(agentStart), events: evs, apply: func(e event) {
				if e.identity != "" {
					p.ReplaceIdentity("h1", e.identity)
				} else {
					p.SetReference("h1", e.ref)
				}
			}}
			p.UseClock(clk)
			clk.fire()
			out, err := (&enrollment.ProofAgent{Store: p, Clock: clk, Window: window, Interval: interval}).Settle(ctx, c)
			clk.drain()
			if out.Action != wantAction {
				t.Fatalf("seed %d round %d: %s completion (identity %s, resolved %q, closed %s, agent at %s, events %+v): action %s (err %v), model %s",
					seed, round, kind, c.Identity, resolved, closed.Sub(start), agentStart.Sub(start), evs, out.Action, err, wantAction)
			}
			if (err != nil) != (wantAction == enrollment.ProofRejectedAct) {
				t.Fatalf("seed %d round %d: err %v for action %s", seed, round, err, out.Action)
			}
			rec, _ = p.Record("h1")
			if rec.Identity != m.identity || rec.Reference != m.ref || (rec.Proof != nil) != m.has {
				t.Fatalf("seed %d round %d (%s): fake %+v proof %+v, model %+v", seed, round, kind, rec, rec.Proof, m)
			}
			if m.has && (rec.Proof.Identity != m.proofID || rec.Proof.Reference != m.proofRef || rec.Proof.Run != m.proofRun) {
				t.Fatalf("seed %d round %d: fake proof %+v, model %+v", seed, round, rec.Proof, m)
			}
			start = clk.Now().Add(5 * time.Minute)
		}
	}
}
