// Package artifact resolves firmware catalog artifacts to local files for
// the update workflow (firmware.ArtifactResolver): a URL is downloaded
// into a cache directory and verified by its sha256 before it is used; a
// filename is checked to exist and verified when the catalog gives its
// digest. A cached download is verified again before every use.
//
// A download proves what it is. A URL artifact needs its sha256 (the
// legacy MD5 checksum verifies local files only), and an http:// URL the
// source's opt-in (Artifact.AllowHTTP, the catalog's allow_http), logged
// at every use; the catalog refuses the others when it loads, and Resolve
// refuses them again, before fetching anything. A download is capped
// (Cache.MaxBytes) while it streams: past the cap it fails with
// FIRMWARE_ARTIFACT_TOO_LARGE and nothing is left in the cache. The cache
// is used through an os.Root: a download streams to a temporary file at
// its top and is renamed, once verified, to sha256-<digest>/<name>, where
// name is the URL's last segment when it is a plain file name ("artifact"
// otherwise) — no URL and no link planted in the cache leads a write or a
// read out of it.
//
// A file that verified is not hashed again while it is unchanged — the
// same device, inode, size and modification time — so a host that
// resolves an artifact for each upload does not read gigabytes each time.
// The file is opened by path again when it is pushed: the pusher (the
// Redfish adapter) hashes the bytes it sends against the same digest, so
// what reaches a BMC is what was verified, whatever the file did since.
package artifact

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/bytesize"
)

// DefaultMaxBytes caps one download when Cache.MaxBytes is 0: room for a
// GPU tray's bundle of several GiB.
const DefaultMaxBytes int64 = 16 << 30

// Cache is firmware.ArtifactResolver over a cache directory.
type Cache struct {
	// Dir holds downloads (created when missing, mode 0700).
	Dir string
	// Client fetches URLs; nil uses a client that verifies TLS against the
	// system roots. Its own timeout, if any, applies too.
	Client *http.Client
	// Timeout bounds one download (default firmware.ArtifactDeadline).
	Timeout time.Duration
	// MaxBytes caps one download (DefaultMaxBytes when 0; the config's
	// firmware.artifact_max_bytes).
	MaxBytes int64
	Log      *slog.Logger

	// verified remembers the files verified against their digest, by what
	// a change of the file shows in (see fileStamp): a file not changed
	// since is not hashed again at every resolution.
	mu       sync.Mutex
	verified map[string]verifiedStamp
	hashes   atomic.Int64
}

// verifiedStamp is a file as it was when it verified against digest.
type verifiedStamp struct {
	stamp  fileStamp
	digest string
}

// fileStamp is what a change of a file shows in: its device and inode
// (a file renamed over it), its size and its modification time (a file
// rewritten in place).
type fileStamp struct {
	dev, ino uint64
	size     int64
	mod      int64
}

func stampOf(fi fs.FileInfo) fileStamp {
	dev, ino := devIno(fi)
	return fileStamp{dev: dev, ino: ino, size: fi.Size(), mod: fi.ModTime().UnixNano()}
}

// verifyFile verifies the open file at path against d, unless it verified
// before and is unchanged since.
func (c *Cache) verifyFile(path string, f fs.File, d firmware.Digest) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st := stampOf(fi)
	c.mu.Lock()
	v, ok := c.verified[path]
	c.mu.Unlock()
	if ok && v.stamp == st && v.digest == d.Algorithm+":"+d.Hex() {
		return nil
	}
	c.hashes.Add(1)
	if err := verify(f, d); err != nil {
		c.mu.Lock()
		delete(c.verified, path)
		c.mu.Unlock()
		return err
	}
	c.mu.Lock()
	if c.verified == nil {
		c.verified = map[string]verifiedStamp{}
	}
	c.verified[path] = verifiedStamp{stamp: st, digest: d.Algorithm + ":" + d.Hex()}
	c.mu.Unlock()
	return nil
}

var _ firmware.ArtifactResolver = (*Cache)(nil)

func (c *Cache) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

func (c *Cache) max() int64 {
	if c.MaxBytes > 0 {
		return c.MaxBytes
	}
	return DefaultMaxBytes
}

func name(a firmware.Artifact) string {
	if a.Filename != "" {
		return a.Filename
	}
	if u, err := url.Parse(a.URL); err == nil {
		u.User, u.RawQuery, u.ForceQuery = nil, "", false
		return u.String()
	}
	return "(an unparsable URL)"
}

// verify hashes what r holds and compares it with d.
func verify(r io.Reader, d firmware.Digest) error {
	h := d.New()
	if _, err := io.Copy(h, r); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != d.Hex() {
		return fmt.Errorf("its %s is %s, the catalog says %s", d.Algorithm, got, d.Hex())
	}
	return nil
}

// Resolve returns a local file holding the artifact, verified.
func (c *Cache) Resolve(ctx context.Context, a firmware.Artifact) (string, error) {
	d, hasDigest, err := a.Digest()
	if err != nil {
		return "", firmware.ArtifactMissing.New("the artifact %s: %v", name(a), err)
	}
	if a.Filename != "" {
		f, oerr := os.Open(a.Filename)
		switch {
		case oerr == nil:
			defer f.Close()
			if hasDigest {
				if err := c.verifyFile(a.Filename, f, d); err != nil {
					return "", firmware.ArtifactMissing.New("the artifact %s does not match the catalog: %v", a.Filename, err)
				}
			}
			return a.Filename, nil
		case a.URL == "" && errors.Is(oerr, fs.ErrNotExist):
			return "", firmware.ArtifactMissing.New("the artifact %s does not exist on this worker", a.Filename)
		case a.URL == "":
			return "", firmware.ArtifactMissing.Wrap(oerr, "the artifact %s", a.Filename)
		}
	}
	if a.URL == "" {
		return "", firmware.ArtifactMissing.New("the catalog entry's artifact has neither a filename nor a URL")
	}
	u, err := url.Parse(a.URL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", firmware.ArtifactMissing.New("the artifact URL %s is not an http(s) URL", name(a))
	}
	if !hasDigest || d.Algorithm != "sha256" {
		return "", firmware.ArtifactMissing.New("the artifact %s is a download without a sha256 in the catalog (an MD5 checksum does not prove a download): nothing was fetched", name(a))
	}
	if u.Scheme == "http" {
		if !a.AllowHTTP {
			return "", firmware.ArtifactMissing.New("the artifact %s is plain http and its catalog entry does not opt in (allow_http = true): nothing was fetched", name(a))
		}
		c.log().Warn("the artifact is fetched over plain http (allow_http): only its sha256 protects it", "artifact", name(a))
	}
	return c.download(ctx, a, u, d)
}

// fileName is the cached file's name: the URL's last segment when it is a
// plain file name (a BMC may look at its extension), else "artifact".
func fileName(u *url.URL) string {
	base := path.Base(u.Path)
	if base == "" || base == "." || base == ".." || base == "/" || strings.HasPrefix(base, ".") || len(base) > 200 {
		return "artifact"
	}
	for _, r := range base {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r)) {
			return "artifact"
		}
	}
	return base
}

// openRoot opens the cache directory as a root, creating it when missing.
func (c *Cache) openRoot(a firmware.Artifact) (*os.Root, error) {
	if c.Dir == "" {
		return nil, firmware.ArtifactMissing.New("the artifact %s is a URL, and no artifact cache directory is configured", name(a))
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("artifact cache %s: %w", c.Dir, err)
	}
	root, err := os.OpenRoot(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("artifact cache %s: %w", c.Dir, err)
	}
	return root, nil
}

// cached returns the cached, verified download at rel; false when there
// is none that verifies (a corrupted one is removed, to be fetched again).
func (c *Cache) cached(root *os.Root, rel string, d firmware.Digest) bool {
	f, err := root.Open(rel)
	if err != nil {
		return false
	}
	st, serr := f.Stat()
	verr := errors.New("not a regular file")
	if serr == nil && st.Mode().IsRegular() {
		verr = c.verifyFile(filepath.Join(c.Dir, rel), f, d)
	}
	f.Close()
	if verr == nil {
		return true
	}
	_ = root.Remove(rel)
	return false
}

func (c *Cache) download(ctx context.Context, a firmware.Artifact, u *url.URL, d firmware.Digest) (string, error) {
	root, err := c.openRoot(a)
	if err != nil {
		return "", err
	}
	defer root.Close()
	key := "sha256-" + d.Hex()
	rel := key + "/" + fileName(u)
	dst := filepath.Join(c.Dir, key, fileName(u))
	if c.cached(root, rel, d) {
		return dst, nil
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = firmware.ArtifactDeadline
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		return "", firmware.ArtifactMissing.New("the artifact URL %s: %v", name(a), redact(err, a.URL))
	}
	hc := c.Client
	if hc == nil {
		hc = &http.Client{}
	}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		// The server did not answer: transient.
		return "", fmt.Errorf("downloading %s: %v: %w", name(a), redact(err, a.URL), hostforge.ErrUnavailable)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone || resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		return "", firmware.ArtifactMissing.New("downloading %s: the server answered HTTP %d", name(a), resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("downloading %s: the server answered HTTP %d: %w", name(a), resp.StatusCode, hostforge.ErrUnavailable)
	}
	max := c.max()
	if resp.ContentLength > max {
		return "", TooLarge.New("downloading %s: the server announces %d bytes, more than the cap of %s (firmware.artifact_max_bytes); nothing was kept", name(a), resp.ContentLength, bytesize.Format(max))
	}
	// The download streams to a temporary file at the cache's top, and
	// only a verified one is renamed into place.
	tmp := ".download-" + random()
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("artifact cache %s: %w", c.Dir, err)
	}
	defer root.Remove(tmp) // after the rename, nothing is there
	h := d.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, max+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("downloading %s: %v: %w", name(a), redact(err, a.URL), hostforge.ErrUnavailable)
	case n > max:
		return "", TooLarge.New("downloading %s: more than the cap of %s (firmware.artifact_max_bytes); stopped there, nothing was kept", name(a), bytesize.Format(max))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != d.Hex() {
		return "", firmware.ArtifactMissing.New("downloaded %s (%d bytes), but its sha256 is %s and the catalog says %s", name(a), n, got, d.Hex())
	}
	// A link or file planted where the digest's directory goes is removed,
	// not followed.
	if st, err := root.Lstat(key); err == nil && !st.IsDir() {
		_ = root.Remove(key)
	}
	if err := root.Mkdir(key, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("artifact cache %s: %w", c.Dir, err)
	}
	if err := root.Rename(tmp, rel); err != nil {
		return "", fmt.Errorf("artifact cache %s: %w", c.Dir, err)
	}
	c.log().Info("artifact downloaded", "artifact", name(a), "bytes", n, "took", time.Since(start).Round(time.Millisecond))
	return dst, nil
}

func random() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// redact removes the URL (which may carry credentials) from an error's text.
func redact(err error, raw string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the URL
	}
	s := err.Error()
	if raw != "" {
		s = strings.ReplaceAll(s, raw, "<url>")
		s = strings.ReplaceAll(s, strings.Trim(fmt.Sprintf("%q", raw), `"`), "<url>")
	}
	return s
}
