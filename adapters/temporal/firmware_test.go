package temporal_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
)

// starts records the firmware workflows started; running ones answer
// WorkflowExecutionAlreadyStarted.
type starts struct {
	client.Client
	running map[string]bool
	ids     []string
	opts    []client.StartWorkflowOptions
}

func (s *starts) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if s.running[opts.ID] {
		return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("running", "", "run-0")
	}
	in := args[0].(firmware.UpdateInput)
	if wf != temporal.FirmwareWorkflowName || opts.ID != temporal.FirmwareWorkflowID(in.MachineID) {
		return nil, errors.New("unexpected workflow")
	}
	s.ids = append(s.ids, in.MachineID)
	s.opts = append(s.opts, opts)
	return nil, nil
}

func TestStartFirmwareUpdates(t *testing.T) {
	ctx := context.Background()
	store := firmwarefake.NewMemStore()
	for _, m := range []string{"new", "running", "exhausted", "reset"} {
		if _, err := store.CreateRequest(ctx, firmware.Request{MachineID: m, Initiator: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(u firmware.HostUpdate) {
		if _, err := store.PutUpdate(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	put(firmware.HostUpdate{MachineID: "exhausted", Substate: firmware.FailedFirmwareUpgrade, RetryCount: 5})
	put(firmware.HostUpdate{MachineID: "reset", Substate: firmware.CheckingFirmwareRepeat, RetryCount: 0})
	c := &starts{running: map[string]bool{temporal.FirmwareWorkflowID("running"): true}}
	started, err := temporal.StartFirmwareUpdates(ctx, c, "q1", store, firmware.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"new", "reset"}; !reflect.DeepEqual(started, want) || !reflect.DeepEqual(c.ids, want) {
		t.Fatalf("started %v (calls %v), want %v", started, c.ids, want)
	}
	if c.opts[0].TaskQueue != "q1" || !c.opts[0].WorkflowExecutionErrorWhenAlreadyStarted {
		t.Errorf("options %+v", c.opts[0])
	}
}
