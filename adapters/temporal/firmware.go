package temporal

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/hostforge/hostforge/firmware"
)

// FirmwareWorkflowName is the Temporal workflow type of a machine's
// firmware update (firmware.Update).
const FirmwareWorkflowName = "firmware_update"

// FirmwareUpdate is firmware.Update as a Temporal workflow; its steps are
// the firmware.Executor's.
var FirmwareUpdate = Define(FirmwareWorkflowName, firmware.Update)

// FirmwareWorkflowID is the workflow ID of a machine's update: one per
// machine, so two never run at once.
func FirmwareWorkflowID(machine string) string { return "firmware/" + machine }

// StartFirmwareUpdates starts the update workflow of every machine that
// has a reprovisioning request and no running workflow, except the
// machines whose update is exhausted (they wait for an operator's reset;
// after one, the next call starts them again). It returns the machines
// whose workflow it started. A workflow already running is left alone.
func StartFirmwareUpdates(ctx context.Context, c client.Client, queue string, s firmware.Store, settings firmware.Settings) ([]string, error) {
	reqs, err := s.Requests(ctx)
	if err != nil {
		return nil, err
	}
	maxRetries := settings.WithDefaults().MaxRetries
	if queue == "" {
		queue = DefaultTaskQueue
	}
	var started []string
	for _, r := range reqs {
		u, ok, err := s.Update(ctx, r.MachineID)
		if err != nil {
			return started, err
		}
		if ok && u.Exhausted(maxRetries) {
			continue
		}
		_, err = c.ExecuteWorkflow(ctx, oneAtATime(FirmwareWorkflowID(r.MachineID), queue), FirmwareWorkflowName, firmware.UpdateInput{MachineID: r.MachineID})
		var running *serviceerror.WorkflowExecutionAlreadyStarted
		switch {
		case errors.As(err, &running):
		case err != nil:
			return started, TemporalUnavailable.Wrap(err, "starting the firmware update of %s", r.MachineID)
		default:
			started = append(started, r.MachineID)
		}
	}
	return started, nil
}
