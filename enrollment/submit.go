package enrollment

import (
	"context"

	"github.com/hostforge/hostforge"
)

// SubmitOptions are what a submission snapshots besides the device: the
// site, its configuration and gates, and the operator's parameters.
type SubmitOptions struct {
	// Site is the site's slug.
	Site string
	// Config is the site's configuration, snapshotted into the request so
	// a change to it cannot alter a running enrollment.
	Config SiteConfig
	// PlatformClassReady is the platform_class_activity_ready gate: the
	// fleet manager can record platform classes, so the platform-class
	// phase runs.
	PlatformClassReady bool
	// Params are the operator's parameters of this run.
	Params Params
}

// Submit builds the request for one device the way a submitter does: it
// reads the device's device_class from its NetBox role and snapshots the
// site configuration and the platform-class readiness gate. A device NetBox
// does not know fails here with NETBOX_DEVICE_NOT_FOUND; a role without a
// device_class gives a request that routing refuses.
func Submit(ctx context.Context, nb NetBox, device string, o SubmitOptions) (Request, error) {
	d, err := nb.Device(ctx, device)
	if err != nil {
		return Request{}, hostforge.Classified(netboxErr(err, "submit", "reading device %s to submit it", device))
	}
	return NewRequest(device, d.Role.DeviceClass, o.Site, o.Config, o.PlatformClassReady, o.Params), nil
}
