package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/firmware"
)

// Platform lockdown, where the vendor has one and its BMC shows it (the
// real captures' shapes):
//
//   - Dell iDRAC: the manager attribute Lockdown.1.SystemLockdown,
//     Enabled or Disabled;
//   - Supermicro: the manager's Oem.Supermicro.SysLockdown resource, its
//     SysLockdownEnabled;
//   - Lenovo XCC: IPMI-over-KCS access off, the manager's
//     Oem.Lenovo.KCSEnabled false (the part of XCC's lockdown its Redfish
//     tree shows; KCSEnabled true is lockdown off).
//
// Anywhere else (an AMI MegaRAC, a BMC without those resources) there is
// none: Lockdown reports firmware.LockdownNone and SetLockdown changes
// nothing.

// dellLockdown is iDRAC's system lockdown manager attribute.
const dellLockdown = "Lockdown.1.SystemLockdown"

// lockdownPlace is where a BMC keeps its lockdown.
type lockdownPlace struct {
	kind string // "dell", "supermicro", "lenovo"; "" for none
	path string // the resource read and patched
}

func (c *client) lockdownPlace(ctx context.Context) (lockdownPlace, error) {
	switch c.vendorOf(ctx) {
	case bmc.VendorDell:
		if err := c.discover(ctx); err != nil {
			return lockdownPlace{}, err
		}
		return lockdownPlace{"dell", c.mgr + "/Attributes"}, nil
	case bmc.VendorSupermicro:
		m, err := c.manager(ctx)
		if err != nil {
			return lockdownPlace{}, err
		}
		if p := link(m, "Oem", "Supermicro", "SysLockdown"); p != "" {
			return lockdownPlace{"supermicro", p}, nil
		}
	case bmc.VendorLenovo:
		m, err := c.manager(ctx)
		if err != nil {
			return lockdownPlace{}, err
		}
		oem, _ := m["Oem"].(doc)
		lo, _ := oem["Lenovo"].(doc)
		if _, ok := lo["KCSEnabled"]; ok {
			return lockdownPlace{"lenovo", c.mgr}, nil
		}
	}
	return lockdownPlace{}, nil
}

// Lockdown reads the host's platform lockdown.
func (f *Firmware) Lockdown(ctx context.Context, machine string) (firmware.LockdownState, error) {
	c, err := f.connect(ctx, machine, false)
	if err != nil {
		return "", err
	}
	defer c.close()
	st, err := c.lockdown(ctx)
	return st, classify(err, "reading the lockdown of %s", machine)
}

func (c *client) lockdown(ctx context.Context) (firmware.LockdownState, error) {
	pl, err := c.lockdownPlace(ctx)
	if err != nil || pl.kind == "" {
		return firmware.LockdownNone, err
	}
	if err := c.follow(pl.path); err != nil {
		return "", err
	}
	d, err := c.get(ctx, pl.path)
	if errors.Is(err, hostforge.ErrNotFound) {
		// The BMC does not show it (a capture without the iDRAC's
		// attributes): there is none to change or restore.
		return firmware.LockdownNone, nil
	}
	if err != nil {
		return "", err
	}
	on := func(b bool) firmware.LockdownState {
		if b {
			return firmware.LockdownEnabled
		}
		return firmware.LockdownDisabled
	}
	switch pl.kind {
	case "dell":
		attrs, _ := d["Attributes"].(doc)
		switch str(attrs, dellLockdown) {
		case "Enabled":
			return firmware.LockdownEnabled, nil
		case "Disabled":
			return firmware.LockdownDisabled, nil
		}
	case "supermicro":
		if v, ok := d["SysLockdownEnabled"].(bool); ok {
			return on(v), nil
		}
	case "lenovo":
		oem, _ := d["Oem"].(doc)
		lo, _ := oem["Lenovo"].(doc)
		switch v := lo["KCSEnabled"].(type) {
		case bool:
			return on(!v), nil
		case string:
			return on(v == "Disabled"), nil
		}
	}
	return firmware.LockdownNone, nil
}

// SetLockdown turns platform lockdown on or off where the vendor has it;
// elsewhere it does nothing.
func (f *Firmware) SetLockdown(ctx context.Context, machine string, enabled bool) error {
	c, err := f.connect(ctx, machine, false)
	if err != nil {
		return err
	}
	defer c.close()
	pl, err := c.lockdownPlace(ctx)
	if err != nil {
		return classify(err, "setting the lockdown of %s", machine)
	}
	var body doc
	switch pl.kind {
	case "":
		return nil
	case "dell":
		v := "Disabled"
		if enabled {
			v = "Enabled"
		}
		body = doc{"Attributes": doc{dellLockdown: v}}
	case "supermicro":
		body = doc{"SysLockdownEnabled": enabled}
	case "lenovo":
		var kcs any = !enabled
		if m, err := c.manager(ctx); err == nil {
			oem, _ := m["Oem"].(doc)
			lo, _ := oem["Lenovo"].(doc)
			if _, isString := lo["KCSEnabled"].(string); isString {
				kcs = map[bool]string{true: "Disabled", false: "Enabled"}[enabled]
			}
		}
		body = doc{"Oem": doc{"Lenovo": doc{"KCSEnabled": kcs}}}
	}
	if err := c.follow(pl.path); err != nil {
		return classify(err, "setting the lockdown of %s", machine)
	}
	_, err = c.write(ctx, http.MethodPatch, pl.path, body)
	return classify(err, "setting the lockdown of %s to %s", machine, fmt.Sprint(map[bool]string{true: "Enabled", false: "Disabled"}[enabled]))
}
