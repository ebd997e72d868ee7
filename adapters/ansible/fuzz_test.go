package ansible_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/adapters/ansible/ansibletest"
)

// FuzzUnpack unpacks bundles as they come from asset URLs: whatever the
// bytes, Unpack never panics, never writes outside its directory, and
// leaves no link that resolves (through any chain of links) outside it.
func FuzzUnpack(f *testing.F) {
	f.Add(zipOf(f, entry{name: "site.yml", body: ansibletest.Playbook}, entry{name: "roles/x/tasks/main.yml", body: "- debug: {}\n"}))
	f.Add(tgzOf(f, entry{name: "b/"}, entry{name: "b/site.yml", body: ansibletest.Playbook}, entry{name: "b/l", link: "site.yml"}))
	f.Add(zipOf(f, entry{name: "../x", body: "x"}))
	f.Add(tgzOf(f, entry{name: "l", link: "../.."}, entry{name: "l/x", body: "x"}))
	f.Add(tgzOf(f, entry{name: "x/"}, entry{name: "x/l", link: ".."}, entry{name: "esc", link: "x/l/../.."}))
	f.Add(zipOf(f, entry{name: "esc", link: "x/l/../.."}, entry{name: "x/l", link: ".."}))
	f.Add([]byte("PK\x03\x04garbage"))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		root := filepath.Join(dir, "root")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = ansible.Unpack(bytes.NewReader(b), int64(len(b)), root)
		r, err := os.OpenRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && p != dir && p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
				t.Fatalf("%s was written outside the bundle's directory", p)
			}
			if err == nil && d.Type()&fs.ModeSymlink != 0 {
				rel, _ := filepath.Rel(root, p)
				if _, err := r.Stat(rel); err != nil {
					target, _ := os.Readlink(p)
					t.Fatalf("link %s (to %s) does not resolve inside the bundle: %v", rel, target, err)
				}
			}
			return nil
		})
	})
}
