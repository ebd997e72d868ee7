package bmc_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/bmc/bmctest"
	"github.com/hostforge/hostforge/fakes"
)

// Configure a Supermicro BMC in the fake world, then rerun: the second run
// finds every setting converged and writes nothing.
func ExampleConfigurator_Configure() {
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "cpu-r1-u11", Manufacturer: "Supermicro"})
	cfg := &bmc.Configurator{Connector: site.BMCs, Vault: site.Vault, Clock: site.Clock}
	t := bmc.Target{Device: h.Name, Address: h.OOBIP, NTPServers: []string{"10.0.0.11"}, SyslogServers: []string{"10.0.0.21"},
		AdminItem: fakes.AdminItem(h.Name), FactoryItem: fakes.FactoryItem, MonitoringItem: fakes.MonitoringItem}
	for run := 1; run <= 2; run++ {
		res, err := cfg.Configure(context.Background(), t)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("run %d: %s, %d writes: %s\n", run, res.Vendor, res.Writes, strings.Join(res.Steps, " "))
	}
	// Output:
	// run 1: supermicro, 4 writes: cold_reset:not_needed hostname:set ntp:set syslog:set ipmi_user:created
	// run 2: supermicro, 0 writes: cold_reset:not_needed hostname:ok ntp:ok syslog:ok ipmi_user:ok
}

func ExampleDetect() {
	for _, id := range []bmc.Identity{
		{Vendor: "Dell", Product: "Integrated Dell Remote Access Controller", RootOem: []string{"Dell"}},
		{RootOem: []string{"Supermicro"}},
		{Vendor: "HPE", RootOem: []string{"Hpe"}},
	} {
		v, err := bmc.Detect(id)
		if err != nil {
			fmt.Println("refused:", strings.SplitN(err.Error(), ":", 2)[0])
			continue
		}
		fmt.Println(v)
	}
	// Output:
	// dell
	// supermicro
	// refused: BMC_VENDOR_UNSUPPORTED (configure_bmc)
}

// BenchmarkConfigureConverged measures a rerun on a converged iDRAC in the
// fake world: every step reads, none writes.
func BenchmarkConfigureConverged(b *testing.B) {
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "bench", Vendor: "dell"})
	cfg := &bmc.Configurator{Connector: site.BMCs, Vault: site.Vault, Clock: site.Clock}
	t := bmc.Target{Device: h.Name, Address: h.OOBIP, NTPServers: []string{"10.0.0.11"}, SyslogServers: []string{"10.0.0.21"}, ProvisioningMAC: h.NICs[0].MAC, RestrictBoot: true,
		AdminItem: fakes.AdminItem(h.Name), FactoryItem: fakes.FactoryItem, MonitoringItem: fakes.MonitoringItem}
	if o := bmctest.Converge(context.Background(), cfg, t, site.Clock); o.Err != nil {
		b.Fatal(o.Err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := cfg.Configure(context.Background(), t)
		if err != nil || res.Writes != 0 {
			b.Fatal(err, res.Writes)
		}
	}
}

// BenchmarkConfigureDrifted measures a first run on a drifted iDRAC: every
// attempt to convergence, the staged jobs' waits slept on the fake clock.
func BenchmarkConfigureDrifted(b *testing.B) {
	for b.Loop() {
		site := fakes.NewSite()
		h := site.AddHost(fakes.HostSpec{Name: "bench", Vendor: "dell"})
		cfg := &bmc.Configurator{Connector: site.BMCs, Vault: site.Vault, Clock: site.Clock}
		t := bmc.Target{Device: h.Name, Address: h.OOBIP, NTPServers: []string{"10.0.0.11"}, SyslogServers: []string{"10.0.0.21"}, ProvisioningMAC: h.NICs[0].MAC, RestrictBoot: true,
			AdminItem: fakes.AdminItem(h.Name), FactoryItem: fakes.FactoryItem, MonitoringItem: fakes.MonitoringItem}
		if o := bmctest.Converge(context.Background(), cfg, t, site.Clock); o.Err != nil {
			b.Fatal(o.Err)
		}
	}
}

// A BMC on its factory password that applies a new password only on its
// cold reset: each call is one attempt; the runtime (here bmctest.Converge
// on the fake clock) sleeps the waits between them.
func ExampleConfigurator_Configure_resetToApply() {
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "gpu-r2-u04", Manufacturer: "NVIDIA"})
	b, _ := site.BMCs.Of(h.Name)
	b.FactoryReset()
	b.ApplyPasswordOnReset()
	site.Vault.Set(fakes.AdminItem(h.Name), nil)
	cfg := &bmc.Configurator{Connector: site.BMCs, Vault: site.Vault, Clock: site.Clock}
	t := bmc.Target{Device: h.Name, Address: h.OOBIP, NTPServers: []string{"10.0.0.11"},
		AdminItem: fakes.AdminItem(h.Name), FactoryItem: fakes.FactoryItem, MonitoringItem: fakes.MonitoringItem}
	o := bmctest.Converge(context.Background(), cfg, t, site.Clock)
	for i, a := range o.Attempts {
		fmt.Printf("attempt %d: %s\n", i+1, strings.Join(a.Steps, " "))
		if i < len(o.Waits) {
			fmt.Printf("  wait %s\n", o.Waits[i].Reason)
		}
	}
	fmt.Println("error:", o.Err, "password changes:", b.PasswordChanges(fakes.FakeFactoryUser))
	// Output:
	// attempt 1: password:rotated cold_reset:requested
	//   wait bmc_reset
	// attempt 2: cold_reset:waiting
	//   wait bmc_reset
	// attempt 3: cold_reset:waiting
	//   wait bmc_reset
	// attempt 4: cold_reset:waiting
	//   wait bmc_reset
	// attempt 5: password:verified_after_reset cold_reset:done hostname:set ntp:set ipmi_user:created virtual_media:set boot_restriction:skipped_restrict_boot_off
	// error: <nil> password changes: 1
}
