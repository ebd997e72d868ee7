package enrollment

import (
	"context"
	"fmt"
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
	// Skipped says why a device of a site-wide pass was left alone: its role
	// carries no device class that has a platform class (switches, PDUs...).
	Skipped string `json:"skipped,omitempty"`
}

// Backfill runs the platform-class resolver and write policy over the named
// devices, or over every device NetBox lists when names is empty. It is the
// correction path for hosts enrolled before phase 0b existed: it never
// overwrites a populated NetBox value. With dryRun it reads but writes
// nothing, and each entry says what would be written. One device's failure
// does not stop the others; the error is non-nil only when the device list
// itself cannot be read. A site-wide pass skips devices whose role carries no
// device class that has a platform class (switches, PDUs, ...); a device
// named explicitly is always resolved.
func Backfill(ctx context.Context, nb NetBox, lister DeviceLister, fm FleetManager, names []string, dryRun bool, log *slog.Logger) ([]BackfillEntry, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sitewide := len(names) == 0
	if sitewide {
		all, err := lister.DeviceNames(ctx)
		if err != nil {
			return nil, hostforge.Classified(netboxErr(err, "platform_class_backfill", "listing devices"))
		}
		names = all
	}
	out := make([]BackfillEntry, 0, len(names))
	for _, name := range names {
		e := BackfillEntry{Device: name}
		r, skipped, err := backfillOne(ctx, nb, fm, name, sitewide, dryRun, log)
		e.Result, e.Skipped = r, skipped
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

func backfillOne(ctx context.Context, nb NetBox, fm FleetManager, name string, sitewide, dryRun bool, log *slog.Logger) (platformclass.Result, string, error) {
	d, err := nb.Device(ctx, name)
	if err != nil {
		return platformclass.Result{}, "", netboxErr(err, "platform_class_backfill", "reading device %s", name)
	}
	if sitewide && !platformclass.HasPlatformClass(d.Role.DeviceClass) {
		return platformclass.Result{}, fmt.Sprintf("device class %q has no platform class", d.Role.DeviceClass), nil
	}
	if err := validateDevice(d); err != nil {
		return platformclass.Result{}, "", err
	}
	key, err := platformclass.Resolve(platformClassInputs(d))
	if err != nil {
		return platformclass.Result{}, "", err
	}
	r, err := platformclass.Record(ctx, nb, fm, platformclass.Target{DeviceID: d.ID, Device: d.Name, NetBoxValue: d.PlatformClass}, key, dryRun, log)
	return r, "", err
}
