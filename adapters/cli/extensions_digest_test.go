package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `extensions validate` refuses a bundle downloaded without its sha256,
// or over plain http without allowHttp: exit 2, naming the JSON path and
// the key, so a definition fails where it is written, not when it runs.
func TestExtensionsValidateRefusesUnverifiedBundles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, asset string) string {
		p := filepath.Join(dir, name)
		def := strings.Replace(extDef, `"url": "https://example.com/b.zip", "sha256": "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1"`, asset, 1)
		if def == extDef {
			t.Fatal("the asset was not replaced")
		}
		if err := os.WriteFile(p, []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noDigest := write("nodigest.json", `"url": "https://example.com/b.zip?token=t0k"`)
	plain := write("plain.json", `"url": "http://example.com/b.zip", "sha256": "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1"`)
	optedIn := write("optedin.json", `"url": "http://example.com/b.zip", "sha256": "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1", "allowHttp": true`)

	r := run(t, "", nil, "extensions", "validate", noDigest)
	wantCode(t, r, ExitUsage)
	if !strings.Contains(r.out, "error: $.assets[0].sha256: missing") || strings.Contains(r.out+r.err, "t0k") {
		t.Errorf("validate of a bundle without sha256:\n%s%s", r.out, r.err)
	}
	r = run(t, "", nil, "extensions", "validate", plain)
	wantCode(t, r, ExitUsage)
	if !strings.Contains(r.out, "error: $.assets[0].url:") || !strings.Contains(r.out, "allowHttp") {
		t.Errorf("validate of a plain http bundle:\n%s%s", r.out, r.err)
	}
	r = run(t, "", nil, "extensions", "validate", optedIn)
	wantCode(t, r, ExitOK)
}
