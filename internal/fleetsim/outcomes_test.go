package fleetsim_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/internal/fleetsim"
)

// TestOutcomeTableIsTheDocumentedOne: the package documentation shows the
// table the suite uses, row for row.
func TestOutcomeTableIsTheDocumentedOne(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range fleetsim.Outcomes.Rows() {
		if !strings.Contains(string(doc), "//\t"+row+"\n") {
			t.Errorf("doc.go does not show the row\n\t%s", row)
		}
	}
}

// TestOutcomeTableAgreesWithTheDeclaredCodes: every outcome the table
// names is a declared code, with the owner and retryability the table
// gives it — so a declaration that drifts from the specification fails.
func TestOutcomeTableAgreesWithTheDeclaredCodes(t *testing.T) {
	var all []fleetsim.Outcome
	for _, kinds := range fleetsim.Outcomes.Calls {
		for _, os := range kinds {
			all = append(all, os...)
		}
	}
	for _, os := range fleetsim.Outcomes.Events {
		all = append(all, os...)
	}
	for _, b := range fleetsim.Breakages {
		all = append(all, fleetsim.Outcomes.Breakage(b, true), fleetsim.Outcomes.Breakage(b, false))
	}
	for _, o := range all {
		if o == fleetsim.Converges {
			continue
		}
		spec, ok := hostforge.Lookup(o.Code)
		if !ok {
			t.Errorf("%s is not a declared code", o.Code)
			continue
		}
		if spec.Owner != o.Owner || spec.Retryable != o.Retryable {
			t.Errorf("the table says %s; the code is declared %s, retryable %v", o, spec.Owner, spec.Retryable)
		}
	}
}

// TestCheckHoldsHostsToTheTable: the check compares each host's end with
// the table, not with another run — a table that expects something else of
// a breakage or does not explain a fault is reported.
func TestCheckHoldsHostsToTheTable(t *testing.T) {
	wrong := fleetsim.Outcomes
	wrong.Breakage = func(fleetsim.Breakage, bool) fleetsim.Outcome {
		return fleetsim.Outcome{Code: "INSPECTION_CABLING_MISMATCH", Owner: hostforge.OwnerNetwork, Retryable: false}
	}
	s := fleetsim.Schedule{Seed: 5, Fleet: fleetsim.Config{Hosts: 4, Seed: 5, Broken: 1, Breakages: []fleetsim.Breakage{fleetsim.Miscabled}}}
	problems := fleetsim.Check(context.Background(), s, fleetsim.CheckOptions{Table: &wrong})
	if !strings.Contains(strings.Join(problems, "\n"), "but the table says INSPECTION_CABLING_MISMATCH (NETWORK, not retryable)") {
		t.Fatalf("a table giving the breakage another owner was not held against the host:\n%s", strings.Join(problems, "\n"))
	}

	silent := fleetsim.Outcomes
	silent.Calls = map[string]map[fleetsim.FaultKind][]fleetsim.Outcome{}
	s = fleetsim.Schedule{Seed: 6, Fleet: fleetsim.Config{Hosts: 1, Seed: 6},
		Faults: []fleetsim.Fault{{System: fakes.SysNetBox, Op: "device", N: 50, Kind: fleetsim.Fault5xx}}}
	problems = fleetsim.Check(context.Background(), s, fleetsim.CheckOptions{Table: &silent})
	if !strings.Contains(strings.Join(problems, "\n"), "NETBOX_UNAVAILABLE (INFRA_ENG, retryable), which none of its causes explains") {
		t.Fatalf("a failure no row explains was not reported:\n%s", strings.Join(problems, "\n"))
	}
	if problems := fleetsim.Check(context.Background(), s, fleetsim.CheckOptions{}); len(problems) > 0 {
		t.Fatalf("the real table does not explain a NetBox outage:\n%s", strings.Join(problems, "\n"))
	}
}

// TestCrashedAttemptsRunAgain: a worker that dies in the middle of a
// password rotation (after its first BMC write, and again after the vault
// write-ahead) leaves nothing the rerun of the attempt cannot finish: the
// host converges with exactly one rotation and the vault holds the password.
func TestCrashedAttemptsRunAgain(t *testing.T) {
	for _, after := range []int{1, 2, 3} {
		s := fleetsim.Schedule{Seed: 9, Fleet: fleetsim.Config{Hosts: 1, Seed: 9, FactoryReset: 1},
			Faults: []fleetsim.Fault{{System: fleetsim.SysWorker, Op: "configure_bmc", N: after, Kind: fleetsim.FaultCrash}}}
		v := fleetsim.CheckSchedule(context.Background(), s, fleetsim.CheckOptions{})
		if len(v.Problems) > 0 {
			t.Fatalf("crash after %d writes:\n%s", after, strings.Join(v.Problems, "\n"))
		}
		if v.Crashes != 1 || v.Rotations != 1 || v.FailedFaulted != 0 {
			t.Fatalf("crash after %d writes: %+v; want one crash, one rotation and the host converged in the faulted run", after, v)
		}
	}
}
