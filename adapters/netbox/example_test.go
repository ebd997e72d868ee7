package netbox_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/intent"
)

// Read one host's intent from NetBox (here the REST emulator over a fake
// site), then mark it enrolled.
func Example() {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "cpu-r1-u10"})
	srv := httptest.NewServer(netboxhttp.New(site.NetBox, netboxhttp.Options{Token: "s3cr3t"}))
	defer srv.Close()

	nb, err := netbox.New(netbox.Config{URL: srv.URL, Token: "s3cr3t"})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	d, err := nb.Device(ctx, "cpu-r1-u10")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name, d.Status, d.Role.DeviceClass, d.DeviceType.Manufacturer, d.DeviceType.Model, d.OOBIP)
	for _, i := range d.Interfaces {
		peer := "-"
		if i.Peer != nil {
			peer = i.Peer.Device + ":" + i.Peer.Port
		}
		fmt.Printf("  %-5s %-15s lag=%-5q peer=%s\n", i.Name, i.Type, i.LAG, peer)
	}
	if err := nb.SetStatus(ctx, d.ID, intent.StatusActive); err != nil {
		fmt.Println(err)
	}
	if err := nb.AddTags(ctx, d.ID, intent.DefaultIronicTag); err != nil {
		fmt.Println(err)
	}
	d, _ = nb.Device(ctx, "cpu-r1-u10")
	fmt.Println(d.Status, d.Tags)
	srv.CloseClientConnections()
	// Output:
	// cpu-r1-u10 staged CPU_BAREMETAL Dell PowerEdge R7615 10.10.0.3
	//   bmc   1000base-t      lag=""    peer=-
	//   bond0 lag             lag=""    peer=-
	//   eth0  25gbase-x-sfp28 lag="bond0" peer=leaf-1:swp1
	//   eth1  25gbase-x-sfp28 lag="bond0" peer=leaf-2:swp1
	// active [ironic]
}
