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
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/hostforge/hostforge/extensions"
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

// bundle returns the directory holding the asset's files: a local
// directory as it is, or the archive (local or downloaded) unpacked into
// the cache under its SHA-256.
func (r *Runner) bundle(ctx context.Context, a extensions.Asset, source string) (string, error) {
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
	remote := strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
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
	tmp, err := os.CreateTemp(r.cfg.CacheDir, ".download-*")
	if err != nil {
		return "", RunnerConfig("the bundle cache %s is not writable: %v", r.cfg.CacheDir, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	var n int64
	if remote {
		n, err = r.download(ctx, a, io.MultiWriter(tmp, h))
	} else {
		n, err = copyLocal(a, u, source, io.MultiWriter(tmp, h))
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
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return "", AssetUnavailable.New("asset %s: %v", a.Name, err)
	}
	return r.unpackToCache(a, tmp, n, got)
}

// cached returns the unpacked bundle of a digest, "" when absent.
func (r *Runner) cached(digest string) string {
	dir := filepath.Join(r.cfg.CacheDir, digest)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir
	}
	return ""
}

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
	n, err := io.Copy(w, io.LimitReader(resp.Body, DefaultMaxBundle+1))
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, AssetUnavailable.New("asset %s: GET %s: reading the body: %v", a.Name, redactURL(a.URL), err)
	}
	if n > DefaultMaxBundle {
		return 0, AssetInvalid.New("asset %s: %s is larger than %d MiB", a.Name, redactURL(a.URL), DefaultMaxBundle>>20)
	}
	return n, nil
}

func copyLocal(a extensions.Asset, u, source string, w io.Writer) (int64, error) {
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
	n, err := io.Copy(w, io.LimitReader(f, DefaultMaxBundle+1))
	if err != nil {
		return 0, AssetUnavailable.New("asset %s: reading %s: %v", a.Name, p, err)
	}
	if n > DefaultMaxBundle {
		return 0, AssetInvalid.New("asset %s: %s is larger than %d MiB", a.Name, p, DefaultMaxBundle>>20)
	}
	return n, nil
}

// unpackToCache unpacks the archive into the cache under its digest: into
// a temporary directory first, renamed into place, so a crash or a
// concurrent run never sees half a bundle.
func (r *Runner) unpackToCache(a extensions.Asset, f *os.File, size int64, digest string) (string, error) {
	tmp, err := os.MkdirTemp(r.cfg.CacheDir, ".unpack-*")
	if err != nil {
		return "", RunnerConfig("the bundle cache %s is not writable: %v", r.cfg.CacheDir, err)
	}
	defer os.RemoveAll(tmp)
	if err := Unpack(f, size, tmp); err != nil {
		return "", AssetInvalid.New("asset %s (%s): %v", a.Name, redactURL(a.URL), err)
	}
	dir := filepath.Join(r.cfg.CacheDir, digest)
	if err := os.Rename(tmp, dir); err != nil {
		if r.cached(digest) != "" {
			return dir, nil // a concurrent run unpacked it first
		}
		return "", RunnerConfig("the bundle cache %s: %v", r.cfg.CacheDir, err)
	}
	return dir, nil
}

// Unpack unpacks a zip or tar.gz archive (sniffed from its first bytes)
// of size bytes into dir, which must exist. It refuses entries that would
// land outside dir (absolute paths, "..", symbolic links pointing out),
// device files and hard links, and archives over MaxBundle bytes or
// MaxBundleFiles entries unpacked. Modes keep their permission bits,
// without setuid, setgid or sticky bits.
func Unpack(r io.ReaderAt, size int64, dir string) error {
	head := make([]byte, 4)
	if _, err := r.ReadAt(head, 0); err != nil {
		return errors.New("not a zip or tar.gz archive (too short)")
	}
	u := &unpacker{root: dir}
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return u.zip(r, size)
	case head[0] == 0x1f && head[1] == 0x8b:
		return u.tarGz(io.NewSectionReader(r, 0, size))
	}
	return errors.New("not a zip or tar.gz archive")
}

type unpacker struct {
	root  string
	files int
	bytes int64
}

// target checks an entry's name and returns where it goes.
func (u *unpacker) target(name string) (string, error) {
	u.files++
	if u.files > MaxBundleFiles {
		return "", fmt.Errorf("more than %d entries", MaxBundleFiles)
	}
	clean := path.Clean(strings.TrimPrefix(strings.ReplaceAll(name, "\\", "/"), "./"))
	if name == "" || strings.HasPrefix(name, "/") || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("entry %q escapes the bundle", name)
	}
	if clean == "." {
		return u.root, nil
	}
	return filepath.Join(u.root, filepath.FromSlash(clean)), nil
}

// inside checks that a symbolic link at at pointing to target stays in the root.
func (u *unpacker) inside(at, target string) error {
	if filepath.IsAbs(target) || strings.HasPrefix(target, "/") {
		return fmt.Errorf("link %s points to the absolute path %q", u.rel(at), target)
	}
	resolved := filepath.Join(filepath.Dir(at), filepath.FromSlash(target))
	rel, err := filepath.Rel(u.root, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("link %s points outside the bundle (%q)", u.rel(at), target)
	}
	return nil
}

func (u *unpacker) rel(p string) string {
	r, err := filepath.Rel(u.root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

// noLinkOnPath refuses to write through a symbolic link an earlier entry
// made (an archive could otherwise place a link to /etc and a file below it).
func (u *unpacker) noLinkOnPath(dst string) error {
	rel, err := filepath.Rel(u.root, filepath.Dir(dst))
	if err != nil || rel == "." {
		return nil
	}
	p := u.root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("entry %s is below the symbolic link %s", u.rel(dst), u.rel(p))
		}
	}
	return nil
}

func (u *unpacker) file(dst string, mode fs.FileMode, src io.Reader) error {
	if err := u.noLinkOnPath(dst); err != nil {
		return err
	}
	if st, err := os.Lstat(dst); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("entry %s would replace a %s", u.rel(dst), st.Mode().Type())
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm()|0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(src, DefaultMaxBundle-u.bytes+1))
	u.bytes += n
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %v", u.rel(dst), err)
	}
	if u.bytes > DefaultMaxBundle {
		return fmt.Errorf("unpacks to more than %d MiB", DefaultMaxBundle>>20)
	}
	return nil
}

func (u *unpacker) symlink(dst, target string) error {
	if err := u.inside(dst, target); err != nil {
		return err
	}
	if err := u.noLinkOnPath(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Symlink(target, dst)
}

func (u *unpacker) mkdir(dst string) error {
	if err := u.noLinkOnPath(dst); err != nil {
		return err
	}
	if st, err := os.Lstat(dst); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("directory %s is a symbolic link", u.rel(dst))
	}
	return os.MkdirAll(dst, 0o755)
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
