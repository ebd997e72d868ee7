package extensions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
)

// TestRenderRefusesTheRefusalSet renders each template of the corpus's
// refusal set as a webhook's requestTemplate: each ends with
// EXTENSION_TEMPLATE_BUDGET naming the task, the template position and the
// limit it ran into.
func TestRenderRefusesTheRefusalSet(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "refusals", "*.njk"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no refusal set: %v", err)
	}
	payload := specPayload(t, "server")
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".njk"), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			by, err := os.ReadFile(strings.TrimSuffix(f, ".njk") + ".refused")
			if err != nil {
				t.Fatal(err)
			}
			x := mustParse(t, definition(stage("serverRegistered", webhookTask("hook", string(src)))))
			by = []byte(strings.TrimSpace(string(by)))
			opts := RenderOptions{Limits: RenderLimits{Timeout: 300 * time.Millisecond}}
			if string(by) == "budget" {
				opts.Limits.Timeout = time.Minute // the budget must stop it on its own
			}
			_, err = x.Render(t.Context(), ServerRegisteredStage, payload, opts)
			fl, ok := hostforge.AsFailure(err)
			if !ok || fl.Code != TemplateBudget.Code {
				t.Fatalf("err = %v, want %s", err, TemplateBudget.Code)
			}
			key := map[string]string{"budget": "extensions.render_budget", "deadline": "extensions.render_timeout"}[string(by)]
			for _, want := range []string{"task hook", "requestTemplate", "line 1, column ", key} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
}

// TestRenderLimitsAreTheOptions: a budget or deadline given is the one
// applied, the zero value the defaults.
func TestRenderLimitsAreTheOptions(t *testing.T) {
	x := mustParse(t, definition(stage("serverRegistered", sshTask("cmd", `echo {{ "x".repeat(5000) | length }}`))))
	payload := specPayload(t, "server")
	if out, err := x.Render(t.Context(), ServerRegisteredStage, payload, RenderOptions{}); err != nil || string(out[0].Rendered) != `"echo 5000"` {
		t.Fatalf("default limits: %v, %v", out, err)
	}
	_, err := x.Render(t.Context(), ServerRegisteredStage, payload, RenderOptions{Limits: RenderLimits{Budget: 4096}})
	if !TemplateBudget.Is(err) || !strings.Contains(err.Error(), "commandTemplate") || !strings.Contains(err.Error(), "4096 bytes") {
		t.Fatalf("a 4 KiB budget: %v, want %s naming commandTemplate and the budget", err, TemplateBudget.Code)
	}
	if got := (RenderLimits{}); got.budget() != DefaultRenderBudget || got.timeout() != DefaultRenderTimeout {
		t.Fatalf("zero limits are %d, %s; want the defaults", got.budget(), got.timeout())
	}
}

// TestRenderInterruptedIsCancelled: a render whose caller's context ends
// (an operator's interrupt) is CANCELLED, not a template fault.
func TestRenderInterruptedIsCancelled(t *testing.T) {
	x := mustParse(t, definition(stage("serverRegistered", webhookTask("hook",
		`{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(60) }}`))))
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := x.Render(ctx, ServerRegisteredStage, specPayload(t, "server"), RenderOptions{Limits: RenderLimits{Timeout: time.Hour}})
	if !hostforge.Cancelled.Is(err) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %v, want %s", err, hostforge.Cancelled.Code)
	}
}
