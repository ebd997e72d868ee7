package redfish

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hostforge/hostforge/bmc"
)

// Resets of the BMC and of its host.

func (c *client) ResetManager(ctx context.Context) error {
	m, err := c.manager(ctx)
	if err != nil {
		return err
	}
	t := action(m, "#Manager.Reset")
	if t == "" {
		return fmt.Errorf("redfish: manager has no Reset action: %w", bmc.ErrUnsupported)
	}
	_, err = c.write(ctx, http.MethodPost, t, doc{"ResetType": "GracefulRestart"})
	return err
}

func (c *client) ResetSystem(ctx context.Context) error {
	s, err := c.system(ctx)
	if err != nil {
		return err
	}
	t := action(s, "#ComputerSystem.Reset")
	if t == "" {
		return fmt.Errorf("redfish: system has no Reset action: %w", bmc.ErrUnsupported)
	}
	_, err = c.write(ctx, http.MethodPost, t, doc{"ResetType": "ForceRestart"})
	return err
}
