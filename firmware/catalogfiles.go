package firmware

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge/clock"
)

// CatalogSource gives the catalog of files in force now: a *Catalog is
// one that never changes; CatalogFiles re-reads the site's files when
// they change. The store's runtime overrides are applied on top by the
// caller.
type CatalogSource interface {
	Current() *Catalog
}

// Current returns c itself (an empty catalog for nil): a parsed catalog
// is a source that never changes.
func (c *Catalog) Current() *Catalog {
	if c == nil {
		return NewCatalog()
	}
	return c
}

// currentOf is the catalog of a source that may be unset.
func currentOf(s CatalogSource) *Catalog {
	if s == nil {
		return NewCatalog()
	}
	if c := s.Current(); c != nil {
		return c
	}
	return NewCatalog()
}

// CatalogMetrics counts catalog reloads; a Metrics implementation may
// have it too.
type CatalogMetrics interface {
	// CatalogReload counts one reload of changed catalog files: ok is
	// false for files that were refused (the last good catalog stays).
	CatalogReload(ok bool)
}

// CatalogFile is one file of the catalog in force.
type CatalogFile struct {
	Path     string    `json:"path"`
	Modified time.Time `json:"modified"`
	Size     int64     `json:"size"`
}

// CatalogStatus says which files are in force and how the last reload
// went.
type CatalogStatus struct {
	// Sources are the configured files and firmware directories.
	Sources []string `json:"sources"`
	// Files are the files of the catalog in force (a directory's
	// metadata.toml files, oldest first), as they were when it was read.
	Files    []CatalogFile `json:"files"`
	LoadedAt time.Time     `json:"loaded_at"`
	// Error is why the files as they are now were refused (the catalog in
	// force is the last good one); empty when they are in force.
	Error string `json:"error,omitempty"`
	// Reloads and Refused count the reloads of changed files since the
	// process started, and those refused.
	Reloads int `json:"reloads"`
	Refused int `json:"refused"`
}

// CatalogFiles is the catalog of a site's files (LoadCatalog's sources:
// catalog files and firmware directories), kept current: it checks the
// files' modification times (and sizes, and the set of a firmware
// directory's metadata.toml files) at most every Every and re-reads them
// when they changed — a new, changed or removed metadata.toml takes
// effect without a restart. Files that do not load (or that Check
// refuses) leave the last good catalog in force: the error is logged,
// counted (Metrics) and shown in Status until the files change again.
// Safe for concurrent use.
type CatalogFiles struct {
	paths []string
	// Check, when set, refuses a catalog that loads but cannot work on
	// this site (URL artifacts without a cache, say).
	check   func(*Catalog) error
	clock   clock.Clock
	every   time.Duration
	log     *slog.Logger
	metrics CatalogMetrics

	mu      sync.Mutex
	cat     *Catalog
	stamp   string
	files   []CatalogFile
	loaded  time.Time
	checked time.Time
	bad     string // the stamp of files refused, not read again
	err     error
	reloads int
	refused int
}

// CatalogFilesOptions configure OpenCatalogFiles.
type CatalogFilesOptions struct {
	// Check refuses a catalog that loads but cannot work on the site.
	Check func(*Catalog) error
	// Clock times the checks (default the real clock).
	Clock clock.Clock
	// Every is the least time between two checks of the files (default
	// 30 s); a pass interval longer than it sees every change.
	Every   time.Duration
	Log     *slog.Logger
	Metrics CatalogMetrics
}

// OpenCatalogFiles loads the catalog of paths (see LoadCatalog); it fails
// when the files do not load now.
func OpenCatalogFiles(paths []string, o CatalogFilesOptions) (*CatalogFiles, error) {
	c := &CatalogFiles{paths: append([]string(nil), paths...), check: o.Check, clock: o.Clock, every: o.Every, log: o.Log, metrics: o.Metrics}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	if c.every <= 0 {
		c.every = 30 * time.Second
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	stamp, files, err := catalogStamp(c.paths)
	if err != nil {
		return nil, CatalogInvalid.Wrap(err, "catalog")
	}
	cat, err := c.load()
	if err != nil {
		return nil, err
	}
	c.cat, c.stamp, c.files, c.loaded, c.checked = cat, stamp, files, c.clock.Now(), c.clock.Now()
	return c, nil
}

func (c *CatalogFiles) load() (*Catalog, error) {
	cat, err := LoadCatalog(c.paths...)
	if err != nil {
		return nil, err
	}
	if c.check != nil {
		if err := c.check(cat); err != nil {
			return nil, err
		}
	}
	return cat, nil
}

// Current returns the catalog in force, re-reading the files first when
// they were last checked Every ago or more and have changed since.
func (c *CatalogFiles) Current() *Catalog {
	c.mu.Lock()
	due := c.clock.Now().Sub(c.checked) >= c.every
	c.mu.Unlock()
	if due {
		_, _ = c.Refresh()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cat
}

// Refresh checks the files now and re-reads them when they changed;
// changed says a new catalog is in force, err why changed files were
// refused (the last good catalog stays in force).
func (c *CatalogFiles) Refresh() (changed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checked = c.clock.Now()
	stamp, files, serr := catalogStamp(c.paths)
	if serr == nil && stamp == c.stamp {
		c.err, c.bad = nil, ""
		return false, nil
	}
	if serr == nil && stamp == c.bad {
		return false, c.err
	}
	cat, err := c.load()
	if serr != nil {
		err = CatalogInvalid.Wrap(serr, "catalog")
	}
	c.reloads++
	if err != nil {
		c.refused++
		c.err, c.bad = err, stamp
		c.log.Error("the changed firmware catalog files were refused; the last good catalog stays in force", "err", err)
		if c.metrics != nil {
			c.metrics.CatalogReload(false)
		}
		return false, err
	}
	c.cat, c.stamp, c.files, c.loaded, c.err, c.bad = cat, stamp, files, c.clock.Now(), nil, ""
	c.log.Info("the firmware catalog files changed and were read again", "files", len(files), "models", len(cat.models))
	if c.metrics != nil {
		c.metrics.CatalogReload(true)
	}
	return true, nil
}

// countWith makes m count the reloads from now on (a cycle wires its
// metrics in after the catalog was opened).
func (c *CatalogFiles) countWith(m CatalogMetrics) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.metrics = m
}

// Status says which files are in force and how the last check went.
func (c *CatalogFiles) Status() CatalogStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := CatalogStatus{Sources: append([]string(nil), c.paths...), Files: append([]CatalogFile(nil), c.files...), LoadedAt: c.loaded,
		Reloads: c.reloads, Refused: c.refused}
	if c.err != nil {
		st.Error = c.err.Error()
	}
	return st
}

// catalogStamp describes the sources' state by what a change shows in:
// each file's path, size and modification time; a firmware directory's
// own modification time and each of its metadata.toml files (with their
// subdirectory's time, which orders them). It also returns the files.
func catalogStamp(paths []string) (string, []CatalogFile, error) {
	var b strings.Builder
	var files []CatalogFile
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return "", nil, err
		}
		if !st.IsDir() {
			fmt.Fprintf(&b, "f %s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
			files = append(files, CatalogFile{Path: p, Modified: st.ModTime().UTC(), Size: st.Size()})
			continue
		}
		fmt.Fprintf(&b, "d %s %d\n", p, st.ModTime().UnixNano())
		ents, err := os.ReadDir(p)
		if err != nil {
			return "", nil, err
		}
		var metas []CatalogFile
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			m := filepath.Join(p, e.Name(), "metadata.toml")
			ms, err := os.Stat(m)
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "m %s %d %d %d\n", m, info.ModTime().UnixNano(), ms.Size(), ms.ModTime().UnixNano())
			metas = append(metas, CatalogFile{Path: m, Modified: ms.ModTime().UTC(), Size: ms.Size()})
		}
		sort.SliceStable(metas, func(i, j int) bool {
			if !metas[i].Modified.Equal(metas[j].Modified) {
				return metas[i].Modified.Before(metas[j].Modified)
			}
			return metas[i].Path < metas[j].Path
		})
		files = append(files, metas...)
	}
	return b.String(), files, nil
}
