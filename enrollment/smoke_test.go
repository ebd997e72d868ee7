package enrollment_test

import (
	"context"
	"testing"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

func TestSmoke(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1", Class: intent.ClassGPUCompute, GPUType: "GB300", HasZTP: true, ZTP: map[string]any{"infiniband": map[string]any{}}})
	exec := &enrollment.Executor{NetBox: site.NetBox, FleetManager: site.FleetManager, Vault: site.Vault}
	rt := &enrollment.Local{Exec: exec, Clock: site.Clock, RoundTrip: true}
	cfg := enrollment.SiteConfig{IronicInstances: map[string]string{intent.ClassGPUCompute: "ironic-gpu"}}
	res, err := enrollment.Enroll(context.Background(), rt, enrollment.NewRequest("h1", intent.ClassGPUCompute, "lab1", cfg, true, enrollment.Params{}))
	t.Logf("%+v %v %s", res, err, site.Calls())
}
