package ansible

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
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

	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/internal/bytesize"
)

// Limits of a bundle.
const (
	// DefaultMaxBundle bounds a bundle archive's size, and the total size
	// of the files it unpacks to, unless Config.MaxBundle says otherwise.
	DefaultMaxBundle = 512 << 20
	// MaxBundleFiles bounds the entries of a bundle.
	MaxBundleFiles = 20000
)

// bundleTypes are the asset types a task's asset may have.
var bundleTypes = map[string]bool{"Bundle": true, "AnsibleBundle": true}

// findAsset returns the asset named name (MetalSoft's tasks name assets by
// name; a label is accepted too).
func findAsset(assets []extensions.Asset, name string) (extensions.Asset, bool) {
	for _, a := range assets {
		if a.Name == name {
			return a, true
		}
	}
	for _, a := range assets {
		if a.Label == name {
			return a, true
		}
	}
	return extensions.Asset{}, false
}

// errTooLarge marks a bundle over the cap (AssetTooLarge).
var errTooLarge = errors.New("over the size cap")

// tooLarge is the AssetTooLarge failure of an asset over max bytes.
func tooLarge(a extensions.Asset, what string, max int64) error {
	return AssetTooLarge.New("asset %s: %s is larger than the cap of %s (extensions.asset_max_bytes)", a.Name, what, bytesize.Format(max))
}

// remoteURL reports whether an asset url is fetched over the network, and
// whether over plain http.
func remoteURL(u string) (remote, plain bool) {
	pu, err := url.Parse(u)
	if err != nil {
		return false, false
	}
	switch strings.ToLower(pu.Scheme) {
	case "https":
		return true, false
	case "http":
		return true, true
	}
	return false, false
}

// bundle returns the directory holding the asset's files: a local
// directory as it is, or the archive (local or downloaded) unpacked into
// the cache under its SHA-256. A URL is fetched only when the asset gives
// its sha256, and over plain http only when it opts in (allowHttp), which
// is logged at every use.
func (r *Runner) bundle(ctx context.Context, log *slog.Logger, a extensions.Asset, source string) (string, error) {
	want := strings.ToLower(strings.TrimSpace(a.SHA256))
	if want != "" {
		if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
			return "", AssetInvalid.New("asset %s: sha256 %q is not a SHA-256 in hex", a.Name, a.SHA256)
		}
	}
	u := strings.TrimSpace(a.URL)
	if u == "" {
		return "", AssetInvalid.New("asset %s has no url", a.Name)
	}
	remote, plain := remoteURL(u)
	switch {
	case remote && want == "":
		return "", AssetInvalid.New("asset %s: %s is fetched by URL and the asset gives no sha256: a downloaded bundle must prove what it is (add assets[].sha256, its SHA-256 in hex); nothing was downloaded", a.Name, redactURL(u))
	case plain && !a.AllowHTTP:
		return "", AssetInvalid.New("asset %s: %s is plain http; fetch it over https, or opt in with allowHttp: true on the asset (its sha256 still verifies it); nothing was downloaded", a.Name, redactURL(u))
	case plain:
		log.Warn("the bundle is fetched over plain http (allowHttp): only its sha256 protects it", "asset", a.Name, "url", redactURL(u))
	}
	if !remote {
		p := u
		if strings.HasPrefix(u, "file://") {
			fu, err := url.Parse(u)
			if err != nil || (fu.Host != "" && fu.Host != "localhost") {
				return "", AssetInvalid.New("asset %s: url %q: want file:///path, a path, or an http(s) URL", a.Name, u)
			}
			p = fu.Path
		}
		if !filepath.IsAbs(p) && source != "" {
			p = filepath.Join(filepath.Dir(source), p)
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", AssetUnavailable.New("asset %s: %v", a.Name, err)
		}
		if st.IsDir() {
			if want != "" {
				return "", AssetInvalid.New("asset %s: sha256 applies to an archive, and %s is a directory", a.Name, p)
			}
			return p, nil
		}
	}
	if want != "" {
		if dir := r.cached(want); dir != "" {
			return dir, nil
		}
	}
	if err := os.MkdirAll(r.cfg.CacheDir, 0o700); err != nil {
		return "", RunnerConfig("the bundle cache %s cannot be created: %v", r.cfg.CacheDir, err)
	}
	// Everything in the cache goes through its root: no name and no link
	// leads out of it.
	cache, err := os.OpenRoot(r.cfg.CacheDir)
	if err != nil {
		return "", RunnerConfig("the bundle cache %s cannot be opened: %v", r.cfg.CacheDir, err)
	}
	defer cache.Close()
	name := ".download-" + randomName()
	tmp, err := cache.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", RunnerConfig("the bundle cache %s is not writable: %v", r.cfg.CacheDir, err)
	}
	defer cache.Remove(name)
	defer tmp.Close()
	h := sha256.New()
	var n int64
	if remote {
		n, err = r.download(ctx, a, io.MultiWriter(tmp, h))
	} else {
		n, err = r.copyLocal(a, u, source, io.MultiWriter(tmp, h))
	}
	if err != nil {
		return "", err
	}
	got := hex.EncodeToString(h.Sum(nil))
	if want != "" && got != want {
		return "", AssetInvalid.New("asset %s: %s has SHA-256 %s, the asset's sha256 says %s", a.Name, redactURL(u), got, want)
	}
	if dir := r.cached(got); dir != "" {
		return dir, nil
	}
	return r.unpackToCache(cache, a, tmp, n, got)
}

// cached returns the unpacked bundle of a digest, "" when absent.
func (r *Runner) cached(digest string) string {
	dir := filepath.Join(r.cfg.CacheDir, digest)
	if st, err := os.Lstat(dir); err == nil && st.IsDir() {
		return dir
	}
	return ""
}

// download streams the asset's URL into w, at most the cap: a larger
// announced length is refused before reading, a longer body when it
// passes the cap.
func (r *Runner) download(ctx context.Context, a extensions.Asset, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		return 0, AssetInvalid.New("asset %s: url %s: %v", a.Name, redactURL(a.URL), err)
	}
	resp, err := r.cfg.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, AssetUnavailable.New("asset %s: GET %s: %v", a.Name, redactURL(a.URL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, AssetUnavailable.New("asset %s: GET %s answered %s", a.Name, redactURL(a.URL), resp.Status)
	}
	max := r.cfg.MaxBundle
	if resp.ContentLength > max {
		return 0, tooLarge(a, fmt.Sprintf("%s (%d bytes announced)", redactURL(a.URL), resp.ContentLength), max)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, max+1))
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, AssetUnavailable.New("asset %s: GET %s: reading the body: %v", a.Name, redactURL(a.URL), err)
	}
	if n > max {
		return 0, tooLarge(a, redactURL(a.URL), max)
	}
	return n, nil
}

func (r *Runner) copyLocal(a extensions.Asset, u, source string, w io.Writer) (int64, error) {
	p := u
	if strings.HasPrefix(u, "file://") {
		fu, _ := url.Parse(u)
		p = fu.Path
	}
	if !filepath.IsAbs(p) && source != "" {
		p = filepath.Join(filepath.Dir(source), p)
	}
	f, err := os.Open(p)
	if err != nil {
		return 0, AssetUnavailable.New("asset %s: %v", a.Name, err)
	}
	defer f.Close()
	max := r.cfg.MaxBundle
	n, err := io.Copy(w, io.LimitReader(f, max+1))
	if err != nil {
		return 0, AssetUnavailable.New("asset %s: reading %s: %v", a.Name, p, err)
	}
	if n > max {
		return 0, tooLarge(a, p, max)
	}
	return n, nil
}

// unpackToCache unpacks the archive into the cache under its digest: into
// a temporary directory first, renamed into place, so a crash or a
// concurrent run never sees half a bundle.
func (r *Runner) unpackToCache(cache *os.Root, a extensions.Asset, f *os.File, n int64, digest string) (string, error) {
	tmp := ".unpack-" + randomName()
	if err := cache.Mkdir(tmp, 0o700); err != nil {
		return "", RunnerConfig("the bundle cache %s is not writable: %v", r.cfg.CacheDir, err)
	}
	defer cache.RemoveAll(tmp)
	dst, err := cache.OpenRoot(tmp)
	if err != nil {
		return "", RunnerConfig("the bundle cache %s: %v", r.cfg.CacheDir, err)
	}
	err = unpack(f, n, dst, r.cfg.MaxBundle)
	dst.Close()
	switch {
	case errors.Is(err, errTooLarge):
		return "", tooLarge(a, "what "+redactURL(a.URL)+" unpacks to", r.cfg.MaxBundle)
	case err != nil:
		return "", AssetInvalid.New("asset %s (%s): %v", a.Name, redactURL(a.URL), err)
	}
	if err := cache.Rename(tmp, digest); err != nil {
		if r.cached(digest) != "" {
			return filepath.Join(r.cfg.CacheDir, digest), nil // a concurrent run unpacked it first
		}
		return "", RunnerConfig("the bundle cache %s: %v", r.cfg.CacheDir, err)
	}
	return filepath.Join(r.cfg.CacheDir, digest), nil
}

// Unpack unpacks a zip or tar.gz archive (sniffed from its first bytes)
// of size bytes into dir, which must exist. Every entry is written through
// dir's root (os.Root), so no name leaves it; it refuses entries whose
// names would (absolute paths, ".."), entries written through a link an
// earlier entry made, device files and hard links, and archives over
// DefaultMaxBundle bytes or MaxBundleFiles entries unpacked. Once every
// entry is written, each symbolic link is resolved through the root: a
// link that leads out — alone or through a chain of links, such as x/l ->
// .. and esc -> x/l/../.. — or leads nowhere fails the archive and is
// removed. Modes keep their permission bits, without setuid, setgid or
// sticky bits. On failure dir may hold part of the archive, but no link
// that leads out of it.
func Unpack(r io.ReaderAt, size int64, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	err = unpack(r, size, root, DefaultMaxBundle)
	if errors.Is(err, errTooLarge) {
		return fmt.Errorf("unpacks to more than %d MiB", DefaultMaxBundle>>20)
	}
	return err
}

func unpack(r io.ReaderAt, size int64, root *os.Root, max int64) (err error) {
	head := make([]byte, 4)
	if _, err := r.ReadAt(head, 0); err != nil {
		return errors.New("not a zip or tar.gz archive (too short)")
	}
	u := &unpacker{root: root, max: max}
	defer func() {
		if lerr := u.checkLinks(); err == nil {
			err = lerr
		}
	}()
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return u.zip(r, size)
	case head[0] == 0x1f && head[1] == 0x8b:
		return u.tarGz(io.NewSectionReader(r, 0, size))
	}
	return errors.New("not a zip or tar.gz archive")
}

// unpacker writes an archive's entries below root, by slash-separated
// names relative to it.
type unpacker struct {
	root  *os.Root
	max   int64
	files int
	bytes int64
	links []string
}

// target checks an entry's name and returns it cleaned, relative to the
// root ("." for the root itself).
func (u *unpacker) target(name string) (string, error) {
	u.files++
	if u.files > MaxBundleFiles {
		return "", fmt.Errorf("more than %d entries", MaxBundleFiles)
	}
	clean := path.Clean(strings.TrimPrefix(strings.ReplaceAll(name, "\\", "/"), "./"))
	if name == "" || strings.HasPrefix(name, "/") || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("entry %q escapes the bundle", name)
	}
	return clean, nil
}

// inside checks, lexically, that a symbolic link at rel pointing to target
// stays in the root: a clear refusal of the plain cases. Chains of links
// are caught by checkLinks, which resolves them.
func (u *unpacker) inside(rel, target string) error {
	if path.IsAbs(target) || filepath.IsAbs(target) {
		return fmt.Errorf("link %s points to the absolute path %q", rel, target)
	}
	resolved := path.Join(path.Dir(rel), strings.ReplaceAll(target, "\\", "/"))
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return fmt.Errorf("link %s points outside the bundle (%q)", rel, target)
	}
	return nil
}

// noLinkOnPath refuses to write through a symbolic link an earlier entry
// made (an archive could otherwise place a link to /etc and a file below it).
func (u *unpacker) noLinkOnPath(rel string) error {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	p := ""
	for _, part := range strings.Split(dir, "/") {
		p = path.Join(p, part)
		st, err := u.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("entry %s is below the symbolic link %s", rel, p)
		}
	}
	return nil
}

// mkdirParent makes the directories above rel.
func (u *unpacker) mkdirParent(rel string) error {
	if dir := path.Dir(rel); dir != "." {
		return u.root.MkdirAll(dir, 0o755)
	}
	return nil
}

func (u *unpacker) file(rel string, mode fs.FileMode, src io.Reader) error {
	if err := u.noLinkOnPath(rel); err != nil {
		return err
	}
	if st, err := u.root.Lstat(rel); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("entry %s would replace a %s", rel, st.Mode().Type())
	}
	if err := u.mkdirParent(rel); err != nil {
		return err
	}
	f, err := u.root.OpenFile(rel, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm()|0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(src, u.max-u.bytes+1))
	u.bytes += n
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %v", rel, err)
	}
	if u.bytes > u.max {
		return errTooLarge
	}
	return nil
}

func (u *unpacker) symlink(rel, target string) error {
	if err := u.inside(rel, target); err != nil {
		return err
	}
	if err := u.noLinkOnPath(rel); err != nil {
		return err
	}
	if err := u.mkdirParent(rel); err != nil {
		return err
	}
	if err := u.root.Symlink(target, rel); err != nil {
		return err
	}
	u.links = append(u.links, rel)
	return nil
}

// checkLinks resolves every link the archive made through the root, now
// that all its entries exist: a link that leads out (through any chain of
// links) or to nothing is removed, and fails the archive.
func (u *unpacker) checkLinks() error {
	var first error
	for _, rel := range u.links {
		_, err := u.root.Stat(rel)
		if err == nil {
			continue
		}
		if first == nil {
			target, _ := u.root.Readlink(rel)
			what := "leads out of the bundle"
			if errors.Is(err, fs.ErrNotExist) {
				what = "leads to nothing in the bundle"
			}
			first = fmt.Errorf("link %s (to %q) %s", rel, target, what)
		}
		_ = u.root.Remove(rel)
	}
	return first
}

func (u *unpacker) mkdir(rel string) error {
	if err := u.noLinkOnPath(rel); err != nil {
		return err
	}
	if st, err := u.root.Lstat(rel); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("directory %s is a symbolic link", rel)
	}
	return u.root.MkdirAll(rel, 0o755)
}

func (u *unpacker) zip(r io.ReaderAt, size int64) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return fmt.Errorf("not a readable zip archive: %v", err)
	}
	for _, f := range zr.File {
		dst, err := u.target(f.Name)
		if err != nil {
			return err
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			err = u.mkdir(dst)
		case mode&fs.ModeSymlink != 0:
			var target []byte
			if target, err = readEntry(f, 4096); err == nil {
				err = u.symlink(dst, string(target))
			}
		case mode.IsRegular():
			var rc io.ReadCloser
			if rc, err = f.Open(); err == nil {
				err = u.file(dst, mode, rc)
				rc.Close()
			}
		default:
			err = fmt.Errorf("entry %q is a %s, not a file, directory or link", f.Name, mode.Type())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func readEntry(f *zip.File, limit int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, limit))
}

func (u *unpacker) tarGz(r io.Reader) error {
	gz, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return fmt.Errorf("not a readable gzip stream: %v", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("not a readable tar archive: %v", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader || h.Typeflag == tar.TypeXHeader {
			continue
		}
		dst, err := u.target(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = u.mkdir(dst)
		case tar.TypeReg:
			err = u.file(dst, fs.FileMode(h.Mode).Perm(), tr)
		case tar.TypeSymlink:
			err = u.symlink(dst, h.Linkname)
		default:
			err = fmt.Errorf("entry %q is of tar type %q, not a file, directory or symbolic link", h.Name, string(h.Typeflag))
		}
		if err != nil {
			return err
		}
	}
}

// redactURL drops a URL's user information and query, which may carry
// credentials.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	out := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.RawQuery != "" {
		out += "?…"
	}
	return out
}

// randomName is a short random suffix.
func randomName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
