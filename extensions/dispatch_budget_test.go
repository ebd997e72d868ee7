package extensions_test

import (
	"strings"
	"testing"

	"github.com/hostforge/hostforge/extensions"
)

// TestDispatchRendersWithinItsLimits: the dispatcher's render limits apply
// to every task it runs, and a task over them fails with
// EXTENSION_TEMPLATE_BUDGET before its runner is called.
func TestDispatchRendersWithinItsLimits(t *testing.T) {
	bomb := strings.Replace(string(def("alpha", "", "a1:webhook:continue", "a2:ssh")),
		`{{ server.serialNumber }}`, `{{ server.serialNumber.repeat(4000) | length }}`, 1)
	w := newWorld(t, []byte(bomb))
	rep := w.fire(t, serverEvent(t, "evt-unlimited"))
	if summary(rep) != "alpha/a1=succeeded alpha/a2=succeeded" {
		t.Fatalf("with the default limits: %s", summary(rep))
	}
	w.runner.Reset()
	w.d.Limits = extensions.RenderLimits{Budget: 4096}
	rep = w.fire(t, serverEvent(t, "evt-limited"))
	if summary(rep) != "alpha/a1=failed alpha/a2=succeeded" || rep.Deliveries[0].Code != extensions.TemplateBudget.Code {
		t.Fatalf("with a 4 KiB budget: %s %+v, want a1 failed with %s", summary(rep), rep.Deliveries[0], extensions.TemplateBudget.Code)
	}
	for _, r := range w.runner.Requests() {
		if r.Task == "a1" {
			t.Fatal("the runner was called for a task whose template did not render")
		}
	}
}
