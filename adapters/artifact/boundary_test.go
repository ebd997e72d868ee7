package artifact_test

import (
	"bytes"
	"context"
	"crypto/md5" //nolint:gosec // the legacy checksum is MD5
	"encoding/hex"
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
	"github.com/hostforge/hostforge/adapters/artifact"
	"github.com/hostforge/hostforge/firmware"
)

// imageServer serves image at every path and counts requests.
func imageServer(t *testing.T, tls bool, image []byte) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write(image)
	}))
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &hits
}

// listing is everything below dir, by path relative to it.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// A URL artifact without a sha256, with the legacy MD5 only, or over plain
// http without the source's opt-in is refused before anything is fetched:
// the catalog refuses them when it loads, and the resolver holds to the
// same rule for artifacts that reach it another way.
func TestResolveRefusesUndeclaredDownloads(t *testing.T) {
	image := []byte("BIOS image 1.13.2")
	md := md5.Sum(image) //nolint:gosec
	tlsSrv, tlsHits := imageServer(t, true, image)
	plainSrv, plainHits := imageServer(t, false, image)
	cases := []struct {
		name string
		a    firmware.Artifact
		want string
	}{
		{"no digest", firmware.Artifact{URL: tlsSrv.URL + "/fw/bios.exe"}, "sha256"},
		{"MD5 only", firmware.Artifact{URL: tlsSrv.URL + "/fw/bios.exe", Checksum: hex.EncodeToString(md[:])}, "sha256"},
		{"plain http", firmware.Artifact{URL: plainSrv.URL + "/fw/bios.exe", SHA256: sum(image)}, "allow_http"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := &artifact.Cache{Dir: t.TempDir(), Client: tlsSrv.Client()}
			p, err := cache.Resolve(context.Background(), c.a)
			if !firmware.ArtifactMissing.Is(err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Resolve = %q, %v; want FIRMWARE_ARTIFACT_MISSING naming %s", p, err, c.want)
			}
		})
	}
	if tlsHits.Load()+plainHits.Load() != 0 {
		t.Errorf("%d downloads of refused artifacts", tlsHits.Load()+plainHits.Load())
	}
}

// A source that opts in to plain http is fetched, verified by its sha256,
// and logged at every use — from the cache too.
func TestResolvePlainHTTPOptedIn(t *testing.T) {
	image := []byte("BIOS image 1.13.2")
	srv, hits := imageServer(t, false, image)
	logs := &bytes.Buffer{}
	cache := &artifact.Cache{Dir: t.TempDir(), Log: slog.New(slog.NewTextHandler(logs, nil))}
	a := firmware.Artifact{URL: srv.URL + "/fw/bios.exe?sig=sekrit", SHA256: sum(image), AllowHTTP: true}
	for i := range 2 {
		p, err := cache.Resolve(context.Background(), a)
		if err != nil {
			t.Fatalf("use %d: %v", i+1, err)
		}
		if b, _ := os.ReadFile(p); !bytes.Equal(b, image) {
			t.Fatalf("use %d: resolved %q", i+1, b)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("%d downloads, want 1", hits.Load())
	}
	if n := strings.Count(logs.String(), "plain http"); n != 2 {
		t.Errorf("%d log lines about plain http for 2 uses:\n%s", n, logs)
	}
	if strings.Contains(logs.String(), "sekrit") {
		t.Errorf("the log carries the URL's query:\n%s", logs)
	}
}

// A download past the cap fails as FIRMWARE_ARTIFACT_TOO_LARGE while it
// streams, announced or not, and leaves nothing in the cache.
func TestResolveSizeCap(t *testing.T) {
	image := bytes.Repeat([]byte("firmware"), 8<<10) // 64 KiB
	for _, announce := range []bool{true, false} {
		t.Run("content-length "+strconv.FormatBool(announce), func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if announce {
					w.Header().Set("Content-Length", strconv.Itoa(len(image)))
				}
				for i := 0; i < len(image); i += 4096 {
					if _, err := w.Write(image[i : i+4096]); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			}))
			defer srv.Close()
			dir := t.TempDir()
			cache := &artifact.Cache{Dir: dir, Client: srv.Client(), MaxBytes: 16 << 10}
			p, err := cache.Resolve(context.Background(), firmware.Artifact{URL: srv.URL + "/fw/gpu.fwpkg", SHA256: sum(image)})
			if !artifact.TooLarge.Is(err) || !strings.Contains(err.Error(), "16 KiB") {
				t.Fatalf("Resolve = %q, %v; want FIRMWARE_ARTIFACT_TOO_LARGE naming the cap", p, err)
			}
			if f, ok := hostforge.AsFailure(err); !ok || f.Retryable {
				t.Errorf("the failure is retryable or unclassified: %v", err)
			}
			if left := listing(t, dir); len(left) != 0 {
				t.Errorf("left in the cache: %q", left)
			}
		})
	}
	// Under the cap, the same image resolves.
	srv, _ := imageServer(t, true, image)
	cache := &artifact.Cache{Dir: t.TempDir(), Client: srv.Client(), MaxBytes: 64 << 10}
	if _, err := cache.Resolve(context.Background(), firmware.Artifact{URL: srv.URL + "/fw/gpu.fwpkg", SHA256: sum(image)}); err != nil {
		t.Fatalf("an image of exactly the cap: %v", err)
	}
}

// A URL's last segment named the cached file: "/.." put the download at
// the cache directory itself (and beside it while it streamed). Every
// name now lands below the cache, in the digest's directory.
func TestResolveNamesStayInTheCache(t *testing.T) {
	image := []byte("BIOS image 1.13.2")
	srv, _ := imageServer(t, true, image)
	for _, p := range []string{"/fw/..", "/..", "/fw/%2e%2e", "/fw/.", "/", "/fw/..%2f..%2fescape", "/fw/.hidden", "/fw/a%00b"} {
		t.Run(p, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "cache")
			cache := &artifact.Cache{Dir: dir, Client: srv.Client()}
			got, err := cache.Resolve(context.Background(), firmware.Artifact{URL: srv.URL + p, SHA256: sum(image)})
			if err != nil {
				t.Fatal(err)
			}
			rel, rerr := filepath.Rel(dir, got)
			if rerr != nil || rel == "." || strings.HasPrefix(rel, "..") || !strings.Contains(rel, string(filepath.Separator)) {
				t.Fatalf("resolved to %s, not a file below the cache %s", got, dir)
			}
			if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, image) {
				t.Fatalf("resolved %s: %q, %v", got, b, err)
			}
			if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
				t.Fatalf("the cache directory is no longer a directory: %v, %v", st, err)
			}
			if around := listing(t, base); len(around) != 3 { // cache, cache/<digest>, cache/<digest>/<name>
				t.Errorf("the download left %q", around)
			}
		})
	}
}

// A link planted in the cache where the digest's directory goes does not
// take the download out of the cache: the cache is used through its root.
func TestResolveDoesNotFollowLinksOutOfTheCache(t *testing.T) {
	image := []byte("BIOS image 1.13.2")
	srv, _ := imageServer(t, true, image)
	base := t.TempDir()
	dir, outside := filepath.Join(base, "cache"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "sha256-"+sum(image))); err != nil {
		t.Fatal(err)
	}
	cache := &artifact.Cache{Dir: dir, Client: srv.Client()}
	got, err := cache.Resolve(context.Background(), firmware.Artifact{URL: srv.URL + "/fw/bios.exe", SHA256: sum(image)})
	if err != nil {
		t.Fatal(err)
	}
	if left := listing(t, outside); len(left) != 0 {
		t.Errorf("written outside the cache: %q", left)
	}
	if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, image) || !strings.HasPrefix(got, dir+string(filepath.Separator)) {
		t.Errorf("resolved %s: %q, %v", got, b, err)
	}
}
