package enrolltest_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// Embed the engine: one host through every gate — DHCP, the BMC, Ironic
// enrolment, inspection verified against NetBox's cables, the switch to
// IPMI, cleaning — on in-memory fakes. The runtime runs on the site's fake
// clock: the BMC's resets and jobs and Ironic's cleaning take virtual
// minutes and no real time (clock.Real{} would wait them out for real).
// With real systems, adapters/wiring builds the executor from a config
// file, as the CLI and the worker do.
func Example() {
	ctx := context.Background()
	site := fakes.NewSite() // or your adapters: NetBox, fleet manager, vault, phases
	site.AddIronic("ironic-cpu")
	site.AddHost(fakes.HostSpec{Name: "cpu-r1-u10", Class: intent.ClassCPUBaremetal, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell"})

	exec := enrolltest.Executor(site, slog.New(slog.DiscardHandler)) // every phase wired to the site's fakes
	rt := exec.Local(site.Clock)                                     // a flow.Local; or the Temporal runtime
	cfg := enrollment.SiteConfig{
		ConfigureDHCP:               true,
		ConfigureBMC:                true,
		IronicEnrol:                 true,
		SwitchToIPMIAfterInspection: true,
		IronicInstances:             map[string]string{intent.ClassCPUBaremetal: "ironic-cpu"},
	}

	start := site.Clock.Now()
	req, err := enrollment.Submit(ctx, site.NetBox, "cpu-r1-u10", enrollment.SubmitOptions{Site: "lab1", Config: cfg, PlatformClassReady: true})
	var res enrollment.Result
	if err == nil {
		res, err = enrollment.Enroll(ctx, rt, req)
	}
	if f, ok := hostforge.AsFailure(err); ok {
		fmt.Printf("%s owned by %s: %s\n", f.Code, f.Owner, f.Action)
		return
	}
	fmt.Println(res.Device, "enrolled:", res.Enrolled, "on", res.Instance, "as", res.ProvisionState, res.PlatformClass)
	for _, p := range res.Phases {
		fmt.Println(" ", strings.TrimSpace(p.Phase+" "+p.Status+" "+p.Note))
	}
	fmt.Println("virtual time:", site.Clock.Now().Sub(start))
	// Output:
	// cpu-r1-u10 enrolled: true on ironic-cpu as available NOGPU_DELLPOWEREDGER7615_NORDMA_01
	//   resolve_ironic_instance done ironic-cpu
	//   netbox_status_gate done staged
	//   record_platform_class done NOGPU_DELLPOWEREDGER7615_NORDMA_01
	//   configure_dhcp done
	//   configure_bmc done
	//   netbox_activation done staged → active
	//   ironic done available
	// virtual time: 23m10s
}
