package redfish

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// Identity: what vendor detection reads.

func (c *client) Identify(ctx context.Context) (bmc.Identity, error) {
	root, err := c.root(ctx)
	if err != nil {
		return bmc.Identity{}, err
	}
	enc := func(d doc) []byte {
		if d == nil {
			return nil
		}
		b, _ := json.Marshal(d)
		return b
	}
	var m, s doc
	if err := c.discover(ctx); err == nil {
		m, _ = c.manager(ctx)
		s, _ = c.get(ctx, c.sys)
	}
	id, err := bmc.IdentityFromJSON(enc(root), enc(m), enc(s))
	if err != nil {
		return bmc.Identity{}, fmt.Errorf("redfish: %v: %w", err, hostforge.ErrInvalid)
	}
	if v, err := bmc.Detect(id); err == nil {
		c.vendor = v
	}
	return id, nil
}

func (c *client) vendorOf(ctx context.Context) bmc.Vendor {
	if c.vendor == "" {
		_, _ = c.Identify(ctx)
	}
	return c.vendor
}
