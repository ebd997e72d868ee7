package enrollment

import (
	"context"

	"github.com/hostforge/hostforge"
)

// Submit builds the request for one device the way a submitter does: it
// reads the device's device_class from its NetBox role and snapshots the
// site configuration and the platform-class readiness gate. A device NetBox
// does not know fails here with NETBOX_DEVICE_NOT_FOUND; a role without a
// device_class gives a request that routing refuses.
func Submit(ctx context.Context, nb NetBox, device, site string, cfg SiteConfig, platformClassReady bool, p Params) (Request, error) {
	d, err := nb.Device(ctx, device)
	if err != nil {
		return Request{}, hostforge.Classified(netboxErr(err, "submit", "reading device %s to submit it", device))
	}
	return NewRequest(device, d.Role.DeviceClass, site, cfg, platformClassReady, p), nil
}
