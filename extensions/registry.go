package extensions

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Registry is a set of loaded extensions, by name. It is immutable: load a
// new one to pick up changes.
type Registry struct {
	exts   []*Extension // sorted by name
	byName map[string]*Extension
}

// FileProblems are the problems of one definition file.
type FileProblems struct {
	File     string
	Problems Problems
}

// NewRegistry builds a registry from extensions; two with one name are an error.
func NewRegistry(exts ...*Extension) (*Registry, error) {
	r := &Registry{byName: map[string]*Extension{}}
	for _, x := range exts {
		if prev, dup := r.byName[x.Name]; dup {
			return nil, DefinitionInvalid.New("extension name %q is defined twice (%s and %s): names identify extensions in deliveries and records", x.Name, prev.Source, x.Source)
		}
		r.byName[x.Name] = x
		r.exts = append(r.exts, x)
	}
	sort.Slice(r.exts, func(i, j int) bool { return r.exts[i].Name < r.exts[j].Name })
	return r, nil
}

// LoadDir loads every *.json file of dir. A file that does not validate is
// left out and reported with its problems (and so are files whose names
// clash), the rest load; err is set only when the directory cannot be read.
func LoadDir(dir string) (*Registry, []FileProblems, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err == nil {
		_, err = os.Stat(dir)
	}
	if err != nil {
		return nil, nil, RegistryUnreadable.Wrap(err, "reading extension definitions from %s", dir)
	}
	sort.Strings(files)
	var (
		exts  []*Extension
		bad   []FileProblems
		names = map[string][]string{}
	)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, RegistryUnreadable.Wrap(err, "reading %s", f)
		}
		x, ps := Parse(b, f)
		if x == nil {
			bad = append(bad, FileProblems{File: f, Problems: ps})
			continue
		}
		if len(ps) > 0 {
			bad = append(bad, FileProblems{File: f, Problems: ps})
		}
		names[x.Name] = append(names[x.Name], f)
		exts = append(exts, x)
	}
	var unique []*Extension
	for _, x := range exts {
		if fs := names[x.Name]; len(fs) > 1 {
			bad = append(bad, FileProblems{File: x.Source, Problems: Problems{{Path: "$.name", Message: fmt.Sprintf("extension name %q is also defined in %s; neither is loaded", x.Name, strings.Join(others(fs, x.Source), ", "))}}})
			continue
		}
		unique = append(unique, x)
	}
	r, err := NewRegistry(unique...)
	return r, bad, err
}

func others(all []string, self string) []string {
	var out []string
	for _, f := range all {
		if f != self {
			out = append(out, f)
		}
	}
	return out
}

// Extensions lists every extension, by name.
func (r *Registry) Extensions() []*Extension { return append([]*Extension(nil), r.exts...) }

// Extension returns the extension named name.
func (r *Registry) Extension(name string) (*Extension, bool) {
	x, ok := r.byName[name]
	return x, ok
}

// Bound is a task bound to a stage in an active extension.
type Bound struct {
	Extension *Extension
	Task      *BoundTask
}

// Tasks returns every task bound to stage in the active extensions, in
// the stable dispatch order: extensions by name, tasks in array order
// (repeated stage entries concatenated).
func (r *Registry) Tasks(stage Stage) []Bound {
	var out []Bound
	for _, x := range r.exts {
		if !x.Active() {
			continue
		}
		for _, t := range x.stages[stage] {
			out = append(out, Bound{Extension: x, Task: t})
		}
	}
	return out
}
