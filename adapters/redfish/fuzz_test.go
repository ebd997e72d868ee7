package redfish_test

import (
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/internal/realdata"
)

// realLinks collects the @odata.id and action targets of a real capture.
func realLinks(f *testing.F, root string) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, y := range x {
				if s, ok := y.(string); ok && (k == "@odata.id" || k == "target") {
					out = append(out, s)
				}
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "index.json" || len(out) > 400 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var v any
		if json.Unmarshal(b, &v) == nil {
			walk(v)
		}
		return nil
	})
	return out
}

// FuzzCheckLink: a link CheckLink accepts, appended to a BMC's endpoint
// the way gofish builds a request's URL, always names that BMC: the same
// scheme and host, no user info.
func FuzzCheckLink(f *testing.F) {
	if dir, ok := realdata.Dir(); ok {
		for _, tree := range []string{"dell/r750-idrac9", "supermicro/sys-821ge-tnhr"} {
			for _, l := range realLinks(f, filepath.Join(dir, "redfish", tree)) {
				f.Add(l)
			}
		}
	}
	for _, s := range []string{"/redfish/v1", "@evil.example/x", "//evil/x", "/redfish/v1/%40evil", `/redfish/v1\x`, "/redfish/v1/..", "/redfish/v1/a?b=@c", "/redfish/v1/#@x"} {
		f.Add(s)
	}
	endpoints := []string{"https://10.10.0.12", "https://127.0.0.1:40443", "https://[fd00::1]:443"}
	f.Fuzz(func(t *testing.T, link string) {
		if redfish.CheckLink(link) != nil {
			return
		}
		for _, ep := range endpoints {
			base, _ := url.Parse(ep)
			u, err := url.Parse(ep + link)
			if err != nil {
				continue // the request is never built
			}
			if u.Scheme != base.Scheme || u.Host != base.Host || u.User != nil || !strings.HasPrefix(u.Path, "/redfish") {
				t.Fatalf("accepted %q, which moves the request to %s (user %v, path %q)", link, u.Host, u.User, u.Path)
			}
		}
	})
}
