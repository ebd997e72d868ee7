package netbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"

	nb "github.com/netbox-community/go-netbox/v4"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/intent"
)

// SetStatus PATCHes the device's status and nothing else. The value is
// checked against go-netbox's DeviceStatusValue choices first, so an unknown
// status never reaches NetBox.
func (c *Client) SetStatus(ctx context.Context, deviceID int, status intent.Status) error {
	v, err := nb.NewDeviceStatusValueFromValue(string(status))
	if err != nil {
		return fmt.Errorf("netbox: device id %d: status %q is not a NetBox device status: %w", deviceID, status, hostforge.ErrInvalid)
	}
	body := nb.PatchedWritableDeviceWithConfigContextRequest{Status: v}
	if err := c.do(ctx, http.MethodPatch, fmt.Sprintf("dcim/devices/%d/", deviceID), body, nil); err != nil {
		return fmt.Errorf("netbox: device id %d: setting status to %s: %w", deviceID, status, err)
	}
	return nil
}

// SetPlatformClass PATCHes custom_fields.platform_class and nothing else.
// NetBox merges a PATCHed custom_fields object into the stored data, so the
// device's other custom fields are untouched.
func (c *Client) SetPlatformClass(ctx context.Context, deviceID int, value string) error {
	body := nb.PatchedWritableDeviceWithConfigContextRequest{
		CustomFields: map[string]any{"platform_class": value},
	}
	if err := c.do(ctx, http.MethodPatch, fmt.Sprintf("dcim/devices/%d/", deviceID), body, nil); err != nil {
		return fmt.Errorf("netbox: device id %d: writing custom_fields.platform_class: %w", deviceID, err)
	}
	return nil
}

var slugRE = regexp.MustCompile(`^[-\w]+$`)

// AddTags ensures the tag slugs are on the device without dropping any tag
// already there. A slug with no tag object yet is created (name = slug).
//
// NetBox replaces a device's whole tag list on PATCH and has no ETags, so
// this is a read-modify-write: the device's tags are re-read immediately
// before the PATCH, and nothing is written when every slug is already
// present. A tag another writer adds between that read and the PATCH is
// dropped; see the package documentation.
func (c *Client) AddTags(ctx context.Context, deviceID int, slugs ...string) error {
	for _, s := range slugs {
		if !slugRE.MatchString(s) {
			return fmt.Errorf("netbox: device id %d: tag slug %q is not a valid slug: %w", deviceID, s, hostforge.ErrInvalid)
		}
	}
	read := func() (map[string]wRef, []wRef, error) {
		var d wDevice
		if err := c.do(ctx, http.MethodGet, fmt.Sprintf("dcim/devices/%d/?exclude=config_context", deviceID), nil, &d); err != nil {
			return nil, nil, fmt.Errorf("netbox: device id %d: reading tags: %w", deviceID, err)
		}
		have := map[string]wRef{}
		for _, t := range d.Tags {
			have[t.Slug] = t
		}
		return have, d.Tags, nil
	}
	have, current, err := read()
	if err != nil {
		return err
	}
	var missing []string
	for _, s := range slugs {
		if _, ok := have[s]; !ok {
			missing = append(missing, s)
			have[s] = wRef{}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	tags, err := c.ensureTags(ctx, deviceID, missing)
	if err != nil {
		return err
	}
	// Re-read right before the PATCH to keep the lost-update window as short
	// as one round trip.
	if _, current, err = read(); err != nil {
		return err
	}
	req := make([]nb.NestedTagRequest, 0, len(current)+len(tags))
	seen := map[string]bool{}
	for _, t := range append(current, tags...) {
		if !seen[t.Slug] {
			seen[t.Slug] = true
			req = append(req, nb.NestedTagRequest{Name: t.Name, Slug: t.Slug})
		}
	}
	body := nb.PatchedWritableDeviceWithConfigContextRequest{Tags: req}
	if err := c.do(ctx, http.MethodPatch, fmt.Sprintf("dcim/devices/%d/", deviceID), body, nil); err != nil {
		return fmt.Errorf("netbox: device id %d: adding tags %v: %w", deviceID, missing, err)
	}
	return nil
}

// ensureTags returns the tag objects of slugs, creating the missing ones.
func (c *Client) ensureTags(ctx context.Context, deviceID int, slugs []string) ([]wRef, error) {
	lookup := func() (map[string]wRef, error) {
		q := url.Values{}
		for _, s := range slugs {
			q.Add("slug", s)
		}
		got, err := list[wRef](ctx, c, "extras/tags/", q)
		if err != nil {
			return nil, fmt.Errorf("netbox: device id %d: looking up tags %v: %w", deviceID, slugs, err)
		}
		m := map[string]wRef{}
		for _, t := range got {
			m[t.Slug] = t
		}
		return m, nil
	}
	found, err := lookup()
	if err != nil {
		return nil, err
	}
	out := make([]wRef, 0, len(slugs))
	for _, s := range slugs {
		t, ok := found[s]
		if !ok {
			var created wRef
			err := c.do(ctx, http.MethodPost, "extras/tags/", nb.TagRequest{Name: s, Slug: s}, &created)
			if errors.Is(err, hostforge.ErrInvalid) {
				// Another writer created it first (or a retried POST landed
				// twice): NetBox refuses the duplicate slug; read it back.
				again, lerr := lookup()
				if lerr != nil {
					return nil, lerr
				}
				if t2, ok := again[s]; ok {
					created, err = t2, nil
				}
			}
			if err != nil {
				return nil, fmt.Errorf("netbox: device id %d: creating tag %q: %w", deviceID, s, err)
			}
			c.log.Info("netbox: tag created", "tag", s)
			t = created
		}
		out = append(out, t)
	}
	return out, nil
}
