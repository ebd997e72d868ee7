package enrollment_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
)

// FuzzCompletionOutput feeds whatever an orchestrator might record as a
// run's output and close status through classification and settlement.
// Whatever the bytes:
//   - Classify never panics, and is qualifying exactly when it names a
//     complete reference — one the output itself claims for this device,
//     with the run completed, not diagnostic, and the Ironic phase done;
//   - settling a diagnostic or unclassifiable completion writes nothing;
//   - settling an unsuccessful or malformed qualifying one makes at most
//     the identity-guarded failure write, which never establishes proof;
//   - a qualifying one whose reference the fleet manager projects
//     establishes proof on exactly that reference.
func FuzzCompletionOutput(f *testing.F) {
	good, _ := json.Marshal(enrolledResult("h1", refA))
	f.Add(good, "completed", false, "id1")
	f.Add(good, "completed", true, "id1")
	f.Add(good, "failed", false, "id1")
	f.Add(good, "completed", false, "")
	f.Add([]byte(`{"device":"h1","enrolled":true,"instance":"ironic-gpu","node":"n","phases":[{"phase":"ironic_inspection","status":"done"}]}`), "completed", false, "id1")
	f.Add([]byte(`{"device":"h1","enrolled":true,"instance":"i","node":"n","phases":[{"phase":"ironic_inspection","status":"skipped"}]}`), "completed", false, "id1")
	f.Add([]byte(`{"enrolled": "yes"`), "completed", false, "id1")
	f.Add([]byte(`null`), "timed_out", false, "id1")
	f.Add([]byte(`[]`), "continued_as_new", false, "id1")
	f.Fuzz(func(t *testing.T, out []byte, status string, diagnostic bool, identity string) {
		c := enrollment.Completion{Device: "h1", Identity: identity, Run: "wf/run", Status: enrollment.CompletionStatus(status),
			ClosedAt: clock.Epoch, Diagnostic: diagnostic, Output: out}
		kind, ref := c.Classify()
		if again, ref2 := c.Classify(); again != kind || ref2 != ref {
			t.Fatalf("classified %s %v, then %s %v", kind, ref, again, ref2)
		}
		if (kind == enrollment.KindQualifying) != ref.Complete() || (kind != enrollment.KindQualifying && ref != (enrollment.IronicRef{})) {
			t.Fatalf("kind %s with reference %+v", kind, ref)
		}
		if kind == enrollment.KindQualifying {
			var res enrollment.Result
			if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil || !res.Enrolled || res.Device != "h1" ||
				res.Instance != ref.Instance || res.Node != ref.Node || diagnostic || status != string(enrollment.CompletionCompleted) || identity == "" {
				t.Fatalf("qualifying %+v from status %q, diagnostic %v, identity %q, output %q", ref, status, diagnostic, identity, out)
			}
		}

		site := fakes.NewSite()
		site.Proofs.Register("h1", "id1")
		if kind == enrollment.KindQualifying {
			site.Proofs.SetReference("h1", ref.String())
		}
		before := site.Calls()
		got, err := newAgent(site, clock.NewFake(clock.Epoch)).Settle(context.Background(), c)
		writes := site.Calls().Sub(before).Writes()
		rec, _ := site.Proofs.Record("h1")
		switch kind {
		case enrollment.KindDiagnostic, enrollment.KindUnclassifiable:
			if writes != 0 || got.Action != enrollment.ProofNoAction || err != nil {
				t.Fatalf("%s completion: action %s, %d writes, err %v", kind, got.Action, writes, err)
			}
		case enrollment.KindUnsuccessful, enrollment.KindMalformedQualifying:
			if writes > 1 || rec.Proof != nil || got.Action == enrollment.ProofEstablished {
				t.Fatalf("%s completion: action %s, %d writes, proof %+v, err %v", kind, got.Action, writes, rec.Proof, err)
			}
		case enrollment.KindQualifying:
			if identity != "id1" {
				return // another identity: the fleet manager refuses; covered by TestProofAgentSettle
			}
			if err != nil || got.Action != enrollment.ProofEstablished || rec.Proof == nil || rec.Proof.Reference != ref.String() {
				t.Fatalf("qualifying completion on %s: action %s, proof %+v, err %v", ref, got.Action, rec.Proof, err)
			}
		default:
			t.Fatalf("unknown kind %q", kind)
		}
	})
}
