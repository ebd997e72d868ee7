package artifact_test

import (
	"context"
	"crypto/md5" //nolint:gosec // the legacy checksum is MD5
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/adapters/artifact"
	"github.com/hostforge/hostforge/firmware"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestResolve(t *testing.T) {
	image := []byte("BIOS image 1.13.2")
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/fw/bios.exe":
			_, _ = w.Write(image)
		case "/fw/busy":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	local := filepath.Join(dir, "local.exe")
	if err := os.WriteFile(local, image, 0o600); err != nil {
		t.Fatal(err)
	}
	md := md5.Sum(image) //nolint:gosec
	cases := []struct {
		name    string
		a       firmware.Artifact
		missing bool // FIRMWARE_ARTIFACT_MISSING
		other   bool // another (transient) error
	}{
		{"a local file", firmware.Artifact{Filename: local}, false, false},
		{"a local file with its sha256", firmware.Artifact{Filename: local, SHA256: sum(image)}, false, false},
		{"a local file with its legacy md5", firmware.Artifact{Filename: local, Checksum: hex.EncodeToString(md[:])}, false, false},
		{"a local file that does not match", firmware.Artifact{Filename: local, SHA256: sum([]byte("other"))}, true, false},
		{"a missing local file", firmware.Artifact{Filename: filepath.Join(dir, "absent.exe")}, true, false},
		{"a placeholder digest", firmware.Artifact{URL: srv.URL + "/fw/bios.exe", SHA256: "abc123"}, true, false},
		{"a URL with its sha256", firmware.Artifact{URL: srv.URL + "/fw/bios.exe", SHA256: sum(image)}, false, false},
		{"a URL whose content does not match", firmware.Artifact{URL: srv.URL + "/fw/bios.exe", SHA256: sum([]byte("x"))}, true, false},
		{"a URL the server lacks", firmware.Artifact{URL: srv.URL + "/fw/absent.exe", SHA256: sum(image)}, true, false},
		{"a busy server", firmware.Artifact{URL: srv.URL + "/fw/busy", SHA256: sum(image)}, false, true},
		{"not an http URL", firmware.Artifact{URL: "ftp://fw.example.net/x"}, true, false},
		{"a missing filename falls back to the URL", firmware.Artifact{Filename: filepath.Join(dir, "absent.exe"), URL: srv.URL + "/fw/bios.exe", SHA256: sum(image)}, false, false},
	}
	c := &artifact.Cache{Dir: filepath.Join(dir, "cache"), Client: srv.Client()}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := c.Resolve(context.Background(), tc.a)
			switch {
			case tc.missing:
				if !firmware.ArtifactMissing.Is(err) {
					t.Fatalf("Resolve = %q, %v; want FIRMWARE_ARTIFACT_MISSING", p, err)
				}
			case tc.other:
				if err == nil || firmware.ArtifactMissing.Is(err) {
					t.Fatalf("Resolve = %q, %v; want a transient error", p, err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				b, rerr := os.ReadFile(p)
				if rerr != nil || string(b) != string(image) {
					t.Fatalf("resolved %s: %q, %v", p, b, rerr)
				}
			}
		})
	}
	// A cached download is not fetched again; a corrupted one is.
	before := hits.Load()
	a := firmware.Artifact{URL: srv.URL + "/fw/bios.exe", SHA256: sum(image)}
	p, err := c.Resolve(context.Background(), a)
	if err != nil || hits.Load() != before {
		t.Fatalf("a cached artifact was fetched again (%v)", err)
	}
	if err := os.WriteFile(p, []byte("bit rot"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resolve(context.Background(), a); err != nil || hits.Load() != before+1 {
		t.Fatalf("a corrupted cache entry was not fetched again (%v)", err)
	}
	// No temporary files are left behind.
	entries, _ := filepath.Glob(filepath.Join(dir, "cache", "*", ".download-*"))
	if len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestResolveKeepsURLCredentialsOutOfErrors(t *testing.T) {
	c := &artifact.Cache{Dir: t.TempDir()}
	_, err := c.Resolve(context.Background(), firmware.Artifact{URL: "https://user:s3cret@127.0.0.1:1/fw.bin?token=t0k", SHA256: sum([]byte("fw"))})
	if err == nil || firmware.ArtifactMissing.Is(err) || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "t0k") {
		t.Fatalf("err = %v", err)
	}
}
