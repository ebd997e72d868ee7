package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/verify"
)

// runHostforge enrols every host of the site concurrently through the
// enrollment workflow (flow.Local on the real clock), Ironic phases
// only, over the adapter pointed at the proxy; pace is the run's learned
// Pace (nil: the poll policy alone).
func runHostforge(ctx context.Context, endpoint string, site *fakes.Site, timing ironic.Timing, pace *ironic.Pace, log *slog.Logger) (time.Duration, error) {
	c, err := adapter.New(ctx, adapter.Config{Endpoint: endpoint, Timeout: clientTimeout})
	if err != nil {
		return 0, err
	}
	exec := enrolltest.Executor(site, log)
	exec.Ironic = map[string]enrollment.IronicPhases{"ironic": &ironic.Phases{Verifier: verify.Verifier{},
		Client: c, Credentials: ironic.VaultCredentials{Vault: site.Vault}, Links: site.BMCs,
		Clock: clock.Real{}, Log: log, Timing: timing, Pace: pace,
	}}
	cfg := enrollment.SiteConfig{IronicEnrol: true, IronicInstances: classes}
	off := false
	names := site.HostNames()
	errs := make([]error, len(names))
	start := time.Now()
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt := &flow.Local{Steps: exec, Log: exec.Log, Clock: clock.Real{}, Subject: name}
			res, err := enrollment.Enroll(ctx, rt, enrollment.NewRequest(name, intent.ClassCPUBaremetal, "lab1", cfg, false, enrollment.Params{RunInspection: &off}))
			if err == nil && res.ProvisionState != ironic.StateAvailable {
				err = fmt.Errorf("ended in %q", res.ProvisionState)
			}
			if err != nil {
				errs[i] = fmt.Errorf("hostforge: %s: %w", name, err)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return wall, err
		}
	}
	return wall, nil
}
