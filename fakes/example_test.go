package fakes_test

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// A fake site records what is really wired (the host) and what NetBox says
// (the intent); they agree until a test breaks one. Every call is counted.
func ExampleSite() {
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "cpu-r1-u10", Class: intent.ClassCPUBaremetal, NICs: 2})
	h.NICs[1].Port = "swp60" // someone moved a patch cable; NetBox does not know

	d, _ := site.NetBox.Device(context.Background(), "cpu-r1-u10")
	eth1, _ := d.Interface("eth1")
	fmt.Printf("NetBox: %s %s; wired: %s %s\n", eth1.Peer.Device, eth1.Peer.Port, h.NICs[1].Switch, h.NICs[1].Port)
	fmt.Println(site.Calls())
	// Output:
	// NetBox: leaf-2 swp1; wired: leaf-2 swp60
	// netbox r=1 w=0
}
