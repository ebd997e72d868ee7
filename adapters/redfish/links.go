package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// Navigation: Redfish links, collection members, and the first manager and
// system, discovered from the service root and cached per client.

// CheckLink reports whether p, a link a BMC answered (an @odata.id, an
// action target), is a path on the BMC's own Redfish service, safe to
// append to its endpoint: an absolute path under /redfish/, with no
// authority ("//"), no user info or "@", no backslash, no ".." segment and
// no control or space character — in its raw form and percent-decoded.
// Anything else could move a request, and the credential it carries, off
// the BMC.
func CheckLink(p string) error { return checkPath(p, true) }

// CheckPushURI is CheckLink for an UpdateService's MultipartHttpPushUri,
// which Redfish lets a BMC serve outside /redfish/ (Lenovo XCC answers
// /mfwupdate): any absolute path of the BMC's own origin, with none of
// what could move the request elsewhere.
func CheckPushURI(p string) error { return checkPath(p, false) }

func checkPath(p string, underRedfish bool) error {
	dec, err := url.PathUnescape(p)
	if err != nil {
		return fmt.Errorf("not a valid escaped path")
	}
	for _, s := range []string{p, dec} {
		switch {
		case underRedfish && !strings.HasPrefix(s, "/redfish/") && s != "/redfish":
			return fmt.Errorf("not an absolute path under /redfish/")
		case !strings.HasPrefix(s, "/"):
			return fmt.Errorf("not an absolute path")
		case strings.Contains(s, "//"):
			return fmt.Errorf("holds an authority or an empty segment (//)")
		case strings.Contains(s, "@"):
			return fmt.Errorf("holds user info (@)")
		case strings.Contains(s, `\`):
			return fmt.Errorf("holds a backslash")
		case strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
			return fmt.Errorf("holds a control or space character")
		}
		path, _, _ := strings.Cut(s, "?")
		path, _, _ = strings.Cut(path, "#")
		for _, seg := range strings.Split(path, "/") {
			if seg == ".." || seg == "." {
				return fmt.Errorf("holds a dot segment (%s)", seg)
			}
		}
	}
	return nil
}

func link(d doc, keys ...string) string {
	var cur any = d
	for _, k := range keys {
		m, ok := cur.(doc)
		if !ok {
			return ""
		}
		cur = m[k]
	}
	if m, ok := cur.(doc); ok {
		s, _ := m["@odata.id"].(string)
		return s
	}
	return ""
}

func str(d doc, k string) string { s, _ := d[k].(string); return s }

func members(d doc) []string {
	var out []string
	ms, _ := d["Members"].([]any)
	for _, m := range ms {
		if mm, ok := m.(doc); ok {
			if s, ok := mm["@odata.id"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func (c *client) members(ctx context.Context, coll string) ([]doc, error) {
	d, err := c.get(ctx, coll)
	if err != nil {
		return nil, err
	}
	var out []doc
	for _, m := range members(d) {
		md, err := c.get(ctx, m)
		if errors.Is(err, hostforge.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, md)
	}
	return out, nil
}

// paths remembers each listed member's resource under key(member), so a
// write to one member does not list the collection again.
func (c *client) paths(ds []doc, key func(doc) string) {
	if c.path == nil {
		c.path = map[string]string{}
	}
	for _, d := range ds {
		if p := str(d, "@odata.id"); p != "" {
			c.path[key(d)] = p
		}
	}
}

// root is the service root, read once per client.
func (c *client) root(ctx context.Context) (doc, error) {
	if c.rootDoc != nil {
		return c.rootDoc, nil
	}
	d, err := c.get(ctx, "/redfish/v1")
	if err != nil {
		return nil, err
	}
	c.rootDoc = d
	return d, nil
}

func (c *client) discover(ctx context.Context) error {
	if c.mgr != "" && c.sys != "" {
		return nil
	}
	root, err := c.root(ctx)
	if err != nil {
		return err
	}
	for _, x := range []struct {
		key string
		dst *string
	}{{"Managers", &c.mgr}, {"Systems", &c.sys}} {
		coll := link(root, x.key)
		if coll == "" {
			return fmt.Errorf("redfish: service root has no %s: %w", x.key, bmc.ErrUnsupported)
		}
		d, err := c.get(ctx, coll)
		if err != nil {
			return err
		}
		if ms := members(d); len(ms) > 0 {
			*x.dst = ms[0]
		} else {
			return fmt.Errorf("redfish: %s is empty: %w", coll, bmc.ErrUnsupported)
		}
	}
	return nil
}

// manager is the first manager's resource, read once per client: the
// callers navigate its links and actions, which do not change while a
// client lives (one attempt of the BMC phase).
func (c *client) manager(ctx context.Context) (doc, error) {
	if c.mgrDoc != nil {
		return c.mgrDoc, nil
	}
	if err := c.discover(ctx); err != nil {
		return nil, err
	}
	d, err := c.get(ctx, c.mgr)
	if err != nil {
		return nil, err
	}
	c.mgrDoc = d
	return d, nil
}

func (c *client) system(ctx context.Context) (doc, error) {
	if err := c.discover(ctx); err != nil {
		return nil, err
	}
	return c.get(ctx, c.sys)
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func action(d doc, name string) string {
	a, _ := d["Actions"].(doc)
	t, _ := a[name].(doc)
	return str(t, "target")
}
