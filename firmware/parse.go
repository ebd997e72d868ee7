package firmware

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// The catalog file format is NICo's. Field names are exact; an unknown
// field is refused. Fields NICo keeps for other purposes are accepted and
// ignored: preingest_upgrade_when_below is kept for display only, and
// mandatory_upgrade_from_priority and the legacy per-entry scout table
// play no part in managed-host updates.

type tomlSite struct {
	HostModels map[string]tomlModel `toml:"host_models"`
}

type tomlModel struct {
	Vendor              *string                  `toml:"vendor"`
	Model               *string                  `toml:"model"`
	Ordering            []string                 `toml:"ordering"`
	ExplicitStartNeeded bool                     `toml:"explicit_start_needed"`
	Components          map[string]tomlComponent `toml:"components"`
	HostProfile         *tomlHostProfile         `toml:"host_profile"`
}

// tomlHostProfile is a model's host profile (NICo's host lifecycle
// profile, kept with the model here).
type tomlHostProfile struct {
	DisableLockdown bool `toml:"disable_lockdown"`
}

type tomlComponent struct {
	CurrentVersionReportedAs  *string     `toml:"current_version_reported_as"`
	PreingestUpgradeWhenBelow *string     `toml:"preingest_upgrade_when_below"`
	KnownFirmware             []tomlEntry `toml:"known_firmware"`
}

type tomlEntry struct {
	Version                      *string    `toml:"version"`
	Default                      bool       `toml:"default"`
	Filename                     string     `toml:"filename"`
	Filenames                    []string   `toml:"filenames"`
	URL                          string     `toml:"url"`
	Checksum                     string     `toml:"checksum"`
	Files                        []tomlFile `toml:"files"`
	InstallOnlySpecified         bool       `toml:"install_only_specified"`
	PowerDrainsNeeded            int64      `toml:"power_drains_needed"`
	PreUpdateResets              bool       `toml:"pre_update_resets"`
	Script                       string     `toml:"script"`
	PreingestionExclusiveConfig  bool       `toml:"preingestion_exclusive_config"`
	MandatoryUpgradeFromPriority string     `toml:"mandatory_upgrade_from_priority"`
	Scout                        *tomlScout `toml:"scout"`
}

type tomlFile struct {
	Filename string `toml:"filename"`
	URL      string `toml:"url"`
	SHA256   string `toml:"sha256"`
	// AllowHTTP is hostforge's addition: the url may be plain http.
	AllowHTTP bool `toml:"allow_http"`
}

// tomlScout is the legacy per-entry scout table: accepted, ignored (the
// on-host route reads its own metadata.toml beside the script).
type tomlScout struct {
	ExecutionTimeoutSeconds        int64  `toml:"execution_timeout_seconds"`
	ArtifactDownloadTimeoutSeconds int64  `toml:"artifact_download_timeout_seconds"`
	Script                         string `toml:"script"`
}

// maxProblems bounds how many problems one refusal lists.
const maxProblems = 10

// problems collects a file's refusals, each naming file, line, table and key.
type problems struct {
	file string
	pos  posIndex
	list []string
}

func (p *problems) add(path, key, format string, args ...any) {
	if len(p.list) >= maxProblems {
		return
	}
	loc := p.file
	if l := p.pos.line(joinPath(path, key)); l > 0 {
		loc = fmt.Sprintf("%s:%d", loc, l)
	}
	where := "[" + path + "]"
	if path == "" {
		where = "top level"
	}
	if key != "" {
		where += " " + key
	}
	p.list = append(p.list, fmt.Sprintf("%s: %s: %s", loc, where, fmt.Sprintf(format, args...)))
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return CatalogInvalid.New("%s", strings.Join(p.list, "; "))
}

// ParseCatalog reads one catalog file in either of NICo's two shapes:
//
//   - a site configuration with [host_models.<key>] tables (the key is
//     free; vendor and model are fields). Other top-level tables of a site
//     configuration are not the catalog's and are ignored;
//   - a metadata.toml: vendor, model, ordering, explicit_start_needed and
//     components at the top level.
//
// It refuses, naming the file, line, table and key: TOML syntax errors,
// unknown fields, a missing vendor, model or version, a regular expression
// that does not compile, an unknown component type (in components or in
// ordering), a component type listed twice in an ordering, one model
// defined twice, two default entries in one component, a files entry with
// neither filename nor url, a negative power_drains_needed, and an
// artifact that cannot prove what it is: a URL without its sha256 (an MD5
// checksum does not do), a plain http URL without the files entry's
// allow_http = true, a sha256 or checksum that is not a digest.
func ParseCatalog(name string, data []byte) (*Catalog, error) {
	var loose map[string]any
	if err := toml.Unmarshal(data, &loose); err != nil {
		return nil, tomlErr(name, err)
	}
	p := &problems{file: name}
	cat := NewCatalog()
	if _, site := loose["host_models"]; site {
		var s tomlSite
		if err := decodeStrict(data, &s, func(k toml.Key) bool { return len(k) > 0 && k[0] == "host_models" }); err != nil {
			return nil, tomlErr(name, err)
		}
		p.pos = indexPositions(data)
		keys := make([]string, 0, len(s.HostModels))
		for k := range s.HostModels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p.model(cat, "host_models."+tableKey(k), s.HostModels[k])
		}
	} else {
		var m tomlModel
		if err := decodeStrict(data, &m, nil); err != nil {
			return nil, tomlErr(name, err)
		}
		p.pos = indexPositions(data)
		p.model(cat, "", m)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	for _, m := range cat.models {
		for _, c := range m.Components {
			c.source = name
		}
	}
	return cat, nil
}

// decodeStrict decodes data into v refusing unknown fields; keep, when set,
// limits the refusal to keys it accepts (the catalog part of a site
// configuration).
func decodeStrict(data []byte, v any, keep func(toml.Key) bool) error {
	err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(v)
	var sm *toml.StrictMissingError
	if err == nil || !errors.As(err, &sm) || keep == nil {
		return err
	}
	var kept []toml.DecodeError
	for _, e := range sm.Errors {
		if keep(e.Key()) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return &toml.StrictMissingError{Errors: kept}
}

// tomlErr renders a decoder error with file, line, table and key.
func tomlErr(name string, err error) error {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) {
		var parts []string
		for i := range sm.Errors {
			if i == maxProblems {
				break
			}
			e := &sm.Errors[i]
			row, _ := e.Position()
			parts = append(parts, fmt.Sprintf("%s:%d: %s: unknown field", name, row, describeKey(e.Key())))
		}
		return CatalogInvalid.New("%s", strings.Join(parts, "; "))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if k := de.Key(); len(k) > 0 {
			return CatalogInvalid.New("%s:%d: %s: %s", name, row, describeKey(k), msg)
		}
		return CatalogInvalid.New("%s:%d: %s", name, row, msg)
	}
	return CatalogInvalid.Wrap(err, "%s: not a TOML catalog", name)
}

// describeKey renders a decoder key as "[table] key".
func describeKey(k toml.Key) string {
	if len(k) == 0 {
		return "top level"
	}
	if len(k) == 1 {
		return "top level " + k[0]
	}
	parts := make([]string, len(k)-1)
	for i, s := range k[:len(k)-1] {
		parts[i] = tableKey(s)
	}
	return "[" + strings.Join(parts, ".") + "] " + k[len(k)-1]
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// tableKey quotes a key that is not a bare TOML key.
func tableKey(s string) string {
	if bareKey.MatchString(s) {
		return s
	}
	return fmt.Sprintf("%q", s)
}

func (p *problems) model(cat *Catalog, path string, tm tomlModel) {
	vendor, model := "", ""
	if tm.Vendor != nil {
		vendor = strings.TrimSpace(*tm.Vendor)
	}
	if tm.Model != nil {
		model = strings.TrimSpace(*tm.Model)
	}
	if vendor == "" {
		p.add(path, "vendor", "missing or empty")
	}
	if model == "" {
		p.add(path, "model", "missing or empty")
	}
	m := &Model{Vendor: vendor, Model: model, ExplicitStartNeeded: tm.ExplicitStartNeeded, Components: map[ComponentType]*Component{}}
	if tm.HostProfile != nil {
		m.HostProfile = &HostProfile{DisableLockdown: tm.HostProfile.DisableLockdown}
	}
	seen := map[ComponentType]bool{}
	for i, s := range tm.Ordering {
		t, ok := ParseComponentType(s)
		switch {
		case !ok:
			p.add(path, fmt.Sprintf("ordering[%d]", i), "unknown component type %q (types: %s)", s, componentNames())
		case seen[t]:
			p.add(path, fmt.Sprintf("ordering[%d]", i), "component type %q listed twice", s)
		default:
			seen[t] = true
			m.Ordering = append(m.Ordering, t)
		}
	}
	names := make([]string, 0, len(tm.Components))
	for k := range tm.Components {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		cpath := joinPath(path, "components."+tableKey(name))
		t, ok := ParseComponentType(name)
		if !ok {
			p.add(joinPath(path, "components"), tableKey(name), "unknown component type %q (types: %s)", name, componentNames())
			continue
		}
		if c := p.component(cpath, t, tm.Components[name]); c != nil {
			m.Components[t] = c
		}
	}
	if vendor == "" || model == "" {
		return
	}
	k := keyOf(vendor, model)
	if prev, dup := cat.models[k]; dup {
		p.add(path, "model", "model %q of vendor %q is defined twice in this file (also as %s / %s)", model, vendor, prev.Vendor, prev.Model)
		return
	}
	cat.models[k] = m
}

func (p *problems) component(path string, t ComponentType, tc tomlComponent) *Component {
	c := &Component{Type: t}
	if tc.CurrentVersionReportedAs != nil {
		expr := *tc.CurrentVersionReportedAs
		re, err := regexp.Compile(expr)
		switch {
		case strings.TrimSpace(expr) == "":
			p.add(path, "current_version_reported_as", "empty regular expression (it would match every inventory entry)")
		case err != nil:
			p.add(path, "current_version_reported_as", "regular expression %q does not compile: %v", expr, err)
		default:
			c.CurrentVersionReportedAs, c.re = expr, re
		}
	}
	if tc.PreingestUpgradeWhenBelow != nil {
		c.PreingestUpgradeWhenBelow = *tc.PreingestUpgradeWhenBelow
	}
	defaults := []string{}
	for i, te := range tc.KnownFirmware {
		epath := fmt.Sprintf("%s.known_firmware[%d]", path, i)
		e, ok := p.entry(epath, te)
		if !ok {
			continue
		}
		if e.Default {
			defaults = append(defaults, fmt.Sprintf("%q (line %d)", e.Version, p.pos.line(epath)))
		}
		c.KnownFirmware = append(c.KnownFirmware, e)
	}
	if len(defaults) > 1 {
		p.add(path, "known_firmware", "%d entries are default (%s); a component has one default", len(defaults), strings.Join(defaults, ", "))
	}
	return c
}

func (p *problems) entry(path string, te tomlEntry) (Entry, bool) {
	ok := true
	e := Entry{
		Default:               te.Default,
		InstallOnlySpecified:  te.InstallOnlySpecified,
		PreUpdateResets:       te.PreUpdateResets,
		Script:                strings.TrimSpace(te.Script),
		PreingestionExclusive: te.PreingestionExclusiveConfig,
	}
	if te.Version == nil || strings.TrimSpace(*te.Version) == "" {
		p.add(path, "version", "missing or empty")
		ok = false
	} else {
		e.Version = *te.Version
	}
	if te.PowerDrainsNeeded < 0 {
		p.add(path, "power_drains_needed", "%d is negative", te.PowerDrainsNeeded)
		ok = false
	}
	e.PowerDrainsNeeded = int(te.PowerDrainsNeeded)
	switch te.MandatoryUpgradeFromPriority {
	case "", "none", "security":
	default:
		p.add(path, "mandatory_upgrade_from_priority", "%q: want none or security", te.MandatoryUpgradeFromPriority)
		ok = false
	}
	switch {
	case len(te.Files) > 0:
		for i, f := range te.Files {
			if strings.TrimSpace(f.Filename) == "" && strings.TrimSpace(f.URL) == "" {
				p.add(fmt.Sprintf("%s.files[%d]", path, i), "filename", "a files entry needs a filename or a url")
				ok = false
				continue
			}
			a := Artifact{Filename: f.Filename, URL: f.URL, SHA256: f.SHA256, AllowHTTP: f.AllowHTTP}
			if key, msg := artifactProblem(a); key != "" {
				p.add(fmt.Sprintf("%s.files[%d]", path, i), key, "%s", msg)
				ok = false
				continue
			}
			e.Artifacts = append(e.Artifacts, a)
		}
	case len(te.Filenames) > 0:
		for _, f := range te.Filenames {
			e.Artifacts = append(e.Artifacts, Artifact{Filename: f})
		}
	case te.Filename != "" || te.URL != "":
		a := Artifact{Filename: te.Filename, URL: te.URL, Checksum: te.Checksum}
		if key, msg := artifactProblem(a); key != "" {
			if key == "sha256" {
				// The legacy form has no sha256 key to add.
				key, msg = "url", fmt.Sprintf(`the artifact %s is downloaded, and a download must prove what it is by its SHA-256; the legacy url/checksum form cannot (its checksum is MD5): declare the artifact as files = [{ url = "...", sha256 = "<64 hexadecimal digits>" }]`, redactArtifactURL(a.URL))
			}
			p.add(path, key, "%s", msg)
			ok = false
			break
		}
		e.Artifacts = []Artifact{a}
	}
	return e, ok
}

// LoadCatalog reads and merges catalog sources in order (see Merge): a file
// is parsed with ParseCatalog; a directory is a firmware directory (see
// LoadFirmwareDirectory). A component left without a matcher by every
// source is refused.
func LoadCatalog(paths ...string) (*Catalog, error) {
	cat := NewCatalog()
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, CatalogInvalid.Wrap(err, "catalog %s", p)
		}
		var next *Catalog
		if st.IsDir() {
			next, err = loadDirectory(p)
		} else {
			next, err = loadFile(p)
		}
		if err != nil {
			return nil, err
		}
		cat = Merge(cat, next)
	}
	if err := cat.validate(); err != nil {
		return nil, err
	}
	return cat, nil
}

// LoadFirmwareDirectory merges the metadata.toml of every subdirectory of
// dir, the oldest modification time first (ties by name), as NICo's
// firmware directory: the newest directory wins where they disagree.
// Subdirectories without a metadata.toml are skipped.
func LoadFirmwareDirectory(dir string) (*Catalog, error) {
	cat, err := loadDirectory(dir)
	if err != nil {
		return nil, err
	}
	if err := cat.validate(); err != nil {
		return nil, err
	}
	return cat, nil
}

func loadDirectory(dir string) (*Catalog, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, CatalogInvalid.Wrap(err, "firmware directory %s", dir)
	}
	type meta struct {
		path string
		mod  int64
	}
	var metas []meta
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name(), "metadata.toml")
		if _, err := os.Stat(p); err != nil {
			continue
		}
		// The subdirectory's modification time orders it, as in NICo.
		info, err := e.Info()
		if err != nil {
			return nil, CatalogInvalid.Wrap(err, "firmware directory %s", dir)
		}
		mod := info.ModTime().UnixNano()
		metas = append(metas, meta{path: p, mod: mod})
	}
	if len(metas) == 0 {
		return nil, CatalogInvalid.New("firmware directory %s: no subdirectory holds a metadata.toml (a catalog file is given as a file, not as its directory)", dir)
	}
	sort.SliceStable(metas, func(i, j int) bool {
		if metas[i].mod != metas[j].mod {
			return metas[i].mod < metas[j].mod
		}
		return metas[i].path < metas[j].path
	})
	cat := NewCatalog()
	for _, m := range metas {
		next, err := loadFile(m.path)
		if err != nil {
			return nil, err
		}
		cat = Merge(cat, next)
	}
	return cat, nil
}

func loadFile(path string) (*Catalog, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, CatalogInvalid.Wrap(err, "catalog %s", path)
	}
	return ParseCatalog(path, b)
}
