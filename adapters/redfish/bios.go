package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// BIOS attributes, read and staged through the @Redfish.Settings object.

func settingsObject(d doc) string { return link(d, "@Redfish.Settings", "SettingsObject") }

func jobID(loc string) string {
	if strings.Contains(loc, "/Jobs/") {
		return path.Base(loc)
	}
	return ""
}

func (c *client) applyTime(ctx context.Context, body doc) doc {
	if c.vendorOf(ctx) == bmc.VendorDell {
		body["@Redfish.SettingsApplyTime"] = doc{"ApplyTime": "OnReset"}
	}
	return body
}

func (c *client) bios(ctx context.Context) (doc, error) {
	s, err := c.system(ctx)
	if err != nil {
		return nil, err
	}
	p := link(s, "Bios")
	if p == "" {
		return nil, fmt.Errorf("redfish: system has no Bios: %w", bmc.ErrUnsupported)
	}
	return c.get(ctx, p)
}

func (c *client) BiosAttributes(ctx context.Context) (map[string]any, map[string]any, error) {
	b, err := c.bios(ctx)
	if err != nil {
		return nil, nil, err
	}
	cur, _ := b["Attributes"].(doc)
	pend := map[string]any{}
	if so := settingsObject(b); so != "" {
		sd, err := c.get(ctx, so)
		if err != nil && !errors.Is(err, hostforge.ErrNotFound) {
			return nil, nil, err
		}
		sa, _ := sd["Attributes"].(doc)
		for k, v := range sa {
			if fmt.Sprint(cur[k]) != fmt.Sprint(v) {
				pend[k] = v
			}
		}
	}
	return cur, pend, nil
}

func (c *client) SetBiosAttributes(ctx context.Context, attrs map[string]any) (string, error) {
	b, err := c.bios(ctx)
	if err != nil {
		return "", err
	}
	target := settingsObject(b)
	if target == "" {
		target = str(b, "@odata.id")
	}
	loc, err := c.write(ctx, http.MethodPatch, target, c.applyTime(ctx, doc{"Attributes": attrs}))
	return jobID(loc), err
}
