package extensions

import (
	"context"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
)

// StepServerRegistered is the step that builds the serverRegistered event
// of a host whose enrollment succeeded.
const StepServerRegistered = "extensions.server_registered"

// sourceAttempt bounds one attempt of StepServerRegistered: one device
// intent read through the NetBox adapter (at most 6 requests of 6.5 min
// each with its retries: 39 min) and one inventory read from Ironic (60 s),
// with room to spare.
const sourceAttempt = 45 * time.Minute

// ServerSource reads what the serverRegistered event maps: the device's
// NetBox intent and the inspection inventory of the Ironic node it became.
// The wiring implements it over the NetBox adapter and the Ironic clients.
// Errors are the system errors of package hostforge (ErrNotFound,
// ErrUnavailable, ... wrapped) or Failures.
type ServerSource interface {
	// Device reads a device's intent by name.
	Device(ctx context.Context, name string) (intent.Device, error)
	// Inventory returns the inspection inventory of node on the Ironic
	// instance (Ironic's inventory document).
	Inventory(ctx context.Context, instance, node string) ([]byte, error)
}

// Enrolled is a host whose enrollment succeeded: the device, the Ironic
// instance and the node it became, and the enrollment run that enrolled
// it, which identifies the event.
type Enrolled struct {
	Device   string `json:"device"`
	Instance string `json:"instance"`
	Node     string `json:"node"`
	// Run identifies the enrollment run: a Temporal workflow's run ID, the
	// CLI's own run. Each run's success is one serverRegistered event.
	Run string `json:"run"`
}

// RegisteredOut is the event StepServerRegistered built. Bound is false
// when no active extension binds a task to serverRegistered: nothing was
// read and nothing fires.
type RegisteredOut struct {
	Bound bool  `json:"bound"`
	Event Event `json:"event"`
}

// ServerRegisteredEvent is the step that builds the serverRegistered
// event of an enrolled host from the dispatcher's ServerSource. It reads
// nothing when no active extension binds a task to the stage.
func (d *Dispatcher) ServerRegisteredEvent(ctx context.Context, in Enrolled) (RegisteredOut, error) {
	if len(d.Registry().Tasks(ServerRegisteredStage)) == 0 {
		return RegisteredOut{}, nil
	}
	if in.Device == "" || in.Node == "" || in.Run == "" {
		return RegisteredOut{}, EventInvalid.New("serverRegistered needs the device, the node and the enrollment run (got device %q, node %q, run %q)", in.Device, in.Node, in.Run)
	}
	if d.Servers == nil {
		return RegisteredOut{}, RunnerConfigInvalid.New("device %s enrolled, but this dispatcher has no source for the device's NetBox intent and the node's inventory: the serverRegistered event cannot be built", in.Device)
	}
	specs := hostforge.SystemSpecs{NotFound: SourceMissing, Unauthorized: SourceUnavailable, Unavailable: SourceUnavailable, Conflict: SourceUnavailable, Invalid: SourceUnavailable}
	dev, err := d.Servers.Device(ctx, in.Device)
	if err != nil {
		return RegisteredOut{}, sourceErr(specs.Classify(err, Phase, "reading device %s from NetBox for serverRegistered", in.Device))
	}
	inv, err := d.Servers.Inventory(ctx, in.Instance, in.Node)
	if err != nil {
		return RegisteredOut{}, sourceErr(specs.Classify(err, Phase, "reading the inspection inventory of node %s on %s for serverRegistered", in.Node, in.Instance))
	}
	ev, err := ServerRegistered(in.Run, dev, inv, in.Node)
	if err != nil {
		return RegisteredOut{}, err
	}
	return RegisteredOut{Bound: true, Event: ev}, nil
}

// sourceErr classifies what SystemSpecs left unclassified.
func sourceErr(err error) error {
	if hostforge.Settled(err) {
		return err
	}
	return SourceUnavailable.Wrap(err, "building the serverRegistered event")
}

// FireServerRegistered is the workflow body that fires serverRegistered
// for a host whose enrollment succeeded: the event is built by the step
// extensions.server_registered (the device's NetBox intent and the node's
// inspection inventory, mapped by ServerFromIntent; its ID is the
// enrollment run's, so the same run's dispatch run again re-delivers what
// did not succeed, and another run's is a new event), then dispatched by
// Fire. Nothing is read when no active extension binds a task to the
// stage; the report is then empty.
func FireServerRegistered(ctx context.Context, rt flow.Runtime, in Enrolled) (Report, error) {
	return observed(ctx, rt, func() (Report, error) {
		rep := Report{EventID: ServerRegisteredEventID(in.Run), Stage: ServerRegisteredStage, Deliveries: []Delivery{}}
		var out RegisteredOut
		if err := (flow.Runner{RT: rt, Policy: storePolicy}).Run(ctx, StepServerRegistered, in, &out); err != nil {
			return rep, err
		}
		if !out.Bound {
			return rep, nil
		}
		return fire(ctx, rt, out.Event)
	})
}
