package hostforge

import "context"

type deviceKey struct{}

// WithDevice returns ctx carrying the name of the device a call serves.
// The phases set it before they reach a device's systems, so an adapter can
// choose per-device settings: the Redfish connector picks a BMC's TLS trust
// (a CA or a certificate pin) by device name.
func WithDevice(ctx context.Context, device string) context.Context {
	if device == "" {
		return ctx
	}
	return context.WithValue(ctx, deviceKey{}, device)
}

// DeviceFrom returns the device name WithDevice put in ctx, or "".
func DeviceFrom(ctx context.Context) string {
	s, _ := ctx.Value(deviceKey{}).(string)
	return s
}
