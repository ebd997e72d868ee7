package demo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/examples/internal/demo"
	"github.com/hostforge/hostforge/flow"
)

// A successful enrollment on the fake site is a well-formed qualifying
// completion: once the fleet manager's projector has read the node from the
// fake Ironic, the proof agent establishes proof on the first attempt. The
// projection comes from Ironic, never from the result being checked.
func TestSuccessfulEnrollmentEstablishesProof(t *testing.T) {
	site := demo.NewSite()
	exec := enrolltest.Executor(site, nil)
	ctx := context.Background()
	const host = "cpu-r1-u10"
	site.Proofs.Register(host, "id-1")
	_, since, err := site.Proofs.Snapshot(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	req, err := enrollment.Submit(ctx, site.NetBox, host, enrollment.SubmitOptions{Site: demo.Site, Config: demo.SiteConfig(), PlatformClassReady: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := enrollment.Enroll(ctx, &flow.Local{Steps: exec, Log: exec.Log, Clock: site.Clock}, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enrolltest.Projector(site).Project(ctx); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res)
	agent := &enrollment.ProofAgent{Store: site.Proofs, Clock: site.Clock}
	got, err := agent.Settle(ctx, enrollment.Completion{Device: host, Identity: "id-1", Since: since, Run: "run-1",
		Status: enrollment.CompletionCompleted, ClosedAt: site.Clock.Now(), Output: out})
	if err != nil || got.Kind != enrollment.KindQualifying || got.Action != enrollment.ProofEstablished || got.Attempts != 1 {
		t.Fatalf("settle = %+v, %v", got, err)
	}
	if rec, ok := site.Proofs.Record(host); !ok || !rec.Valid() {
		t.Fatalf("proof record = %+v", rec)
	}
}
