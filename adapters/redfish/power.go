package redfish

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hostforge/hostforge/bmc"
)

// Resets of the BMC and of its host.

func (c *client) ResetManager(ctx context.Context) error {
	_, t, err := c.resetAction(ctx, "manager", c.manager, managerReset)
	if err != nil {
		return err
	}
	_, err = c.write(ctx, http.MethodPost, t, doc{"ResetType": "GracefulRestart"})
	return err
}

func (c *client) ResetSystem(ctx context.Context) error {
	_, t, err := c.resetAction(ctx, "system", c.system, systemReset)
	if err != nil {
		return err
	}
	_, err = c.write(ctx, http.MethodPost, t, doc{"ResetType": "ForceRestart"})
	return err
}

// The Reset actions of the manager and of the system.
const (
	managerReset = "#Manager.Reset"
	systemReset  = "#ComputerSystem.Reset"
)

// resetAction reads the manager or the system (what, with read) and the
// target of its Reset action (name); one without it is
// bmc.ErrUnsupported.
func (c *client) resetAction(ctx context.Context, what string, read func(context.Context) (doc, error), name string) (doc, string, error) {
	d, err := read(ctx)
	if err != nil {
		return nil, "", err
	}
	t := action(d, name)
	if t == "" {
		return nil, "", fmt.Errorf("redfish: %s has no Reset action: %w", what, bmc.ErrUnsupported)
	}
	return d, t, nil
}
