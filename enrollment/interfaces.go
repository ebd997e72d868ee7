package enrollment

import (
	"context"

	"github.com/hostforge/hostforge/intent"
)

// NetBox is what the workflow needs from the source of truth. Implementations
// return hostforge.ErrNotFound, ErrUnauthorized, ErrUnavailable or ErrInvalid
// (wrapped) for what NetBox said, or a *hostforge.Failure when they know more;
// the workflow classifies the rest.
type NetBox interface {
	// Device reads one host's whole intent by device name.
	Device(ctx context.Context, name string) (intent.Device, error)
	// SetStatus changes the device status, and nothing else.
	SetStatus(ctx context.Context, deviceID int, status intent.Status) error
	// AddTags ensures the tag slugs are on the device without dropping any
	// tag already there; a slug that does not exist yet is created.
	AddTags(ctx context.Context, deviceID int, slugs ...string) error
	// SetPlatformClass writes custom_fields.platform_class, and nothing else.
	SetPlatformClass(ctx context.Context, deviceID int, value string) error
}

// DeviceLister lists device names; the platform-class backfill uses it to
// walk every device.
type DeviceLister interface {
	DeviceNames(ctx context.Context) ([]string, error)
}

// FleetManager is the fleet inventory service's per-device record.
type FleetManager interface {
	// PlatformClass returns the device's recorded platform_class, "" when unset.
	PlatformClass(ctx context.Context, device string) (string, error)
	// SetPlatformClass records the device's platform_class.
	SetPlatformClass(ctx context.Context, device, value string) error
}

// Vault holds secrets as items of named fields.
type Vault interface {
	// Item returns the fields of the named item; hostforge.ErrNotFound when absent.
	Item(ctx context.Context, name string) (map[string]string, error)
}
