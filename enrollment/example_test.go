package enrollment_test

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// Enrol one host of a fake site: read its intent, pass the status gate,
// record its platform class and activate it. DHCP, BMC and Ironic are gated
// off here; a real deployment wires their phases into the Executor.
func ExampleEnroll() {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "cpu-r1-u10", Class: intent.ClassCPUBaremetal, Manufacturer: "Dell", Model: "PowerEdge R7615"})

	exec := &enrollment.Executor{NetBox: site.NetBox, FleetManager: site.FleetManager, Vault: site.Vault}
	rt := exec.Local(site.Clock)
	cfg := enrollment.SiteConfig{IronicInstances: map[string]string{intent.ClassCPUBaremetal: "ironic-cpu"}}
	req := enrollment.NewRequest("cpu-r1-u10", intent.ClassCPUBaremetal, "lab1", cfg, true, enrollment.Params{})

	res, err := enrollment.Enroll(context.Background(), rt, req)
	fmt.Println("error:", err)
	fmt.Println("platform class:", res.PlatformClass)
	for _, p := range res.Phases {
		fmt.Printf("%-24s %-8s %s\n", p.Phase, p.Status, p.Note)
	}
	// Output:
	// error: <nil>
	// platform class: NOGPU_DELLPOWEREDGER7615_NORDMA_01
	// resolve_ironic_instance  done     ironic-cpu
	// netbox_status_gate       done     staged
	// record_platform_class    done     NOGPU_DELLPOWEREDGER7615_NORDMA_01
	// configure_dhcp           skipped  enrollment_configure_dhcp is off
	// configure_bmc            skipped  enrollment_configure_bmc is off
	// netbox_activation        done     staged → active
	// ironic                   skipped  enrollment_ironic_enrol is off
}

// A device NetBox does not route fails before anything is touched.
func ExampleRoute() {
	req := enrollment.NewRequest("leaf-7", intent.ClassSwitch, "lab1", enrollment.SiteConfig{}, false, enrollment.Params{})
	_, err := enrollment.Route(req)
	fmt.Println(err)
	// Output: IRONIC_ROUTING_UNRESOLVED (resolve_ironic_instance): device leaf-7: no Ironic instance manages device_class "SWITCH"
}
