package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge"
)

// ErrExposed is wrapped by the error for a vault or token file that group
// or others can read.
var ErrExposed = errors.New("readable by group or others")

// File is a vault kept in a YAML file. It is safe for concurrent use, and
// several File values (in one process or many) may share one file.
type File struct {
	path string
	// Secrets, when set, learns the secret fields (hostforge.SecretField)
	// of every item the vault hands out or stores, so text a remote system
	// echoes is scrubbed of them from the moment they are read or
	// generated. Set it before the vault is shared.
	Secrets *hostforge.Secrets

	mu    sync.Mutex
	items map[string]map[string]string
	// seen identifies the version of the file items were read from.
	seen stamp
}

// stamp identifies one version of the file: a rename replaces the inode,
// an in-place edit changes the size or the modification time.
type stamp struct {
	info fs.FileInfo
}

func (s stamp) same(st fs.FileInfo) bool {
	return s.info != nil && os.SameFile(s.info, st) && s.info.Size() == st.Size() && s.info.ModTime().Equal(st.ModTime())
}

// tempPrefix starts the name of a write's temporary file, in the vault's
// directory: ".<base>.tmp-".
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// lockPath is the lock file beside the vault.
func lockPath(path string) string { return path + ".lock" }

// Open reads the vault file at path. It refuses a file group or others can
// read (ErrExposed) and one that is not a mapping of items to fields of
// strings; the error never quotes the file's content.
func Open(path string) (*File, error) {
	v := &File{path: path}
	if err := v.reload(true); err != nil {
		return nil, err
	}
	return v, nil
}

// Create writes a new vault file holding items, mode 0600, refusing to
// replace an existing file. It is how a lab or a test starts a vault.
func Create(path string, items map[string]map[string]string) error {
	if items == nil {
		items = map[string]map[string]string{}
	}
	b, err := encode(items)
	if err != nil {
		return fmt.Errorf("vault file %s: encoding: %v: %w", path, err, hostforge.ErrInvalid)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("vault file: %w", err)
	}
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("vault file %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// Path is the vault file's path.
func (v *File) Path() string { return v.path }

// Item returns a copy of an item's fields; hostforge.ErrNotFound (wrapped)
// when the vault has no such item. The file is re-read when it changed
// since the last read.
func (v *File) Item(ctx context.Context, name string) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.reload(false); err != nil {
		return nil, err
	}
	it, ok := v.items[name]
	if !ok {
		return nil, fmt.Errorf("vault file %s: item %q: %w", v.path, name, hostforge.ErrNotFound)
	}
	v.Secrets.AddFields(it)
	return copyFields(it), nil
}

// Names lists the items, sorted.
func (v *File) Names(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.reload(false); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(v.items))
	for k := range v.items {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

// PutItem replaces one item's fields, keeping every other item as the file
// holds it now (see the package documentation for the locking and the
// atomic replace). It waits for the lock under ctx.
func (v *File) PutItem(ctx context.Context, name string, fields map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("vault file %s: an item needs a name: %w", v.path, hostforge.ErrInvalid)
	}
	v.Secrets.AddFields(fields)
	v.mu.Lock()
	defer v.mu.Unlock()
	unlock, err := v.writeLock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	v.removeStaleTemps()
	next := make(map[string]map[string]string, len(v.items)+1)
	for k, it := range v.items {
		next[k] = it
	}
	next[name] = copyFields(fields)
	return v.commit(next, fmt.Sprintf("item %q", name), fmt.Sprintf("writing item %q", name))
}

// writeLock takes the vault file's write lock, waiting under ctx, and
// reloads the file: under the lock, what it holds now is the latest
// write. The caller holds v.mu; unlock releases the file's lock.
func (v *File) writeLock(ctx context.Context) (unlock func(), err error) {
	unlock, err = lockFile(ctx, lockPath(v.path))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("vault file %s: waiting for the write lock: %w", v.path, ctx.Err())
		}
		return nil, fmt.Errorf("vault file %s: taking the write lock: %v: %w", v.path, err, hostforge.ErrUnavailable)
	}
	if err := v.reload(true); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// commit replaces the file with next, under writeLock; encoding and
// writing name the change in errors ("item x", "writing item x").
func (v *File) commit(next map[string]map[string]string, encoding, writing string) error {
	b, err := encode(next)
	if err != nil {
		return fmt.Errorf("vault file %s: encoding %s: %v: %w", v.path, encoding, err, hostforge.ErrInvalid)
	}
	if err := v.replace(b); err != nil {
		return fmt.Errorf("vault file %s: %s: %v: %w", v.path, writing, err, hostforge.ErrUnavailable)
	}
	v.items = next
	// The next read stats the new file; forcing a reload keeps this simple
	// and costs one read.
	v.seen = stamp{}
	return nil
}

// testHookBeforeRename, when set, runs after the temporary file is written
// and synced and before it is renamed over the vault (crash tests).
var testHookBeforeRename func()

// replace writes b to a temporary file beside the vault, syncs it, renames
// it over the vault and syncs the directory.
func (v *File) replace(b []byte) error {
	dir := filepath.Dir(v.path)
	tmp, err := os.CreateTemp(dir, tempPrefix(v.path)+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	renamed := false
	defer func() {
		if !renamed {
			_ = os.Remove(name)
		}
	}()
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(b)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename()
	}
	if err := os.Rename(name, v.path); err != nil {
		return err
	}
	renamed = true
	return syncDir(dir)
}

// removeStaleTemps deletes temporary files a crashed writer left. The
// caller holds the write lock, so no write is in flight.
func (v *File) removeStaleTemps() {
	dir := filepath.Dir(v.path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(v.path)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// reload re-reads the file when it changed since the last read (always
// when force). The caller holds v.mu.
func (v *File) reload(force bool) error {
	f, err := os.Open(v.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("vault file %s: does not exist: %w", v.path, hostforge.ErrNotFound)
		}
		return fmt.Errorf("vault file: %v: %w", err, hostforge.ErrUnavailable)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("vault file: %v: %w", err, hostforge.ErrUnavailable)
	}
	if err := CheckPrivate(v.path, st); err != nil {
		return err
	}
	if !force && v.seen.same(st) {
		return nil
	}
	b, err := readAll(f)
	if err != nil {
		return fmt.Errorf("vault file %s: %v: %w", v.path, err, hostforge.ErrUnavailable)
	}
	items := map[string]map[string]string{}
	if err := yaml.Unmarshal(b, &items); err != nil {
		// yaml's message may quote file content: say only what is wrong.
		return fmt.Errorf("vault file %s: not a mapping of items to fields of strings: %w", v.path, hostforge.ErrInvalid)
	}
	if items == nil {
		items = map[string]map[string]string{}
	}
	v.items, v.seen = items, stamp{info: st}
	return nil
}

// maxFile bounds what is read of a vault or token file.
const maxFile = 64 << 20

func readAll(f *os.File) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("larger than %d MiB", maxFile>>20)
	}
	return b, nil
}

// CheckPrivate refuses a secret file (a vault, a token) that group or
// others can read: it wraps ErrExposed and names the file and its mode.
func CheckPrivate(path string, st fs.FileInfo) error {
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is %w (mode %s); chmod 600 it", path, ErrExposed, perm)
	}
	return nil
}

// ReadSecretFile reads a one-line secret (an API token) from a file that
// only its owner can read, trimmed of surrounding white space. An empty
// file is an error; the error never quotes the content.
func ReadSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if err := CheckPrivate(path, st); err != nil {
		return "", err
	}
	b, err := readAll(f)
	if err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("the file %s is empty", path)
	}
	return s, nil
}

// encode renders items as YAML with every name and value double-quoted,
// items and fields sorted. yaml.v3's plain and block styles do not
// round-trip every string (a value starting with a newline reads back
// without it, found by FuzzPutItemKeepsEveryOtherItem); double-quoted
// scalars escape everything. The result is decoded again and compared, so
// a value that still cannot be stored faithfully is refused rather than
// written changed.
func encode(items map[string]map[string]string) ([]byte, error) {
	quoted := func(s string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: s}
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, name := range slices.Sorted(maps.Keys(items)) {
		fields := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range slices.Sorted(maps.Keys(items[name])) {
			fields.Content = append(fields.Content, quoted(k), quoted(items[name][k]))
		}
		root.Content = append(root.Content, quoted(name), fields)
	}
	b, err := yaml.Marshal(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}})
	if err != nil {
		return nil, errors.New("the YAML encoder refused the items")
	}
	back := map[string]map[string]string{}
	if err := yaml.Unmarshal(b, &back); err != nil || !sameItems(back, items) {
		return nil, errors.New("a name or value does not read back as written")
	}
	return b, nil
}

func sameItems(a, b map[string]map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, fa := range a {
		fb, ok := b[k]
		if !ok || !maps.Equal(fa, fb) {
			return false
		}
	}
	return true
}

func copyFields(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// lockRetry is the pause between attempts to take a held lock.
const lockRetry = 5 * time.Millisecond
