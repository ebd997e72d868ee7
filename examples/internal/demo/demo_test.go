package demo_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/enrollment/enrollfake"
	"github.com/hostforge/hostforge/examples/internal/demo"
)

// The quickstart's rack: each broken host fails with its own code, the
// healthy ones do not fail, and the second run writes nothing anywhere.
func TestDemoRack(t *testing.T) {
	site := demo.NewSite()
	exec := enrollfake.Executor(site, nil)
	ctx := context.Background()
	first := demo.EnrollAll(ctx, site, exec, site.NetBox, demo.SiteConfig())
	want := map[string]string{
		"bad-noclass-u16":   "IRONIC_ROUTING_UNRESOLVED",
		"bad-switch-u17":    "IRONIC_ROUTING_UNRESOLVED",
		"bad-offline-u18":   "NETBOX_STATUS_INELIGIBLE",
		"bad-nogputype-u20": "PLATFORM_CLASS_UNRESOLVABLE",
		"bad-ztp-u24":       "PLATFORM_CLASS_UNRESOLVABLE",
	}
	for _, r := range first {
		code := ""
		if r.Failure != nil {
			code = r.Failure.Code
		}
		if w, broken := want[r.Host]; broken {
			if code != w {
				t.Errorf("%s: %s, want %s", r.Host, code, w)
			}
			continue
		}
		if code != "" && code != "NOT_IMPLEMENTED" {
			t.Errorf("healthy host %s failed: %v", r.Host, r.Failure)
		}
		if r.Result.PlatformClass == "" {
			t.Errorf("healthy host %s has no platform class", r.Host)
		}
	}
	second := demo.EnrollAll(ctx, site, exec, site.NetBox, demo.SiteConfig())
	for _, r := range second {
		if w := r.Calls.Writes(); w != 0 {
			t.Errorf("rerun of %s wrote %d times: %s", r.Host, w, r.Calls)
		}
	}
	var out bytes.Buffer
	demo.PrintTable(&out, "title", first)
	for _, s := range []string{"HOST", "gpu-r1-u02", "IRONIC_ROUTING_UNRESOLVED", "Operator actions:", "next: Fix the device role"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out.String())
		}
	}
}
