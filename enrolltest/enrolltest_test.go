package enrolltest_test

import (
	"testing"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
)

// The fake site seeds its vault where enrollment looks by default, so a
// fake run exercises the same item names as a real one.
func TestFakeVaultLayoutIsEnrollments(t *testing.T) {
	if fakes.FactoryItem != enrollment.DefaultFactoryItem || fakes.MonitoringItem != enrollment.DefaultMonitoringItem {
		t.Fatalf("fake items %q/%q, enrollment defaults %q/%q", fakes.FactoryItem, fakes.MonitoringItem, enrollment.DefaultFactoryItem, enrollment.DefaultMonitoringItem)
	}
	if fakes.AdminItem("h1") != enrollment.AdminItem("h1") {
		t.Fatalf("admin item: fake %q, enrollment %q", fakes.AdminItem("h1"), enrollment.AdminItem("h1"))
	}
}
