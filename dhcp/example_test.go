package dhcp_test

import (
	"context"
	"fmt"
	"os"

	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/fakes"
)

func ExampleRenderISC() {
	b, err := dhcp.RenderISC(dhcp.Entry{Hostname: "gpu-node-01", MAC: "0A-1B-2C-3D-4E-5F", IP: "10.10.0.3"})
	if err != nil {
		fmt.Println(err)
		return
	}
	os.Stdout.Write(b)
	// Output:
	// # hostforge: DHCP reservation for the BMC of gpu-node-01.
	// # Written by enrollment from NetBox; local edits are replaced on the next run.
	// host gpu-node-01 {
	//   hardware ethernet 0a:1b:2c:3d:4e:5f;
	//   fixed-address 10.10.0.3;
	//   option host-name "gpu-node-01";
	// }
}

func ExamplePhase_Configure() {
	// A fake DHCP server host stands in for adapters/ssh here.
	site := fakes.NewSite()
	p := dhcp.New(site.DHCP, dhcp.Config{Flavour: dhcp.ISC}, nil)
	e := dhcp.Entry{Hostname: "gpu-node-01", MAC: "0a:1b:2c:3d:4e:5f", IP: "10.10.0.3"}
	for range 2 {
		res, err := p.Configure(context.Background(), e)
		fmt.Println(res.Path, "changed:", res.Changed, "err:", err)
	}
	fmt.Println("restarts:", site.DHCP.Restarts())
	_, err := p.Configure(context.Background(), dhcp.Entry{Hostname: "gpu node 01", MAC: e.MAC, IP: e.IP})
	fmt.Println(err)
	// Output:
	// /etc/dhcp/hostforge.d/gpu-node-01.conf changed: true err: <nil>
	// /etc/dhcp/hostforge.d/gpu-node-01.conf changed: false err: <nil>
	// restarts: 1
	// DHCP_ENTRY_INVALID (configure_dhcp): device gpu node 01: DHCP reservation: hostname "gpu node 01": only letters, digits, '-', '_' and '.' are allowed, each dot-separated label starting and ending with a letter or digit (no spaces, quotes or config syntax)
}
