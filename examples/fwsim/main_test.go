package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-hosts", "40", "-seed", "2"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "invariants: all held") {
		t.Fatalf("output:\n%s", out.String())
	}
	for _, bad := range [][]string{{"-hosts", "0"}, {"-drifted", "2"}, {"-o", "yaml"}, {"-store", "mysql:x"}} {
		if code := run(bad, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if code := run([]string{"-hosts", "12", "-store", "sqlite:" + filepath.Join(t.TempDir(), "fw.db"), "-o", "json"}, &out, &errb); code != 0 {
		t.Fatalf("sqlite: exit %d: %s", code, errb.String())
	}
}
