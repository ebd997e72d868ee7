package enrollment

import (
	"context"
	"log/slog"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/platformclass"
)

// BackfillEntry is the backfill's outcome for one device.
type BackfillEntry struct {
	Device string               `json:"device"`
	Result platformclass.Result `json:"result"`
	// Failure is set when the device could not be resolved or recorded.
	Failure *hostforge.Failure `json:"failure,omitempty"`
}

// Backfill runs the platform-class resolver and write policy over the named
// devices, or over every device NetBox lists when names is empty. It is the
// correction path for hosts enrolled before phase 0b existed: it never
// overwrites a populated NetBox value. With dryRun it reads but writes
// nothing, and each entry says what would be written. One device's failure
// does not stop the others; the error is non-nil only when the device list
// itself cannot be read.
func Backfill(ctx context.Context, nb NetBox, lister DeviceLister, fm FleetManager, names []string, dryRun bool, log *slog.Logger) ([]BackfillEntry, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(names) == 0 {
		all, err := lister.DeviceNames(ctx)
		if err != nil {
			return nil, hostforge.Classified(netboxErr(err, "platform_class_backfill", "listing devices"))
		}
		names = all
	}
	out := make([]BackfillEntry, 0, len(names))
	for _, name := range names {
		e := BackfillEntry{Device: name}
		r, err := backfillOne(ctx, nb, fm, name, dryRun, log)
		e.Result = r
		if err != nil {
			_, f, _ := hostforge.Classify(err)
			e.Failure = f
			log.Warn("platform class backfill failed", "device", name, "phase", platformclass.Phase, "code", f.Code, "error", f.Message)
		}
		out = append(out, e)
		if ctx.Err() != nil {
			break
		}
	}
	return out, nil
}

func backfillOne(ctx context.Context, nb NetBox, fm FleetManager, name string, dryRun bool, log *slog.Logger) (platformclass.Result, error) {
	d, err := nb.Device(ctx, name)
	if err != nil {
		return platformclass.Result{}, netboxErr(err, "platform_class_backfill", "reading device %s", name)
	}
	if err := validateDevice(d); err != nil {
		return platformclass.Result{}, err
	}
	key, err := platformclass.Resolve(platformClassInputs(d))
	if err != nil {
		return platformclass.Result{}, err
	}
	return platformclass.Record(ctx, nb, fm, platformclass.Target{DeviceID: d.ID, Device: d.Name, NetBoxValue: d.PlatformClass}, key, dryRun, log)
}
