package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// Boot options and the boot order, written or staged.

func (c *client) bootOptionDocs(ctx context.Context) ([]doc, error) {
	s, err := c.system(ctx)
	if err != nil {
		return nil, err
	}
	p := link(s, "Boot", "BootOptions")
	if p == "" {
		p = link(s, "BootOptions")
	}
	if p == "" {
		return nil, fmt.Errorf("redfish: system has no BootOptions: %w", bmc.ErrUnsupported)
	}
	ds, err := c.members(ctx, p)
	if err == nil {
		c.paths(ds, func(d doc) string { return "boot option " + optionID(d) })
	}
	return ds, err
}

func optionID(d doc) string {
	if r := str(d, "BootOptionReference"); r != "" {
		return r
	}
	return str(d, "Id")
}

func (c *client) BootOptions(ctx context.Context) ([]bmc.BootOption, error) {
	ds, err := c.bootOptionDocs(ctx)
	if err != nil {
		return nil, err
	}
	var out []bmc.BootOption
	for _, d := range ds {
		o := bmc.BootOption{ID: optionID(d), DisplayName: str(d, "DisplayName"), UefiDevicePath: str(d, "UefiDevicePath")}
		if v, ok := d["BootOptionEnabled"].(bool); ok {
			o.Enabled = &v
		}
		out = append(out, o)
	}
	return out, nil
}

func (c *client) SetBootOptionEnabled(ctx context.Context, id string, enabled bool) error {
	if p := c.path["boot option "+id]; p != "" {
		_, err := c.write(ctx, http.MethodPatch, p, doc{"BootOptionEnabled": enabled})
		return err
	}
	ds, err := c.bootOptionDocs(ctx)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if optionID(d) == id {
			_, err := c.write(ctx, http.MethodPatch, str(d, "@odata.id"), doc{"BootOptionEnabled": enabled})
			return err
		}
	}
	return bmc.HTTPError(http.StatusNotFound, "boot option "+id+" not found")
}

func bootOrder(d doc) []string {
	b, _ := d["Boot"].(doc)
	var out []string
	for _, x := range asSlice(b["BootOrder"]) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (c *client) BootOrder(ctx context.Context) ([]string, []string, error) {
	s, err := c.system(ctx)
	if err != nil {
		return nil, nil, err
	}
	cur := bootOrder(s)
	var pend []string
	if so := settingsObject(s); so != "" {
		sd, err := c.get(ctx, so)
		if err != nil && !errors.Is(err, hostforge.ErrNotFound) {
			return nil, nil, err
		}
		if p := bootOrder(sd); p != nil && !slices.Equal(p, cur) {
			pend = p
		}
	}
	return cur, pend, nil
}

func (c *client) SetBootOrder(ctx context.Context, order []string) (string, error) {
	s, err := c.system(ctx)
	if err != nil {
		return "", err
	}
	body := doc{"Boot": doc{"BootOrder": order}}
	target := settingsObject(s)
	if target == "" {
		target = c.sys
	} else {
		body = c.applyTime(ctx, body)
	}
	loc, err := c.write(ctx, http.MethodPatch, target, body)
	return jobID(loc), err
}
