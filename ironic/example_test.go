package ironic_test

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/verify"
)

// The shared prelude gets or creates the node from its spec, with the
// per-host BMC credential. Later runs find the node and converge what can
// drift: the HW_ARCH trait is ensured once, and the credential is rewritten
// on every run because Ironic masks passwords, so they cannot be compared.
func ExamplePhases_Prelude() {
	site := fakes.NewSite()
	ir := site.AddIronic("ironic-1")
	h := site.AddHost(fakes.HostSpec{Name: "cpu-r1-u10"})
	p := &ironic.Phases{Verifier: verify.Verifier{}, Client: ir, Credentials: ironic.VaultCredentials{Vault: site.Vault}, Clock: site.Clock}
	spec := ironic.NodeSpec{
		Name: h.Name, Driver: "redfish", BMCAddress: h.OOBIP, Project: "enrol",
		CredentialItem: fakes.AdminItem(h.Name), MonitoringItem: fakes.MonitoringItem, CPUArch: "x86_64",
		Interfaces: map[string]string{"raid": "agent", "inspect": "inspector"},
	}
	for _, n := range h.NICs {
		spec.NICs = append(spec.NICs, ironic.NIC{Name: n.Name, MAC: n.MAC, Switch: n.Switch, Port: n.Port})
	}
	for run := 1; run <= 3; run++ {
		res, err := p.Prelude(context.Background(), spec)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("run %d: %s %s, created=%v, changes=%v\n", run, res.Node.Driver, res.Node.ProvisionState, res.Created, res.Changes)
	}
	// Output:
	// run 1: redfish enroll, created=true, changes=[]
	// run 2: redfish enroll, created=false, changes=[credentials trait HW_ARCH_X86_64]
	// run 3: redfish enroll, created=false, changes=[credentials]
}
