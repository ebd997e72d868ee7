//go:build integration

package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/internal/itenv"
)

// TestEnrolRackThroughDevServer runs the example against the dev server
// scripts/integration started: every host of the demo rack closes, each
// with its own outcome, and every completion is settled.
func TestEnrolRackThroughDevServer(t *testing.T) {
	addr := itenv.TemporalAddress(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var out bytes.Buffer
	quiet := slog.New(slog.DiscardHandler)
	if err := run(ctx, &out, quiet, quiet, addr, "example-"+time.Now().Format("150405.000"), false); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cpu-r1-u10":        "available",
		"gpu-r1-u02":        "available",
		"bad-switch-u17":    "IRONIC_ROUTING_UNRESOLVED",
		"bad-offline-u18":   "NETBOX_STATUS_INELIGIBLE",
		"bad-miscabled-u30": "INSPECTION_CABLING_MISMATCH",
		"bad-optics-u32":    "IRONIC_FRONTEND_LINK_DOWN",
	}
	lines := strings.Split(out.String(), "\n")
	for host, result := range want {
		found := false
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) >= 3 && f[0] == host {
				found = true
				if f[2] != result || !strings.Contains(l, "→") {
					t.Errorf("%s: %q, want result %s and a settled proof", host, l, result)
				}
			}
		}
		if !found {
			t.Errorf("%s missing from the table:\n%s", host, out.String())
		}
	}
}
