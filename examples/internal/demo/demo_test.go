package demo_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/examples/internal/demo"
)

// The quickstart's rack: each broken host fails with its own code, every
// healthy host reaches available, and the second run writes nothing for any
// host that converged (or that failed before touching anything).
func TestDemoRack(t *testing.T) {
	site := demo.NewSite()
	exec := enrolltest.Executor(site, nil)
	ctx := context.Background()
	first := demo.EnrollAll(ctx, site, exec, site.NetBox, demo.SiteConfig())
	want := map[string]string{
		"bad-noclass-u16":   "IRONIC_ROUTING_UNRESOLVED",
		"bad-switch-u17":    "IRONIC_ROUTING_UNRESOLVED",
		"bad-offline-u18":   "NETBOX_STATUS_INELIGIBLE",
		"bad-nogputype-u20": "PLATFORM_CLASS_UNRESOLVABLE",
		"bad-ztp-u24":       "PLATFORM_CLASS_UNRESOLVABLE",
		"bad-miscabled-u30": "INSPECTION_CABLING_MISMATCH",
		"bad-optics-u32":    "IRONIC_FRONTEND_LINK_DOWN",
	}
	healthy := 0
	for _, r := range first {
		code := ""
		if r.Failure != nil {
			code = r.Failure.Code
		}
		if w, broken := want[r.Host]; broken {
			if code != w {
				t.Errorf("%s: %q, want %s", r.Host, code, w)
			}
			continue
		}
		healthy++
		if r.Failure != nil || !r.Result.Enrolled || r.Result.ProvisionState != "available" || r.Result.Node == "" {
			t.Errorf("healthy host %s: %+v", r.Host, r.Result)
		}
		if r.Result.PlatformClass == "" {
			t.Errorf("healthy host %s has no platform class", r.Host)
		}
	}
	if healthy != 6 {
		t.Fatalf("healthy hosts = %d, want 6", healthy)
	}
	second := demo.EnrollAll(ctx, site, exec, site.NetBox, demo.SiteConfig())
	for _, r := range second {
		if r.Host == "bad-miscabled-u30" || r.Host == "bad-optics-u32" {
			continue // a failed inspection is redone on rerun
		}
		if w := r.Calls.Writes(); w != 0 {
			t.Errorf("rerun of %s wrote %d times: %s", r.Host, w, r.Calls)
		}
	}
	var out bytes.Buffer
	demo.PrintTable(&out, "title", first)
	for _, s := range []string{"HOST", "gpu-r1-u02", "available", "IRONIC_ROUTING_UNRESOLVED", "Operator actions:", "next: Fix the device role", "check switch/cabling/optics"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out.String())
		}
	}
}
