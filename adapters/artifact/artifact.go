// Package artifact resolves firmware catalog artifacts to local files for
// the update workflow (firmware.ArtifactResolver): a URL is downloaded
// into a cache directory and verified by its sha256 before it is used; a
// filename is checked to exist and verified when the catalog gives its
// digest. A cached download is verified again before every use.
package artifact

import (
	"context"
	"crypto/md5" //nolint:gosec // the catalog's legacy checksum field is MD5; sha256 is preferred when given
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/firmware"
)

// Cache is firmware.ArtifactResolver over a cache directory.
type Cache struct {
	// Dir holds downloads (created when missing, mode 0700).
	Dir string
	// Client fetches URLs; nil uses a client that verifies TLS against the
	// system roots. Its own timeout, if any, applies too.
	Client *http.Client
	// Timeout bounds one download (default firmware.ArtifactDeadline).
	Timeout time.Duration
	Log     *slog.Logger
}

var _ firmware.ArtifactResolver = (*Cache)(nil)

func (c *Cache) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// digest is what an artifact is verified against.
type digest struct {
	kind string // "sha256", "md5", "" (none)
	hex  string
}

func digestOf(a firmware.Artifact) (digest, error) {
	if s := strings.ToLower(strings.TrimSpace(a.SHA256)); s != "" {
		if b, err := hex.DecodeString(s); err != nil || len(b) != sha256.Size {
			return digest{}, firmware.ArtifactMissing.New("the artifact %s has sha256 %q, which is not a SHA-256 digest (64 hex digits)", name(a), a.SHA256)
		}
		return digest{"sha256", s}, nil
	}
	if s := strings.ToLower(strings.TrimSpace(a.Checksum)); s != "" {
		if b, err := hex.DecodeString(s); err != nil || len(b) != md5.Size {
			return digest{}, firmware.ArtifactMissing.New("the artifact %s has checksum %q, which is not an MD5 digest (32 hex digits)", name(a), a.Checksum)
		}
		return digest{"md5", s}, nil
	}
	return digest{}, nil
}

func (d digest) hasher() hash.Hash {
	switch d.kind {
	case "sha256":
		return sha256.New()
	case "md5":
		return md5.New() //nolint:gosec // see the import
	}
	return nil
}

func name(a firmware.Artifact) string {
	if a.Filename != "" {
		return a.Filename
	}
	if u, err := url.Parse(a.URL); err == nil {
		u.User, u.RawQuery = nil, ""
		return u.String()
	}
	return "(an unparsable URL)"
}

// verify hashes the file and compares it with d.
func verify(p string, d digest) error {
	h := d.hasher()
	if h == nil {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != d.hex {
		return fmt.Errorf("its %s is %s, the catalog says %s", d.kind, got, d.hex)
	}
	return nil
}

// Resolve returns a local file holding the artifact, verified.
func (c *Cache) Resolve(ctx context.Context, a firmware.Artifact) (string, error) {
	d, err := digestOf(a)
	if err != nil {
		return "", err
	}
	if a.Filename != "" {
		_, serr := os.Stat(a.Filename)
		switch {
		case serr == nil:
			if err := verify(a.Filename, d); err != nil {
				return "", firmware.ArtifactMissing.New("the artifact %s does not match the catalog: %v", a.Filename, err)
			}
			return a.Filename, nil
		case a.URL == "" && errors.Is(serr, fs.ErrNotExist):
			return "", firmware.ArtifactMissing.New("the artifact %s does not exist on this worker", a.Filename)
		case a.URL == "":
			return "", firmware.ArtifactMissing.Wrap(serr, "the artifact %s", a.Filename)
		}
	}
	if a.URL == "" {
		return "", firmware.ArtifactMissing.New("the catalog entry's artifact has neither a filename nor a URL")
	}
	return c.download(ctx, a, d)
}

// cachePath is where a URL's download is kept: by its digest when the
// catalog gives one (two URLs of one image share it), else by the URL's.
func (c *Cache) cachePath(a firmware.Artifact, d digest) (string, error) {
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", firmware.ArtifactMissing.New("the artifact URL %s is not an http(s) URL", name(a))
	}
	key := d.kind + "-" + d.hex
	if d.kind == "" {
		sum := sha256.Sum256([]byte(a.URL))
		key = "url-" + hex.EncodeToString(sum[:])
	}
	base := path.Base(u.Path)
	if base == "." || base == "/" || base == "" {
		base = "artifact"
	}
	return filepath.Join(c.Dir, key, base), nil
}

func (c *Cache) download(ctx context.Context, a firmware.Artifact, d digest) (string, error) {
	if c.Dir == "" {
		return "", firmware.ArtifactMissing.New("the artifact %s is a URL, and no artifact cache directory is configured", name(a))
	}
	dst, err := c.cachePath(a, d)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dst); err == nil {
		if err := verify(dst, d); err == nil {
			return dst, nil
		}
		_ = os.Remove(dst) // a corrupted cache entry is fetched again
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", fmt.Errorf("artifact cache %s: %w", c.Dir, err)
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
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".download-*")
	if err != nil {
		return "", fmt.Errorf("artifact cache %s: %w", c.Dir, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	h := d.hasher()
	var w io.Writer = tmp
	if h != nil {
		w = io.MultiWriter(tmp, h)
	}
	n, err := io.Copy(w, resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("downloading %s: %v: %w", name(a), redact(err, a.URL), hostforge.ErrUnavailable)
	}
	if h != nil {
		if got := hex.EncodeToString(h.Sum(nil)); got != d.hex {
			return "", firmware.ArtifactMissing.New("downloaded %s (%d bytes), but its %s is %s and the catalog says %s", name(a), n, d.kind, got, d.hex)
		}
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", fmt.Errorf("artifact cache %s: %w", c.Dir, err)
	}
	c.log().Info("artifact downloaded", "artifact", name(a), "bytes", n, "took", time.Since(start).Round(time.Millisecond), "verified", d.kind != "")
	if d.kind == "" {
		c.log().Warn("the artifact has no sha256 in the catalog: it was not verified", "artifact", name(a))
	}
	return dst, nil
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
