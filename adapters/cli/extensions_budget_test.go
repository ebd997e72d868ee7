package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTemplateDef writes a definition whose one webhook task renders tpl
// into dir, and a serverRegistered payload beside the test's files.
func writeTemplateDef(t *testing.T, dir, name, tpl string) (def, payload string) {
	t.Helper()
	d := map[string]any{
		"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": name, "label": name,
		"extensionType": "workflow", "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": map[string]any{},
		"inputs": []any{}, "outputs": []any{}, "assets": []any{},
		"onAssetChange": []any{map[string]any{"stage": "serverRegistered", "tasks": []any{map[string]any{
			"label": "hook", "taskType": "ExtensionTaskWebhook",
			"options": map[string]any{"endpoint": "https://hooks.example.com/", "method": "POST", "requestTemplate": tpl}}}}},
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	def = filepath.Join(dir, name+".json")
	payload = filepath.Join(t.TempDir(), "server.json")
	if err := os.WriteFile(def, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(payload, []byte(`{"server": {"serialNumber": "6SBT0R3"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return def, payload
}

// TestRenderBudgetEndsTheCommand renders the corpus's refusal set with
// `extensions render` as shipped: each ends with EXTENSION_TEMPLATE_BUDGET
// (exit 4) naming the task and the template position.
func TestRenderBudgetEndsTheCommand(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "extensions", "testdata", "refusals", "*.njk"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no refusal set: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".njk")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			def, payload := writeTemplateDef(t, t.TempDir(), "bomb", string(src))
			r := run(t, "", nil, "extensions", "render", "--definition", def, "--stage", "serverRegistered", "--payload", payload)
			wantCode(t, r, ExitInfra)
			wantError(t, r, "EXTENSION_TEMPLATE_BUDGET", "task hook", "requestTemplate", "line 1, column ")
		})
	}
}

// TestRenderLimitsFromConfig: --config gives render its budget and
// deadline (and the definitions directory).
func TestRenderLimitsFromConfig(t *testing.T) {
	dir := t.TempDir()
	_, payload := writeTemplateDef(t, dir, "big", `{{ "x".repeat(100000) | length }}`)
	cfg := filepath.Join(t.TempDir(), "site.yaml")
	write := func(limits string) {
		doc := "site: lab1\nnetbox:\n  url: https://netbox.example.net\nextensions:\n  definitions: " + dir + "\n" + limits
		if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	r := run(t, "", nil, "extensions", "render", "--config", cfg, "--stage", "serverRegistered", "--payload", payload)
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, "100000") {
		t.Fatalf("stdout %q", r.out)
	}
	write("  render_budget: 64KiB\n")
	r = run(t, "", nil, "extensions", "render", "--config", cfg, "--stage", "serverRegistered", "--payload", payload)
	wantCode(t, r, ExitInfra)
	wantError(t, r, "EXTENSION_TEMPLATE_BUDGET", "65536 bytes", "extensions.render_budget")

	_, _ = writeTemplateDef(t, dir, "big", `{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(60) }}`)
	write("  render_timeout: 100ms\n")
	r = run(t, "", nil, "extensions", "render", "--config", cfg, "--stage", "serverRegistered", "--payload", payload)
	wantCode(t, r, ExitInfra)
	wantError(t, r, "EXTENSION_TEMPLATE_BUDGET", "100ms", "extensions.render_timeout")

	r = run(t, "", nil, "extensions", "render", "--stage", "serverRegistered", "--payload", payload)
	wantCode(t, r, ExitUsage)
	wantError(t, r, "--definition", "--config")
}

// TestFireRenderLimitsFromConfig: fire --config renders within the
// config's render budget; a task past it fails with
// EXTENSION_TEMPLATE_BUDGET and nothing is sent.
func TestFireRenderLimitsFromConfig(t *testing.T) {
	dir := t.TempDir()
	_, payload := writeTemplateDef(t, dir, "big", `{{ "x".repeat(100000) | length }}`)
	cfg := filepath.Join(t.TempDir(), "site.yaml")
	doc := "site: lab1\nnetbox:\n  url: https://netbox.example.net\nextensions:\n  definitions: " + dir + "\n  render_budget: 64KiB\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", nil, "extensions", "fire", "--config", cfg, "--stage", "serverRegistered", "--payload", payload, "-o", "json")
	wantCode(t, r, ExitInfra)
	if !strings.Contains(r.out, `"status": "failed"`) || !strings.Contains(r.out, "EXTENSION_TEMPLATE_BUDGET") || !strings.Contains(r.out, "65536 bytes") {
		t.Fatalf("stdout %s\nstderr %s", r.out, r.err)
	}
}
