package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostforge/hostforge/adapters/wiring"
)

// 'hostforge config example' prints examples/config/site.yaml, and what it
// prints loads as it is.
func TestConfigExample(t *testing.T) {
	r := run(t, "", nil, "config", "example")
	wantCode(t, r, ExitOK)
	want, err := os.ReadFile(filepath.Join("..", "..", "examples", "config", "site.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if r.out != string(want) {
		t.Errorf("config example differs from examples/config/site.yaml (go generate .)")
	}
	path := filepath.Join(t.TempDir(), "site.yaml")
	if err := os.WriteFile(path, []byte(r.out), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := wiring.Load(path); err != nil {
		t.Fatalf("the printed sample does not load: %v", err)
	}
	wantCode(t, run(t, "", nil, "config"), ExitUsage)
}
