package extensions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostforge/hostforge/internal/realdata"
)

// FuzzParse feeds arbitrary definition files to Parse, seeded with
// MetalSoft's real definitions: whatever the input, Parse returns an
// extension or errors (never both, never neither, never a panic), every
// problem has a JSON path, and a loaded extension binds only the twelve
// stages with unique labels and renders a real payload without panicking.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(realdataDir(f), "*.json"))
	for _, fn := range files {
		if b, err := os.ReadFile(fn); err == nil {
			f.Add(b)
		}
	}
	f.Add(definition(stage("serverRegistered", webhookTask("w", `{"s": {{ server.serialNumber | dump }}}`), sshTask("s", "echo {{ server.model | shellquote }}"), ansibleTask("a"))))
	payload := specPayload(f, "server")
	f.Fuzz(func(t *testing.T, b []byte) {
		x, ps := Parse(b, "fuzz")
		if (x == nil) != ps.HasErrors() {
			t.Fatalf("extension %v with problems %v", x != nil, ps)
		}
		for _, p := range ps {
			if len(p.Path) == 0 || p.Path[0] != '$' || p.Message == "" {
				t.Fatalf("problem without a path or message: %+v", p)
			}
		}
		if x == nil {
			return
		}
		for _, s := range Stages() {
			seen := map[string]bool{}
			for _, task := range x.Tasks(s) {
				if seen[task.Label] {
					t.Fatalf("stage %s binds label %q twice", s, task.Label)
				}
				seen[task.Label] = true
			}
		}
		_, _ = x.Render(t.Context(), ServerRegisteredStage, payload, RenderOptions{})
	})
}

// realdataDir is the real definitions' directory, or "" (no seeds) when
// the shared data is absent and not required.
func realdataDir(f *testing.F) string {
	dir, ok := realdata.Dir()
	if !ok {
		if os.Getenv(realdata.EnvRequire) == "1" {
			f.Fatalf("real test data %s is absent", dir)
		}
		return ""
	}
	return filepath.Join(dir, "extensions", "metalsoft")
}
