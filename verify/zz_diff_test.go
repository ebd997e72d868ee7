package verify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/verify"
)

// dumps ParseInventory's result for every JSON input into $PARSEDUMP.
func TestZZDump(t *testing.T) {
	out := os.Getenv("PARSEDUMP")
	if out == "" {
		t.Skip()
	}
	var files []string
	for _, root := range []string{"/work/shared/testdata", "/tmp/invsnap", "testdata"} {
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && strings.HasSuffix(p, ".json") {
				files = append(files, p)
			}
			return nil
		})
	}
	// fuzz corpus entries
	fz, _ := filepath.Glob("testdata/fuzz/*/*")
	var buf strings.Builder
	one := func(name string, b []byte) {
		inv, err := verify.ParseInventory(b)
		j, _ := json.Marshal(inv)
		buf.WriteString(name + "\n" + string(j) + "\n")
		if err != nil {
			buf.WriteString("ERR " + err.Error() + "\n")
		}
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		one(f, b)
	}
	for _, f := range fz {
		b, _ := os.ReadFile(f)
		one(f, b)
	}
	// mutations: every string value replaced with escapes and odd types
	for _, f := range files[:20] {
		b, _ := os.ReadFile(f)
		s := string(b)
		one(f+"#esc", []byte(strings.ReplaceAll(s, `":"`, `":"\u00e9\\/`)))
		one(f+"#num", []byte(strings.ReplaceAll(s, `":"`, `":1,"x":"`)))
		one(f+"#bad", append([]byte(strings.ReplaceAll(s, `":"`, "\":\"\xff")), 0))
	}
	os.WriteFile(out, []byte(buf.String()), 0o644)
	t.Logf("%d files", len(files)+len(fz))
}
