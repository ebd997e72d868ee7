package platformclass

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode"

	"github.com/hostforge/hostforge"
)

// Phase is the workflow phase name of platform-class recording.
const Phase = "record_platform_class"

// MaxLen is the longest key both systems of record accept.
const MaxLen = 128

// NoGPU is the GPUTYPE of a device without GPUs.
const NoGPU = "NOGPU"

// Failure codes.
var (
	Unresolvable = hostforge.Declare(hostforge.Spec{
		Code:      "PLATFORM_CLASS_UNRESOLVABLE",
		Phase:     "record_platform_class",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Fix the NetBox data the message names — custom_fields.gpu_type, or the manufacturer and model, on the device type; the device's config_context ztp block; or a platform_class longer than the fleet manager takes — then rerun the enrollment (or the platform-class backfill).",
	})
	RecordFailed = hostforge.Declare(hostforge.Spec{
		Code:      "PLATFORM_CLASS_RECORD_FAILED",
		Phase:     "record_platform_class",
		Owner:     hostforge.OwnerFleetManager,
		Retryable: true,
		Action:    "NetBox or the fleet manager refused or failed to record the platform class: check that the platform_class custom field exists on this site's NetBox and that the fleet manager API is healthy, then rerun.",
	})
)

// Device classes the resolver knows. They match intent's device classes.
const (
	ClassGPUCompute   = "GPU_COMPUTE"
	ClassCPUBaremetal = "CPU_BAREMETAL"
	ClassHypervisor   = "HYPERVISOR"
)

// HasPlatformClass reports whether devices of the class have a platform
// class: GPU compute, CPU baremetal and hypervisor devices do; switches and
// other infrastructure do not.
func HasPlatformClass(deviceClass string) bool {
	switch deviceClass {
	case ClassGPUCompute, ClassCPUBaremetal, ClassHypervisor:
		return true
	}
	return false
}

// Inputs are everything the key is computed from.
type Inputs struct {
	// Device names the device in failure messages.
	Device       string
	DeviceClass  string
	Manufacturer string
	Model        string
	// GPUType is the device type's custom_fields.gpu_type ("" when empty).
	GPUType string
	// HasZTP says whether the rendered config context has a ztp key at all.
	HasZTP bool
	// ZTP is the value of that key (any JSON value) when HasZTP.
	ZTP any
}

// Resolve computes the key, or returns a PLATFORM_CLASS_UNRESOLVABLE Failure
// naming the field to fix.
func Resolve(in Inputs) (string, error) {
	gpu := strings.TrimSpace(in.GPUType)
	if gpu == "" {
		switch in.DeviceClass {
		case ClassCPUBaremetal, ClassHypervisor:
			gpu = NoGPU
		case ClassGPUCompute:
			return "", Unresolvable.New("device %s: device type %s %s has no custom_fields.gpu_type, which a GPU compute device needs", in.Device, in.Manufacturer, in.Model)
		default:
			return "", Unresolvable.New("device %s: device type %s %s has no custom_fields.gpu_type and device class %q is neither CPU baremetal nor hypervisor, so NOGPU cannot be assumed", in.Device, in.Manufacturer, in.Model, in.DeviceClass)
		}
	} else {
		gpu = squash(gpu)
		if gpu == "" {
			return "", Unresolvable.New("device %s: custom_fields.gpu_type %q has no letters or digits", in.Device, in.GPUType)
		}
	}
	mfr, model := squash(in.Manufacturer), squash(in.Model)
	if mfr == "" || model == "" {
		return "", Unresolvable.New("device %s: device type manufacturer %q / model %q give an empty DEVICETYPE", in.Device, in.Manufacturer, in.Model)
	}
	fabric := "NORDMA"
	if gpu != NoGPU && in.HasZTP {
		var err error
		if fabric, err = fabricOf(in.Device, in.ZTP); err != nil {
			return "", err
		}
	}
	key := gpu + "_" + mfr + model + "_" + fabric + "_01"
	if len(key) > MaxLen {
		return "", Unresolvable.New("device %s: computed platform class is %d characters, longer than %d: %.40s...", in.Device, len(key), MaxLen, key)
	}
	return key, nil
}

// fabricOf reads FABRICTYPE from a present ztp block.
func fabricOf(device string, ztp any) (string, error) {
	block, ok := ztp.(map[string]any)
	if !ok {
		return "", Unresolvable.New("device %s: config_context.ztp is a %s, want an object", device, jsonKind(ztp))
	}
	if _, ok := block["infiniband"]; ok {
		return "IB", nil
	}
	return "", Unresolvable.New("device %s: config_context.ztp is present but has no infiniband section; the fabric cannot be guessed (the RoCE marker is not defined yet)", device)
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, int, int64, float32:
		return "number"
	case []any:
		return "list"
	}
	return fmt.Sprintf("%T", v)
}

// squash upper-cases s and strips every character that is not a letter or digit.
func squash(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// NetBoxWriter writes custom_fields.platform_class, and nothing else.
type NetBoxWriter interface {
	SetPlatformClass(ctx context.Context, deviceID int, value string) error
}

// FleetRecord is the fleet manager's per-device platform_class.
type FleetRecord interface {
	PlatformClass(ctx context.Context, device string) (string, error)
	SetPlatformClass(ctx context.Context, device, value string) error
}

// Target is the device being recorded.
type Target struct {
	DeviceID int
	Device   string
	// NetBoxValue is the current custom_fields.platform_class ("" when empty).
	NetBoxValue string
}

// Result says what Record decided and did.
type Result struct {
	// Computed is the resolved key.
	Computed string `json:"computed"`
	// Effective is the value both systems now hold (NetBox's when it diverged).
	Effective string `json:"effective"`
	// Divergent is true when NetBox held a different, kept value.
	Divergent bool `json:"divergent,omitempty"`
	// NetBoxWrite / FleetWrite say whether a write was (or, in a dry run,
	// would be) made.
	NetBoxWrite bool `json:"netbox_write,omitempty"`
	FleetWrite  bool `json:"fleet_write,omitempty"`
	// FleetPrevious is the fleet manager's value before the write.
	FleetPrevious string `json:"fleet_previous,omitempty"`
}

// Plan applies the write policy to a computed key without writing anything.
// The fleet manager's current value is fleetValue.
func Plan(t Target, computed, fleetValue string) (Result, error) {
	r := Result{Computed: computed, Effective: computed, FleetPrevious: fleetValue}
	switch cur := strings.TrimSpace(t.NetBoxValue); {
	case cur == "":
		r.NetBoxWrite = true
	case cur == computed:
	default:
		if len(cur) > MaxLen {
			return r, Unresolvable.New("device %s: NetBox custom_fields.platform_class is %d characters, longer than %d; the fleet manager would refuse it. Clear it in NetBox and rerun the backfill", t.Device, len(cur), MaxLen)
		}
		r.Divergent = true
		r.Effective = cur
	}
	r.FleetWrite = fleetValue != r.Effective
	return r, nil
}

// Record applies the write policy: it reads the fleet manager's value, plans,
// and makes at most one NetBox write and one fleet manager write. With dryRun
// it reads but never writes, and reports what it would write.
func Record(ctx context.Context, nb NetBoxWriter, fm FleetRecord, t Target, computed string, dryRun bool, log *slog.Logger) (Result, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fleetValue, err := fm.PlatformClass(ctx, t.Device)
	if err != nil && !errors.Is(err, hostforge.ErrNotFound) {
		return Result{Computed: computed}, recordErr(err, "reading the fleet manager's platform_class of %s", t.Device)
	}
	r, err := Plan(t, computed, fleetValue)
	if err != nil {
		return r, err
	}
	if r.Divergent {
		log.Warn("NetBox platform_class differs from the computed key; keeping NetBox's value",
			"device", t.Device, "phase", Phase, "netbox", r.Effective, "computed", computed)
	}
	if dryRun {
		return r, nil
	}
	if r.NetBoxWrite {
		if err := nb.SetPlatformClass(ctx, t.DeviceID, r.Effective); err != nil {
			return r, recordErr(err, "writing NetBox custom_fields.platform_class of %s", t.Device)
		}
	}
	if r.FleetWrite {
		if err := fm.SetPlatformClass(ctx, t.Device, r.Effective); err != nil {
			return r, recordErr(err, "setting the fleet manager's platform_class of %s", t.Device)
		}
	}
	return r, nil
}

// recordErr keeps a Failure or a context error as it is and classifies the
// rest as PLATFORM_CLASS_RECORD_FAILED.
func recordErr(err error, format string, args ...any) error {
	if _, ok := hostforge.AsFailure(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return RecordFailed.Wrap(err, format, args...)
}
