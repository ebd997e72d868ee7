package enrollment_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

func backfillSite() *fakes.Site {
	site := fakes.NewSite()
	site.AddHost(gpuHost("gpu-1"))
	site.AddHost(fakes.HostSpec{Name: "cpu-1"})
	site.AddHost(fakes.HostSpec{Name: "gpu-nogputype", Class: intent.ClassGPUCompute})
	div := gpuHost("gpu-div")
	div.PlatformClass = "OLD_KEY_01"
	site.AddHost(div)
	return site
}

func TestBackfillAllDevices(t *testing.T) {
	site := backfillSite()
	ctx := context.Background()

	dry, err := enrollment.Backfill(ctx, site.NetBox, site.NetBox, site.FleetManager, nil, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if site.Calls().Writes() != 0 {
		t.Fatalf("dry run wrote: %s", site.Calls())
	}
	byName := map[string]enrollment.BackfillEntry{}
	for _, e := range dry {
		byName[e.Device] = e
	}
	// The two leaf switches are devices too: a site-wide pass skips them.
	if len(dry) != 6 {
		t.Fatalf("entries = %d: %+v", len(dry), dry)
	}
	if e := byName["gpu-1"]; e.Failure != nil || !e.Result.NetBoxWrite || !e.Result.FleetWrite || e.Result.Effective != "GB300_LENOVOHG635NV2_IB_01" {
		t.Fatalf("gpu-1 = %+v", e)
	}
	if e := byName["cpu-1"]; e.Result.Effective != "NOGPU_DELLPOWEREDGER7615_NORDMA_01" {
		t.Fatalf("cpu-1 = %+v", e)
	}
	if e := byName["gpu-nogputype"]; e.Failure == nil || e.Failure.Code != "PLATFORM_CLASS_UNRESOLVABLE" {
		t.Fatalf("gpu-nogputype = %+v", e)
	}
	if e := byName["gpu-div"]; !e.Result.Divergent || e.Result.NetBoxWrite || e.Result.Effective != "OLD_KEY_01" {
		t.Fatalf("gpu-div = %+v", e)
	}
	if e := byName["leaf-1"]; e.Failure != nil || e.Skipped == "" || e.Result.NetBoxWrite {
		t.Fatalf("a site-wide pass must skip switches: leaf-1 = %+v", e)
	}
	// Named explicitly, a switch is resolved and refused.
	named, _ := enrollment.Backfill(ctx, site.NetBox, site.NetBox, site.FleetManager, []string{"leaf-1"}, true, nil)
	if named[0].Failure == nil || named[0].Failure.Code != "PLATFORM_CLASS_UNRESOLVABLE" {
		t.Fatalf("named leaf-1 = %+v", named[0])
	}

	if _, err := enrollment.Backfill(ctx, site.NetBox, site.NetBox, site.FleetManager, nil, false, nil); err != nil {
		t.Fatal(err)
	}
	d, _ := site.NetBox.Device(ctx, "gpu-div")
	if d.PlatformClass != "OLD_KEY_01" {
		t.Fatal("backfill overwrote a populated NetBox value")
	}
	if site.FleetManager.Get("gpu-div") != "OLD_KEY_01" || site.FleetManager.Get("gpu-1") != "GB300_LENOVOHG635NV2_IB_01" {
		t.Fatal("fleet manager not recorded")
	}
	// A second pass converges: no writes.
	before := site.Calls()
	if _, err := enrollment.Backfill(ctx, site.NetBox, site.NetBox, site.FleetManager, nil, false, nil); err != nil {
		t.Fatal(err)
	}
	if w := site.Calls().Sub(before).Writes(); w != 0 {
		t.Fatalf("second backfill wrote %d times", w)
	}
}

func TestBackfillNamedDeviceAndCorrectionPath(t *testing.T) {
	site := backfillSite()
	ctx := context.Background()
	// Correction: clear the wrong key in NetBox, then backfill that device by name.
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.DeviceByName("gpu-div").CustomFields["platform_class"] = nil
		return nil
	})
	out, err := enrollment.Backfill(ctx, site.NetBox, site.NetBox, site.FleetManager, []string{"gpu-div"}, false, nil)
	if err != nil || len(out) != 1 || out[0].Failure != nil {
		t.Fatalf("out = %+v, %v", out, err)
	}
	if d, _ := site.NetBox.Device(ctx, "gpu-div"); d.PlatformClass != "GB300_LENOVOHG635NV2_IB_01" {
		t.Fatalf("corrected = %q", d.PlatformClass)
	}
	if site.Calls()[fakes.SysNetBox].Ops["device_names"] != 0 {
		t.Fatal("a named backfill listed every device")
	}
}

func TestBackfillErrors(t *testing.T) {
	site := backfillSite()
	ctx := context.Background()
	site.Inject(fakes.SysNetBox, "device_names", 1, fmt.Errorf("503: %w", hostforge.ErrUnavailable))
	if _, err := enrollment.Backfill(ctx, site.NetBox, site.NetBox, site.FleetManager, nil, true, nil); hostforge.CodeOf(err) != "NETBOX_UNAVAILABLE" {
		t.Fatalf("err = %v", err)
	}
	out, err := enrollment.Backfill(ctx, site.NetBox, site.NetBox, site.FleetManager, []string{"ghost", "cpu-1"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Failure == nil || out[0].Failure.Code != "NETBOX_DEVICE_NOT_FOUND" || out[1].Failure != nil {
		t.Fatalf("one device's failure must not stop the others: %+v", out)
	}
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error { st.DeviceByName("cpu-1").Status = "weird"; return nil })
	out, _ = enrollment.Backfill(ctx, site.NetBox, site.NetBox, site.FleetManager, []string{"cpu-1"}, false, nil)
	if out[0].Failure == nil || out[0].Failure.Code != "NETBOX_DATA_INVALID" {
		t.Fatalf("bad data: %+v", out)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	out, _ = enrollment.Backfill(cctx, site.NetBox, site.NetBox, site.FleetManager, []string{"gpu-1", "cpu-1"}, false, nil)
	if len(out) != 1 || out[0].Failure == nil || out[0].Failure.Code != "CANCELLED" {
		t.Fatalf("cancelled backfill = %+v", out)
	}
}

func TestSubmitReadsTheDeviceClass(t *testing.T) {
	site := backfillSite()
	ctx := context.Background()
	req, err := enrollment.Submit(ctx, site.NetBox, "gpu-1", enrollment.SubmitOptions{Site: "lab1", PlatformClassReady: true})
	if err != nil || req.DeviceClass != intent.ClassGPUCompute || !req.Snapshot.PlatformClassActivityReady || req.Snapshot.Site.IronicTag != "ironic" {
		t.Fatalf("req = %+v, %v", req, err)
	}
	if _, err := enrollment.Submit(ctx, site.NetBox, "ghost", enrollment.SubmitOptions{Site: "lab1", PlatformClassReady: true}); hostforge.CodeOf(err) != "NETBOX_DEVICE_NOT_FOUND" {
		t.Fatalf("ghost: %v", err)
	}
}
