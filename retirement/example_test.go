package retirement_test

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/retirement"
)

// Retire a host of the demo rack: enrolled, then decommissioning in
// NetBox. The retirement runs inline on the rack's virtual clock; a rerun
// resumes the same run and writes nothing.
func ExampleRetire() {
	ctx := context.Background()
	site := enrolltest.DemoRack()
	cfg := enrolltest.DemoSiteConfig()
	const host = "cpu-r1-u10"
	req := enrollment.NewRequest(host, intent.ClassCPUBaremetal, "lab1", cfg, true, enrollment.Params{})
	if _, err := enrollment.Enroll(ctx, enrolltest.Executor(site, nil).Local(site.Clock), req); err != nil {
		fmt.Println(err)
		return
	}
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.DeviceByName(host).Status = string(intent.StatusDecommissioning)
		return nil
	})

	exec := enrolltest.RetireExecutor(site, nil)
	rcfg := enrolltest.RetireSiteConfig(cfg)
	res, err := retirement.Retire(ctx, exec.Local(site.Clock), retirement.NewRequest(host, intent.ClassCPUBaremetal, "lab1", "retire-0001", "", rcfg, retirement.Params{}))
	fmt.Println(res.Retired, err, res.Erase)
	for _, p := range res.Phases {
		fmt.Println(p.Phase, p.Status)
	}
	d, _ := site.NetBox.Device(ctx, host)
	fmt.Println("NetBox:", d.Status)

	before := site.Calls()
	again, _ := retirement.Retire(ctx, exec.Local(site.Clock), retirement.NewRequest(host, intent.ClassCPUBaremetal, "lab1", "retire-0002", "", rcfg, retirement.Params{}))
	fmt.Println("rerun:", again.Run, "writes:", site.Calls().Sub(before).Writes())
	// Output:
	// true <nil> metadata
	// retire_erase done
	// retire_ironic done
	// retire_dhcp done
	// retire_bmc done
	// retire_ledger done
	// retire_netbox done
	// retire_extensions skipped
	// NetBox: offline
	// rerun: retire-0001 writes: 0
}
