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
	// BMCHostname says the run's BMC phase set the BMC's hostname: only
	// then is there a BMC record set, and serverCreateDNS fires.
	BMCHostname bool `json:"bmcHostname,omitempty"`
}

// RegisteredOut are the events StepServerRegistered built. Bound is false
// when no active extension binds a task to serverRegistered (Event is
// then unset); DNS is the serverCreateDNS event, set when an active
// extension binds that stage and the BMC has a hostname (the run's BMC
// phase set it: Enrolled.BMCHostname) and an address.
// Nothing was read when neither stage is bound.
type RegisteredOut struct {
	Bound bool   `json:"bound"`
	Event Event  `json:"event"`
	DNS   *Event `json:"dns,omitempty"`
}

// ServerRegisteredEvent is the step that builds the serverRegistered
// event of an enrolled host from the dispatcher's ServerSource, and its
// serverCreateDNS event. It reads nothing when no active extension binds
// a task to either stage.
func (d *Dispatcher) ServerRegisteredEvent(ctx context.Context, in Enrolled) (RegisteredOut, error) {
	registered, dns := d.Bound(ServerRegisteredStage), d.Bound(ServerCreateDNS) && in.BMCHostname
	if !registered && !dns {
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
	var out RegisteredOut
	if dns && in.BMCHostname {
		ev, ok, err := ServerCreateDNSEvent(in.Run, dev)
		if err != nil {
			return RegisteredOut{}, err
		}
		if ok {
			ev.StageDeadline = d.StageDeadline
			out.DNS = &ev
		}
	}
	if !registered {
		return out, nil
	}
	inv, err := d.Servers.Inventory(ctx, in.Instance, in.Node)
	if err != nil {
		return RegisteredOut{}, sourceErr(specs.Classify(err, Phase, "reading the inspection inventory of node %s on %s for serverRegistered", in.Node, in.Instance))
	}
	ev, err := ServerRegistered(in.Run, dev, inv, in.Node)
	if err != nil {
		return RegisteredOut{}, err
	}
	ev.StageDeadline = d.StageDeadline
	out.Bound, out.Event = true, ev
	return out, nil
}

// sourceErr classifies what SystemSpecs left unclassified.
func sourceErr(err error) error {
	if hostforge.Settled(err) {
		return err
	}
	return SourceUnavailable.Wrap(err, "building the serverRegistered event")
}

// FireServerRegistered is the workflow body that fires serverRegistered
// for a host whose enrollment succeeded, then serverCreateDNS for its
// BMC's record set: the events are built by the step
// extensions.server_registered (the device's NetBox intent and the node's
// inspection inventory, mapped by ServerFromIntent and
// ServerCreateDNSEvent; their IDs are the enrollment run's, so the same
// run's dispatch run again re-delivers what did not succeed, and another
// run's are new events), then dispatched by Fire, one after the other.
// The report lists both events' deliveries (each naming its event and
// stage). Nothing is read when no active extension binds a task to either
// stage; the report is then empty.
func FireServerRegistered(ctx context.Context, rt flow.Runtime, in Enrolled) (Report, error) {
	return observed(ctx, rt, func() (Report, error) {
		rep := Report{EventID: ServerRegisteredEventID(in.Run), Stage: ServerRegisteredStage, Deliveries: []Delivery{}}
		var out RegisteredOut
		if err := (flow.Runner{RT: rt, Policy: storePolicy}).Run(ctx, StepServerRegistered, in, &out); err != nil {
			return rep, err
		}
		var evs Events
		if out.Bound {
			evs.Events = append(evs.Events, out.Event)
		}
		if out.DNS != nil {
			evs.Events = append(evs.Events, *out.DNS)
		}
		if len(evs.Events) == 0 {
			return rep, nil
		}
		return fireEvents(ctx, rt, evs)
	})
}
