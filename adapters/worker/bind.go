package worker

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/hostforge/hostforge/adapters/metrics"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/firmware"
)

// bound is what a worker runs on its systems.
type bound struct {
	workflows []temporal.Workflow
	schedules []temporal.Schedule
	// cycle is the site's firmware cycle, whose stored gauges the worker
	// publishes when its metrics are read (nil without firmware:).
	cycle *firmware.Cycle
}

// binder binds one workflow (and its schedule, for periodic work) to the
// systems; it adds nothing when the config does not name what it needs.
type binder func(b *bound, sys *wiring.Systems, fwm *metrics.Firmware, log *slog.Logger) error

// binders are the workflows a worker runs. A new workflow adds one entry.
var binders = []binder{
	bindEnrollment,
	bindSettlement,
	bindExtensions,
	bindFirmware,
	bindRetirement,
	bindProjection,
}

func bind(sys *wiring.Systems, fwm *metrics.Firmware, log *slog.Logger) (bound, error) {
	var b bound
	for _, f := range binders {
		if err := f(&b, sys, fwm, log); err != nil {
			return bound{}, err
		}
	}
	return b, nil
}

// bindEnrollment: the enrollment on the config's phases.
func bindEnrollment(b *bound, sys *wiring.Systems, _ *metrics.Firmware, _ *slog.Logger) error {
	if sys.Enrollment == nil {
		return nil // wired to submit only
	}
	b.workflows = append(b.workflows, temporal.Workflow{Name: "enrollment", Steps: sys.Enrollment, Definitions: []temporal.Definition{temporal.Enrollment}})
	return nil
}

// bindSettlement: the durable settlement of completion proof
// (temporal.Settlement) on the ledger. An enrollment whose submitter
// snapshotted the device's identity starts it as a child that outlives the
// enrollment; its close probe reads Temporal through the worker's own
// client. Without a ledger the worker has nothing to settle in: such
// settlements wait for a worker that has one.
func bindSettlement(b *bound, sys *wiring.Systems, _ *metrics.Firmware, _ *slog.Logger) error {
	if sys.Proofs == nil {
		return nil
	}
	steps, err := temporal.SettleSteps(nil, sys.Proofs)
	if err != nil {
		return err
	}
	b.workflows = append(b.workflows, temporal.Workflow{Name: "settlement", Steps: steps, Definitions: []temporal.Definition{temporal.Settlement}})
	return nil
}

// bindExtensions: extension dispatch — the serverRegistered events
// successful enrollments fire, and events dispatched with
// temporal.Extensions. Without an extensions: section the dispatcher has
// no definitions, so such events run no task.
func bindExtensions(b *bound, sys *wiring.Systems, _ *metrics.Firmware, _ *slog.Logger) error {
	d := sys.Extensions
	if d == nil {
		empty, err := extensions.NewRegistry()
		if err != nil {
			return err
		}
		d = extensions.NewDispatcher(empty, nil, extensionsfake.NewStore())
	}
	b.workflows = append(b.workflows, temporal.Workflow{Name: "extensions", Steps: d, Definitions: []temporal.Definition{temporal.Extensions, temporal.ServerRegistered, temporal.ExtensionEvents}})
	return nil
}

// bindFirmware: with the firmware: section, the update workflow (its
// steps reporting to the firmware metrics m), the
// exploration of the inventories and the update manager's pass, each a
// schedule every machine_update_run_interval.
func bindFirmware(b *bound, sys *wiring.Systems, m *metrics.Firmware, log *slog.Logger) error {
	fw := sys.Firmware
	if fw == nil {
		return nil
	}
	fw.Executor.Metrics = m
	b.workflows = append(b.workflows, temporal.Workflow{Name: "firmware", Steps: fw.Executor.Steps(), Definitions: []temporal.Definition{temporal.FirmwareUpdate}})
	host, _ := os.Hostname()
	b.cycle = fw.Cycle(m, log, fmt.Sprintf("%s/%d", host, os.Getpid()))
	periodic := &temporal.FirmwarePeriodic{Cycle: b.cycle, Log: log}
	b.workflows = append(b.workflows, temporal.Workflow{Name: "firmware-periodic", Steps: periodic.Steps(), Definitions: []temporal.Definition{temporal.Explore, temporal.Pass}})
	every := fw.Settings.WithDefaults().RunInterval
	b.schedules = append(b.schedules,
		temporal.Schedule{Purpose: temporal.PurposeExplore, Workflow: temporal.ExploreWorkflowName, Every: every},
		temporal.Schedule{Purpose: temporal.PurposePass, Workflow: temporal.PassWorkflowName, Every: every})
	return nil
}

// bindRetirement: the retirement on the config's phases. Its events are
// dispatched by the extension dispatch's steps, which bindExtensions
// registers on every worker.
func bindRetirement(b *bound, sys *wiring.Systems, _ *metrics.Firmware, _ *slog.Logger) error {
	rx := sys.Retirement()
	if rx == nil {
		return nil // wired to submit only
	}
	b.workflows = append(b.workflows, temporal.Workflow{Name: "retirement", Steps: rx, Definitions: []temporal.Definition{temporal.Retirement(wiring.AnnounceRetirement)}})
	return nil
}

// bindProjection: with a ledger and Ironic instances, the projection of
// every instance's nodes into the ledger, a schedule every
// ledger.projection_interval.
func bindProjection(b *bound, sys *wiring.Systems, _ *metrics.Firmware, _ *slog.Logger) error {
	if sys.Projector == nil {
		return nil
	}
	every := enrollment.DefaultProjectionInterval
	if lc := sys.Config; lc != nil && lc.Ledger != nil && lc.Ledger.ProjectionInterval > 0 {
		every = lc.Ledger.ProjectionInterval.D()
	}
	b.workflows = append(b.workflows, temporal.Workflow{Name: "projection", Steps: temporal.ProjectionSteps(sys.Projector), Definitions: []temporal.Definition{temporal.Projection}})
	b.schedules = append(b.schedules, temporal.Schedule{Purpose: temporal.PurposeProjection, Workflow: temporal.ProjectionWorkflowName, Every: every})
	return nil
}
