package enrollment

import (
	"context"

	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/platformclass"
)

// Names of the core steps.
const (
	StepReadIntent          = "read_intent"
	StepRecordPlatformClass = "record_platform_class"
	StepActivateDevice      = "netbox_activation"
	StepTagDevice           = "tag_device"
)

func (e *Executor) coreSteps() []flow.Step {
	return []flow.Step{
		flow.Bind(StepReadIntent, netboxAttempt, e.ReadIntent),
		flow.Bind(StepRecordPlatformClass, netboxAttempt, e.RecordPlatformClass),
		flow.Bind(StepActivateDevice, netboxAttempt, e.ActivateDevice),
		flow.Bind(StepTagDevice, netboxAttempt, e.TagDevice),
	}
}

// ReadIntentIn names the device to read.
type ReadIntentIn struct {
	Device string `json:"device"`
}

// ReadIntentOut is the device's recorded intent.
type ReadIntentOut struct {
	Device intent.Device `json:"device"`
}

// ReadIntent reads one host's whole intent from NetBox.
func (e *Executor) ReadIntent(ctx context.Context, in ReadIntentIn) (ReadIntentOut, error) {
	d, err := e.NetBox.Device(ctx, in.Device)
	if err != nil {
		return ReadIntentOut{}, netboxErr(err, StepReadIntent, "reading device %s", in.Device)
	}
	return ReadIntentOut{Device: d}, nil
}

// RecordPlatformClassIn is the device's platform-class inputs.
type RecordPlatformClassIn struct {
	Inputs platformclass.Inputs `json:"inputs"`
	Target platformclass.Target `json:"target"`
	DryRun bool                 `json:"dry_run,omitempty"`
}

// RecordPlatformClass resolves the key and applies the write policy.
func (e *Executor) RecordPlatformClass(ctx context.Context, in RecordPlatformClassIn) (platformclass.Result, error) {
	key, err := platformclass.Resolve(in.Inputs)
	if err != nil {
		return platformclass.Result{}, err
	}
	return platformclass.Record(ctx, e.NetBox, e.FleetManager, in.Target, key, in.DryRun, e.log())
}

// platformClassInputs maps a device to the resolver's inputs.
func platformClassInputs(d intent.Device) platformclass.Inputs {
	ztp, has := d.ConfigContext["ztp"]
	return platformclass.Inputs{
		Device:       d.Name,
		DeviceClass:  d.Role.DeviceClass,
		Manufacturer: d.DeviceType.Manufacturer,
		Model:        d.DeviceType.Model,
		GPUType:      d.DeviceType.GPUType,
		HasZTP:       has,
		ZTP:          ztp,
	}
}

// ActivateIn names the device to activate.
type ActivateIn struct {
	Device string `json:"device"`
}

// ActivateOut says what activation found and did.
type ActivateOut struct {
	// Before is the live status read before deciding.
	Before intent.Status `json:"before"`
	// Changed is true when the device was moved staged → active.
	Changed bool `json:"changed"`
}

// ActivateDevice moves a staged device to active. It re-reads the live status
// first; any status other than staged is left untouched.
func (e *Executor) ActivateDevice(ctx context.Context, in ActivateIn) (ActivateOut, error) {
	d, err := e.NetBox.Device(ctx, in.Device)
	if err != nil {
		return ActivateOut{}, netboxErr(err, StepActivateDevice, "re-reading device %s before activation", in.Device)
	}
	out := ActivateOut{Before: d.Status}
	if d.Status != intent.StatusStaged {
		return out, nil
	}
	if err := e.NetBox.SetStatus(ctx, d.ID, intent.StatusActive); err != nil {
		return out, netboxErr(err, StepActivateDevice, "setting device %s status staged → active", in.Device)
	}
	e.log().Info("device activated", "device", in.Device, "phase", StepActivateDevice, "from", d.Status, "to", intent.StatusActive)
	out.Changed = true
	return out, nil
}

// TagIn asks for tags on a device whose current tags are known.
type TagIn struct {
	DeviceID int      `json:"device_id"`
	Device   string   `json:"device"`
	Current  []string `json:"current"`
	Tags     []string `json:"tags"`
}

// TagOut lists the tags that were added.
type TagOut struct {
	Added []string `json:"added,omitempty"`
}

// TagDevice ensures the tags are on the device, writing only when one is missing.
func (e *Executor) TagDevice(ctx context.Context, in TagIn) (TagOut, error) {
	have := map[string]bool{}
	for _, t := range in.Current {
		have[t] = true
	}
	var missing []string
	for _, t := range in.Tags {
		if !have[t] {
			missing = append(missing, t)
			have[t] = true
		}
	}
	if len(missing) == 0 {
		return TagOut{}, nil
	}
	if err := e.NetBox.AddTags(ctx, in.DeviceID, missing...); err != nil {
		return TagOut{}, netboxErr(err, StepTagDevice, "tagging device %s with %v", in.Device, missing)
	}
	e.log().Info("device tagged", "device", in.Device, "phase", StepTagDevice, "tags", missing)
	return TagOut{Added: missing}, nil
}
