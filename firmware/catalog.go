package firmware

import (
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/hostforge/hostforge/bmc"
)

// Catalog is the effective host firmware catalog: per vendor family and
// model, which inventory entries report each component and which versions
// are known, one of them the default. A Catalog is built by parsing and
// merging files (ParseCatalog, LoadCatalog, Merge) and runtime overrides
// (WithOverrides); it is not changed once built, so it is safe to share.
type Catalog struct {
	models map[modelKey]*Model
}

type modelKey struct{ family, model string }

func keyOf(vendor, model string) modelKey {
	return modelKey{family: Family(vendor), model: strings.ToLower(strings.TrimSpace(model))}
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{models: map[modelKey]*Model{}} }

// Family is the vendor family a vendor string belongs to, so that the
// catalog's "Dell" and a system's "Dell Inc." meet. Families known to the
// BMC vendor detection (package bmc) are its vendors; any other vendor is
// its lower-cased letters and digits ("NVIDIA" and "Nvidia" are "nvidia",
// "LenovoAMI" is "lenovoami").
func Family(vendor string) string {
	if f, ok := families.Load(vendor); ok {
		return f.(string)
	}
	f := family(vendor)
	families.Store(vendor, f)
	return f
}

// families caches Family: a fleet has a handful of vendor spellings, and
// the update manager asks for each host on every pass.
var families sync.Map

func family(vendor string) string {
	if strings.TrimSpace(vendor) == "" {
		return ""
	}
	if v, err := bmc.Detect(bmc.Identity{Vendor: vendor}); err == nil {
		return string(v)
	}
	return alnumLower(vendor)
}

// familyNames is how a known family is written when no catalog entry names it.
var familyNames = map[string]string{
	string(bmc.VendorDell): "Dell", string(bmc.VendorLenovo): "Lenovo",
	string(bmc.VendorAMI): "AMI", string(bmc.VendorSupermicro): "Supermicro",
}

// Model is one host model's catalog entry.
type Model struct {
	Vendor string `json:"vendor"`
	Model  string `json:"model"`
	// Ordering is the order in which components are updated, as
	// configured; empty means DefaultOrdering. See EffectiveOrdering.
	Ordering []ComponentType `json:"ordering,omitempty"`
	// ExplicitStartNeeded: the update manager starts an update of this
	// model only inside the machine's firmware update window.
	ExplicitStartNeeded bool                         `json:"explicit_start_needed"`
	Components          map[ComponentType]*Component `json:"components"`
	// HostProfile is the model's host profile (host_profile); nil when no
	// catalog file sets one.
	HostProfile *HostProfile `json:"host_profile,omitempty"`
}

// HostProfile is how the model's hosts are kept in service.
type HostProfile struct {
	// DisableLockdown keeps platform lockdown off: an update that turned
	// it off does not turn it on again.
	DisableLockdown bool `json:"disable_lockdown"`
}

// EffectiveOrdering is the order in which the workflow walks components:
// the configured ordering (DefaultOrdering when none), then every other
// configured component in canonical order. NICo walks the ordering only, so
// drift of a component the ordering leaves out is never installed and the
// host is selected again on every pass; appending it ends that loop.
func (m *Model) EffectiveOrdering() []ComponentType {
	ord := m.Ordering
	if len(ord) == 0 {
		ord = DefaultOrdering
	}
	out := append([]ComponentType(nil), ord...)
	seen := map[ComponentType]bool{}
	for _, c := range ord {
		seen[c] = true
	}
	for _, c := range ComponentTypes {
		if _, ok := m.Components[c]; ok && !seen[c] {
			out = append(out, c)
		}
	}
	return out
}

// Desired is the desired versions map: per component, the version of its
// first default entry. Components without a default are left out.
func (m *Model) Desired() map[ComponentType]string {
	out := map[ComponentType]string{}
	for t, c := range m.Components {
		if e, ok := c.Default(); ok {
			out[t] = e.Version
		}
	}
	return out
}

func (m *Model) clone() *Model {
	n := *m
	n.Ordering = append([]ComponentType(nil), m.Ordering...)
	if m.HostProfile != nil {
		p := *m.HostProfile
		n.HostProfile = &p
	}
	n.Components = make(map[ComponentType]*Component, len(m.Components))
	for t, c := range m.Components {
		cc := *c
		cc.KnownFirmware = append([]Entry(nil), c.KnownFirmware...)
		n.Components[t] = &cc
	}
	return &n
}

// Component is one component of a model.
type Component struct {
	Type ComponentType `json:"type"`
	// CurrentVersionReportedAs is a regular expression searched (not
	// anchored unless it anchors itself) in each inventory entry's Id.
	CurrentVersionReportedAs string `json:"current_version_reported_as"`
	// PreingestUpgradeWhenBelow is the pre-ingestion threshold; it plays no
	// part in managed-host drift.
	PreingestUpgradeWhenBelow string  `json:"preingest_upgrade_when_below,omitempty"`
	KnownFirmware             []Entry `json:"known_firmware"`

	re     *regexp.Regexp
	source string // the file that first defined the component
}

// Matches reports whether the inventory entry Id answers for the component.
func (c *Component) Matches(id string) bool { return c.re != nil && c.re.MatchString(id) }

// Default returns the component's default entry: the first entry marked
// default that is not reserved for pre-ingestion.
func (c *Component) Default() (Entry, bool) {
	for _, e := range c.KnownFirmware {
		if e.Default && !e.PreingestionExclusive {
			return e, true
		}
	}
	return Entry{}, false
}

// Entry is one known firmware version of a component.
type Entry struct {
	Version string `json:"version"`
	Default bool   `json:"default,omitempty"`
	// Artifacts are the files to install, in order: the entry's files,
	// else its filenames, else its single filename or url.
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// InstallOnlySpecified sends the update to the component only
	// (Redfish UpdateParameters Targets) instead of letting the BMC choose.
	InstallOnlySpecified bool `json:"install_only_specified,omitempty"`
	// PowerDrainsNeeded is how many AC power drains activate the firmware.
	PowerDrainsNeeded int `json:"power_drains_needed,omitempty"`
	// PreUpdateResets asks for a power-off, BMC reset and power-on before
	// the first upload (not on repeats).
	PreUpdateResets bool `json:"pre_update_resets,omitempty"`
	// Script is a local script that installs and activates the firmware
	// itself (legacy route).
	Script string `json:"script,omitempty"`
	// PreingestionExclusive marks an entry used only before ingestion; it
	// is never a managed-host default.
	PreingestionExclusive bool `json:"preingestion_exclusive_config,omitempty"`
}

// Artifact is one file of an entry: a local file name or a URL, with its
// digest. Checksum is the legacy (MD5) checksum of single-file entries; it
// verifies a local file only. An artifact with a URL has its SHA256, and
// an http:// URL its AllowHTTP (the catalog refuses it otherwise).
type Artifact struct {
	Filename string `json:"filename,omitempty"`
	URL      string `json:"url,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
	Checksum string `json:"checksum,omitempty"`
	// AllowHTTP lets the URL be plain http (the catalog's allow_http):
	// the sha256 still verifies the download, and each use is logged.
	AllowHTTP bool `json:"allow_http,omitempty"`
}

// Models lists the catalog's models sorted by vendor family and model.
func (c *Catalog) Models() []*Model {
	keys := make([]modelKey, 0, len(c.models))
	for k := range c.models {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].family != keys[j].family {
			return keys[i].family < keys[j].family
		}
		return keys[i].model < keys[j].model
	})
	out := make([]*Model, len(keys))
	for i, k := range keys {
		out[i] = c.models[k]
	}
	return out
}

// Model returns the entry of vendor (any spelling of its family) and model
// (compared lower-cased).
func (c *Catalog) Model(vendor, model string) (*Model, bool) {
	m, ok := c.models[keyOf(vendor, model)]
	return m, ok
}

// Identity is what a host says about itself: the system's manufacturer
// and model, and the vendor of its BMC (empty when not detected).
type Identity struct {
	Manufacturer string     `json:"manufacturer"`
	Model        string     `json:"model"`
	BMCVendor    bmc.Vendor `json:"bmc_vendor,omitempty"`
}

// ForHost returns the catalog entry for a host: the vendor family of its
// system manufacturer (of its BMC vendor when the manufacturer is unknown)
// and its model. A Lenovo host with an AMI BMC looks up "LenovoAMI" first
// and falls back to "Lenovo", as NICo does.
func (c *Catalog) ForHost(id Identity) (*Model, bool) {
	fam := Family(id.Manufacturer)
	if fam == "" {
		fam = string(id.BMCVendor)
	}
	model := strings.ToLower(strings.TrimSpace(id.Model))
	if fam == string(bmc.VendorLenovo) && id.BMCVendor == bmc.VendorAMI {
		if m, ok := c.models[modelKey{family: "lenovoami", model: model}]; ok {
			return m, true
		}
	}
	m, ok := c.models[modelKey{family: fam, model: model}]
	return m, ok
}

// Clone returns a copy that can be merged into without changing c.
func (c *Catalog) Clone() *Catalog {
	n := NewCatalog()
	for k, m := range c.models {
		n.models[k] = m.clone()
	}
	return n
}

// Merge returns base with over applied on top, as a later metadata.toml is
// merged onto earlier ones:
//
//   - a model new to base is added;
//   - a non-empty ordering replaces the old one;
//   - explicit_start_needed = true is sticky (false never clears it);
//   - a host_profile replaces the earlier one;
//   - per component, the matcher and the pre-ingestion threshold are
//     replaced when set; versions are appended, and a new default clears
//     the old defaults.
//
// Neither catalog is changed.
func Merge(base, over *Catalog) *Catalog {
	out := base.Clone()
	for k, om := range over.models {
		m, ok := out.models[k]
		if !ok {
			out.models[k] = om.clone()
			continue
		}
		if len(om.Ordering) > 0 {
			m.Ordering = append([]ComponentType(nil), om.Ordering...)
		}
		m.ExplicitStartNeeded = m.ExplicitStartNeeded || om.ExplicitStartNeeded
		if om.HostProfile != nil {
			p := *om.HostProfile
			m.HostProfile = &p
		}
		for t, oc := range om.Components {
			c, ok := m.Components[t]
			if !ok {
				cc := *oc
				cc.KnownFirmware = append([]Entry(nil), oc.KnownFirmware...)
				m.Components[t] = &cc
				continue
			}
			if oc.CurrentVersionReportedAs != "" {
				c.CurrentVersionReportedAs, c.re = oc.CurrentVersionReportedAs, oc.re
			}
			if oc.PreingestUpgradeWhenBelow != "" {
				c.PreingestUpgradeWhenBelow = oc.PreingestUpgradeWhenBelow
			}
			if _, newDefault := oc.Default(); newDefault {
				for i := range c.KnownFirmware {
					c.KnownFirmware[i].Default = false
				}
			}
			c.KnownFirmware = append(c.KnownFirmware, oc.KnownFirmware...)
		}
	}
	return out
}

// validate checks what only the merged catalog can know: every component
// has a matcher.
func (c *Catalog) validate() error {
	for _, m := range c.Models() {
		for _, t := range ComponentTypes {
			comp, ok := m.Components[t]
			if ok && comp.re == nil {
				return CatalogInvalid.New("%s: [%s / %s] components.%s: no current_version_reported_as in any catalog file", comp.source, m.Vendor, m.Model, t)
			}
		}
	}
	return nil
}
