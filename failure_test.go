package hostforge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/internal/failurecat"
)

var testSpec = hostforge.Spec{Code: "TEST_CODE", Phase: "test_phase", Owner: hostforge.OwnerDCOps, Retryable: true, Action: "do the thing"}

func TestFailureErrorAndUnwrap(t *testing.T) {
	cause := errors.New("connection reset")
	f := testSpec.Wrap(cause, "device %s: port %s", "h1", "eth0")
	if got, want := f.Error(), "TEST_CODE (test_phase): device h1: port eth0: connection reset"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(f, cause) {
		t.Fatal("errors.Is(failure, cause) = false")
	}
	wrapped := fmt.Errorf("outer: %w", f)
	if got := hostforge.CodeOf(wrapped); got != "TEST_CODE" {
		t.Fatalf("CodeOf(wrapped) = %q", got)
	}
	if !testSpec.Is(wrapped) {
		t.Fatal("spec.Is(wrapped) = false")
	}
	if !errors.Is(wrapped, testSpec.New("")) {
		t.Fatal("errors.Is(wrapped, same-code failure) = false")
	}
	other := hostforge.Spec{Code: "OTHER"}
	if errors.Is(wrapped, other.New("")) {
		t.Fatal("errors.Is matched a different code")
	}
	got, ok := hostforge.AsFailure(wrapped)
	if !ok || got.Owner != hostforge.OwnerDCOps || !got.Retryable || got.Action != "do the thing" {
		t.Fatalf("AsFailure = %+v, %v", got, ok)
	}
	if hostforge.CodeOf(nil) != "" || hostforge.CodeOf(errors.New("x")) != "" {
		t.Fatal("CodeOf of a plain error must be empty")
	}
}

func TestFailureWithoutPhaseOrCause(t *testing.T) {
	s := hostforge.Spec{Code: "BARE"}
	if got := s.New("").Error(); got != "BARE" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestFailureJSONDropsCause(t *testing.T) {
	f := testSpec.Wrap(errors.New("secret-bearing cause"), "msg")
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "secret-bearing") {
		t.Fatalf("cause leaked into JSON: %s", b)
	}
	var back hostforge.Failure
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Code != "TEST_CODE" || back.Owner != hostforge.OwnerDCOps || back.Message != "msg" || !back.Retryable {
		t.Fatalf("round trip = %+v", back)
	}
}

func TestClassify(t *testing.T) {
	wait := hostforge.RetryAfter(20*time.Second, "node_locked", "locked by %s", "conductor-2")
	fail := testSpec.New("boom")
	tests := []struct {
		name      string
		err       error
		outcome   hostforge.Outcome
		code      string
		retryable bool
	}{
		{"nil is done", nil, hostforge.Done, "", false},
		{"wait", fmt.Errorf("x: %w", wait), hostforge.Waiting, "", false},
		{"failure", fmt.Errorf("x: %w", fail), hostforge.Failed, "TEST_CODE", true},
		{"failure wins over wait", testSpec.Wrap(wait, "gave up"), hostforge.Failed, "TEST_CODE", true},
		{"cancelled", context.Canceled, hostforge.Failed, "CANCELLED", true},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), hostforge.Failed, "CANCELLED", true},
		{"plain error is a bug", errors.New("oops"), hostforge.Failed, "UNCLASSIFIED", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, f, w := hostforge.Classify(tt.err)
			if o != tt.outcome {
				t.Fatalf("outcome = %v, want %v", o, tt.outcome)
			}
			switch o {
			case hostforge.Done:
				if f != nil || w != nil {
					t.Fatal("done carries a failure or wait")
				}
			case hostforge.Waiting:
				if w == nil || w.After != 20*time.Second || w.Reason != "node_locked" || !strings.Contains(w.Detail, "conductor-2") {
					t.Fatalf("wait = %+v", w)
				}
			case hostforge.Failed:
				if f == nil || f.Code != tt.code || f.Retryable != tt.retryable {
					t.Fatalf("failure = %+v", f)
				}
				if tt.code == "UNCLASSIFIED" && f.Owner != hostforge.OwnerSDK {
					t.Fatalf("unclassified owner = %s", f.Owner)
				}
			}
			back := hostforge.Classified(tt.err)
			if hostforge.CodeOf(back) != tt.code {
				t.Fatalf("Classified code = %q", hostforge.CodeOf(back))
			}
		})
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[hostforge.Outcome]string{hostforge.Done: "done", hostforge.Waiting: "wait", hostforge.Failed: "failed", hostforge.Outcome(9): "unknown"} {
		if o.String() != want {
			t.Errorf("%d.String() = %q, want %q", o, o.String(), want)
		}
	}
}

func TestWaitError(t *testing.T) {
	w := hostforge.RetryAfter(time.Minute, "bmc_busy", "503 %s", "host booting")
	if got := w.Error(); got != "wait 1m0s (bmc_busy): 503 host booting" {
		t.Fatalf("Error() = %q", got)
	}
	if _, ok := hostforge.AsWait(errors.New("x")); ok {
		t.Fatal("AsWait matched a plain error")
	}
}

func TestDeclareRefusesBadSpecs(t *testing.T) {
	cases := map[string]hostforge.Spec{
		"lower-case code": {Code: "bad_code", Phase: "p", Owner: hostforge.OwnerSDK, Action: "a"},
		"no owner":        {Code: "NO_OWNER_X", Phase: "p", Action: "a"},
		"no action":       {Code: "NO_ACTION_X", Phase: "p", Owner: hostforge.OwnerSDK},
		"no phase":        {Code: "NO_PHASE_X", Owner: hostforge.OwnerSDK, Action: "a"},
		"duplicate":       {Code: "UNCLASSIFIED", Phase: "p", Owner: hostforge.OwnerSDK, Action: "a"},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("Declare accepted a bad spec")
				}
			}()
			hostforge.Declare(s)
		})
	}
}

func TestRegistry(t *testing.T) {
	s, ok := hostforge.Lookup("UNCLASSIFIED")
	if !ok || s.Owner != hostforge.OwnerSDK || s.Retryable {
		t.Fatalf("Lookup(UNCLASSIFIED) = %+v, %v", s, ok)
	}
	if _, ok := hostforge.Lookup("NO_SUCH_CODE"); ok {
		t.Fatal("Lookup found an undeclared code")
	}
	codes := hostforge.Codes()
	for i := 1; i < len(codes); i++ {
		if codes[i-1].Code >= codes[i].Code {
			t.Fatalf("Codes() not sorted: %s before %s", codes[i-1].Code, codes[i].Code)
		}
	}
}

// TestFailureCatalogueIsFresh fails when docs/failure-codes.md does not match
// the declarations in the source: run `go generate .` to refresh it.
func TestFailureCatalogueIsFresh(t *testing.T) {
	entries, err := failurecat.Scan(".")
	if err != nil {
		t.Fatal(err)
	}
	want := failurecat.Render(entries)
	got, err := os.ReadFile("docs/failure-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("docs/failure-codes.md is stale: run `go generate .` and commit it")
	}
	// Every code linked into this binary is in the catalogue with the same fields.
	byCode := map[string]failurecat.Entry{}
	for _, e := range entries {
		byCode[e.Code] = e
	}
	for _, s := range hostforge.Codes() {
		if s.Code == "TEST_CODE" {
			continue
		}
		e, ok := byCode[s.Code]
		if !ok || e.Owner != string(s.Owner) || e.Retryable != s.Retryable || e.Action != s.Action || e.Phase != s.Phase {
			t.Errorf("registry %+v disagrees with catalogue %+v", s, e)
		}
	}
}

func TestSystemSpecsClassify(t *testing.T) {
	notFound := hostforge.Spec{Code: "X_NOT_FOUND", Phase: "default", Owner: hostforge.OwnerInfraEng, Action: "a"}
	down := hostforge.Spec{Code: "X_DOWN", Phase: "default", Owner: hostforge.OwnerInfraEng, Retryable: true, Action: "a"}
	m := hostforge.SystemSpecs{NotFound: &notFound, Unavailable: &down}
	own := testSpec.New("already classified")
	wait := hostforge.RetryAfter(time.Second, "r", "d")
	tests := []struct {
		name string
		err  error
		code string
		same bool // returned unchanged
	}{
		{"nil", nil, "", true},
		{"failure passes", own, "TEST_CODE", true},
		{"wait passes", wait, "", true},
		{"context passes", fmt.Errorf("x: %w", context.Canceled), "", true},
		{"not found", fmt.Errorf("device h1: %w", hostforge.ErrNotFound), "X_NOT_FOUND", false},
		{"unavailable", fmt.Errorf("503: %w", hostforge.ErrUnavailable), "X_DOWN", false},
		{"unmapped kind stays unclassified", fmt.Errorf("401: %w", hostforge.ErrUnauthorized), "", true},
		{"plain error stays unclassified", errors.New("boom"), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := m.Classify(tt.err, "read_intent", "reading %s", "h1")
			if tt.same && got != tt.err {
				t.Fatalf("Classify changed %v into %v", tt.err, got)
			}
			if hostforge.CodeOf(got) != tt.code {
				t.Fatalf("code = %q, want %q", hostforge.CodeOf(got), tt.code)
			}
			if f, ok := hostforge.AsFailure(got); ok && !tt.same {
				if f.Phase != "read_intent" || !strings.Contains(f.Error(), "reading h1") || !errors.Is(f, tt.err) {
					t.Fatalf("failure = %v (phase %s)", f, f.Phase)
				}
			}
		})
	}
}

func TestSpecAtRaisesInAnotherPhase(t *testing.T) {
	spec := hostforge.Declare(hostforge.Spec{Code: "TEST_AT_CODE", Phase: "home", Owner: hostforge.OwnerSDK, Action: "none: test code"})
	f := spec.At("elsewhere").New("x %d", 1)
	if f.Phase != "elsewhere" || f.Code != "TEST_AT_CODE" || spec.Phase != "home" {
		t.Fatalf("At: failure %+v, declared spec phase %q", f, spec.Phase)
	}
	if !spec.Is(f) {
		t.Fatal("a failure raised At another phase is still the declared code")
	}
}

func TestNormalizeMAC(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"B0:83:FE:C6:63:86", "b0:83:fe:c6:63:86", true},
		{" b0-83-fe-c6-63-86 ", "b0:83:fe:c6:63:86", true},
		{"b083.fec6.6386", "b0:83:fe:c6:63:86", true},
		{"not-a-mac", "not-a-mac", false},
		{" JUNK ", "junk", false},
		{"", "", false},
	} {
		got, ok := hostforge.NormalizeMAC(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("NormalizeMAC(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
