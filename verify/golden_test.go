package verify_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/hostforge/hostforge/verify"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestReportGolden pins the rendered report and failure message an operator
// reads for the real R320 with two faults at once (a moved cable, a BIOS on
// the block list): every mismatch, in check order.
func TestReportGolden(t *testing.T) {
	h := realHosts[1]
	d := loadDoc(t, h)
	exp := loadExpect(t, h.expect)
	for _, name := range []string{"moved-cable", "blocked-bios"} {
		for _, f := range faults {
			if f.name == name {
				f.apply(t, h, d, &exp)
			}
		}
	}
	rep := verify.Check(d.parse(t), exp)
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := string(b) + "\n\n" + rep.Err().Error() + "\n"
	path := filepath.Join("testdata", "r320-two-faults.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestReportGolden -update)", err)
	}
	if got != string(want) {
		t.Errorf("report differs from %s (rerun with -update if intended):\n%s", path, got)
	}
}
