package ansible_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/adapters/ansible/ansibletest"
	"github.com/hostforge/hostforge/extensions"
)

// bundleServer serves archive at /b.tgz and counts requests.
func bundleServer(t *testing.T, tls bool, archive []byte) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write(archive)
	})
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &hits
}

func runnerFor(t *testing.T, client *http.Client, max int64, log *slog.Logger) (*ansible.Runner, string) {
	t.Helper()
	cache := t.TempDir()
	r, err := ansible.New(ansible.Config{Playbooks: &ansibletest.Fake{}, CacheDir: cache, WorkDir: t.TempDir(), HTTPClient: client, MaxBundle: max, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return r, cache
}

// A bundle fetched by URL without a sha256 is refused, and nothing is
// downloaded: its bytes could be anything the server (or the network)
// hands over.
func TestBundleURLNeedsSHA256(t *testing.T) {
	archive := tgzOf(t, entry{name: "site.yml", body: ansibletest.Playbook})
	srv, hits := bundleServer(t, true, archive)
	r, _ := runnerFor(t, srv.Client(), 0, nil)
	_, err := r.Run(context.Background(), request(srv.URL+"/b.tgz", "", extensions.AnsibleOptions{}))
	if !ansible.AssetInvalid.Is(err) || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("error %v, want EXTENSION_ANSIBLE_ASSET_INVALID naming sha256", err)
	}
	if hits.Load() != 0 {
		t.Errorf("the bundle was downloaded %d times", hits.Load())
	}
}

// Plain http is refused unless the asset opts in with allowHttp; an
// opted-in download is logged at every use, from the cache too.
func TestPlainHTTPBundleNeedsOptIn(t *testing.T) {
	archive := tgzOf(t, entry{name: "site.yml", body: ansibletest.Playbook})
	srv, hits := bundleServer(t, false, archive)
	logs := &bytes.Buffer{}
	r, _ := runnerFor(t, nil, 0, slog.New(slog.NewTextHandler(logs, nil)))
	req := request(srv.URL+"/b.tgz?token=sekrit", digest(archive), extensions.AnsibleOptions{})
	_, err := r.Run(context.Background(), req)
	if !ansible.AssetInvalid.Is(err) || !strings.Contains(err.Error(), "allowHttp") {
		t.Fatalf("error %v, want EXTENSION_ANSIBLE_ASSET_INVALID naming allowHttp", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the refused bundle was downloaded")
	}
	req.Assets[0].AllowHTTP = true
	for i := range 2 {
		if _, err := r.Run(context.Background(), req); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("%d downloads, want 1 (the second run uses the cache)", hits.Load())
	}
	if n := strings.Count(logs.String(), "plain http"); n != 2 {
		t.Errorf("%d log lines about plain http for 2 uses:\n%s", n, logs)
	}
	if strings.Contains(logs.String(), "sekrit") {
		t.Errorf("the log carries the URL's query:\n%s", logs)
	}
}

// A download over the cap ends as EXTENSION_ANSIBLE_ASSET_TOO_LARGE while
// it streams, whether or not the server announced its length, and leaves
// nothing in the cache.
func TestBundleOverTheCapLeavesNothing(t *testing.T) {
	big := tgzOf(t, entry{name: "site.yml", body: ansibletest.Playbook}, entry{name: "blob", body: randomText(64 << 10)})
	for _, announce := range []bool{true, false} {
		t.Run("content-length "+strconv.FormatBool(announce), func(t *testing.T) {
			var sent atomic.Int64
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if announce {
					w.Header().Set("Content-Length", strconv.Itoa(len(big)))
				}
				for i := 0; i < len(big); i += 1024 {
					n, err := w.Write(big[i:min(i+1024, len(big))])
					sent.Add(int64(n))
					if err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			}))
			defer srv.Close()
			r, cache := runnerFor(t, srv.Client(), 16<<10, nil)
			_, err := r.Run(context.Background(), request(srv.URL+"/b.tgz", digest(big), extensions.AnsibleOptions{}))
			if !ansible.AssetTooLarge.Is(err) || !strings.Contains(err.Error(), "16 KiB") {
				t.Fatalf("error %v, want EXTENSION_ANSIBLE_ASSET_TOO_LARGE naming the cap", err)
			}
			if left := files(t, cache); len(left) != 0 {
				t.Errorf("left in the cache: %q", left)
			}
		})
	}
	// The cap bounds what an archive unpacks to as well.
	bomb := tgzOf(t, entry{name: "site.yml", body: ansibletest.Playbook}, entry{name: "zeros", body: strings.Repeat("\x00", 256<<10)})
	srv, _ := bundleServer(t, true, bomb)
	r, cache := runnerFor(t, srv.Client(), 64<<10, nil)
	_, err := r.Run(context.Background(), request(srv.URL+"/b.tgz", digest(bomb), extensions.AnsibleOptions{}))
	if !ansible.AssetTooLarge.Is(err) {
		t.Fatalf("a %d-byte archive unpacking to 256 KiB under a 64 KiB cap: %v", len(bomb), err)
	}
	if left := files(t, cache); len(left) != 0 {
		t.Errorf("left in the cache: %q", left)
	}
}

// randomText is n bytes gzip cannot shrink much.
func randomText(n int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return string(b)
}

// files lists everything below dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	return out
}

// Link targets were checked one at a time, lexically: x/l -> .. stays in
// the bundle, and esc -> x/l/../.. looks as if it did (x/l/.. is x,
// x/.. the bundle), yet esc resolves to the bundle's parent. Unpacking
// resolves every link through the bundle's root and refuses the archive,
// in either order of the two entries and in both formats.
func TestUnpackRefusesLinkChains(t *testing.T) {
	chain := []entry{{name: "x/"}, {name: "x/l", link: ".."}, {name: "esc", link: "x/l/../.."}}
	reversed := []entry{{name: "x/"}, {name: "esc", link: "x/l/../.."}, {name: "x/l", link: ".."}}
	deeper := []entry{{name: "a/b/"}, {name: "a/b/up", link: "../.."}, {name: "a/out", link: "b/up/../../etc"}}
	archives := map[string][]byte{
		"tgz":          tgzOf(t, chain...),
		"zip":          zipOf(t, chain...),
		"tgz reversed": tgzOf(t, reversed...),
		"zip deeper":   zipOf(t, deeper...),
		"self loop":    tgzOf(t, entry{name: "loop", link: "loop"}),
		"dangling":     tgzOf(t, entry{name: "nothing", link: "missing/../.."}),
	}
	for name, archive := range archives {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("outside"), 0o600); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(dir, "bundle")
			_ = os.Mkdir(root, 0o755)
			err := ansible.Unpack(bytes.NewReader(archive), int64(len(archive)), root)
			if err == nil {
				t.Fatal("unpacked")
			}
			// Whatever is left holds no link that leads out.
			r, rerr := os.OpenRoot(root)
			if rerr != nil {
				t.Fatal(rerr)
			}
			defer r.Close()
			_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type()&fs.ModeSymlink != 0 {
					rel, _ := filepath.Rel(root, p)
					if _, err := r.Stat(rel); err != nil {
						t.Errorf("the link %s is left and does not resolve in the bundle: %v", rel, err)
					}
				}
				return nil
			})
			if b, err := os.ReadFile(filepath.Join(root, "esc", "secret")); err == nil {
				t.Errorf("read %q outside the bundle through esc", b)
			}
		})
	}
	// A link that stays in the bundle through another link is fine.
	ok := tgzOf(t, entry{name: "x/"}, entry{name: "x/f", body: "f"}, entry{name: "x/l", link: ".."}, entry{name: "in", link: "x/l/x/f"})
	root := t.TempDir()
	if err := ansible.Unpack(bytes.NewReader(ok), int64(len(ok)), root); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "in")); err != nil || string(b) != "f" {
		t.Errorf("in: %q, %v", b, err)
	}
}

// A run of a bundle with a link chain fails as EXTENSION_ANSIBLE_ASSET_INVALID
// and runs nothing.
func TestRunRefusesABundleWithALinkChain(t *testing.T) {
	archive := tgzOf(t, entry{name: "site.yml", body: ansibletest.Playbook}, entry{name: "x/"}, entry{name: "x/l", link: ".."}, entry{name: "esc", link: "x/l/../.."})
	srv, _ := bundleServer(t, true, archive)
	fake := &ansibletest.Fake{}
	cache := t.TempDir()
	r, err := ansible.New(ansible.Config{Playbooks: fake, CacheDir: cache, WorkDir: t.TempDir(), HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), request(srv.URL+"/b.tgz", digest(archive), extensions.AnsibleOptions{}))
	if !ansible.AssetInvalid.Is(err) || !strings.Contains(err.Error(), "esc") {
		t.Fatalf("error %v, want EXTENSION_ANSIBLE_ASSET_INVALID naming esc", err)
	}
	if len(fake.Invocations()) != 0 {
		t.Error("the playbook ran")
	}
	if left := files(t, cache); len(left) != 0 {
		t.Errorf("left in the cache: %q", left)
	}
	var f *hostforge.Failure
	if !errors.As(err, &f) || f.Retryable {
		t.Errorf("the refusal is retryable: %+v", f)
	}
}

// A local bundle directory whose link leads out is refused too: the run's
// working directory is a copy, and the copy follows the same rule.
func TestLocalBundleDirectoryLinkOut(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "bundle")
	_ = os.MkdirAll(filepath.Join(dir, "x"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "site.yml"), []byte(ansibletest.Playbook), 0o644)
	_ = os.WriteFile(filepath.Join(base, "secret"), []byte("outside"), 0o600)
	_ = os.Symlink("..", filepath.Join(dir, "x", "l"))
	_ = os.Symlink("x/l/../secret", filepath.Join(dir, "esc"))
	f := newFixture(t, "")
	_, err := f.runner.Run(context.Background(), request(dir, "", extensions.AnsibleOptions{}))
	if !ansible.AssetInvalid.Is(err) || !strings.Contains(err.Error(), "esc") {
		t.Fatalf("error %v, want EXTENSION_ANSIBLE_ASSET_INVALID naming esc", err)
	}
}

// No entry's name leaves the bundle, however it is spelt; nothing is
// written beside it.
func TestUnpackRefusesNamesThatLeave(t *testing.T) {
	for _, name := range []string{"x/../../y", "/abs", "..", "a/../../..", "..\\evil", "./../evil", "x/./../../evil"} {
		for format, archive := range map[string][]byte{"tgz": tgzOf(t, entry{name: name, body: "x"}), "zip": zipOf(t, entry{name: name, body: "x"})} {
			t.Run(format+" "+name, func(t *testing.T) {
				dir := t.TempDir()
				root := filepath.Join(dir, "bundle")
				_ = os.Mkdir(root, 0o755)
				err := ansible.Unpack(bytes.NewReader(archive), int64(len(archive)), root)
				if err == nil || !strings.Contains(err.Error(), "escapes the bundle") {
					t.Fatalf("error %v, want the entry refused", err)
				}
				if around := files(t, dir); len(around) != 1 {
					t.Errorf("written: %q", around)
				}
			})
		}
	}
}
