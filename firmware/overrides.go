package firmware

import (
	"regexp"
	"sort"
	"strings"
)

// builtinMatchers is NICo's built-in table of matchers for overrides that
// carry none: vendor family, model ("*" any; compared as lower-case
// letters and digits) and component.
var builtinMatchers = []struct {
	families []string
	model    string
	c        ComponentType
	re       string
}{
	{[]string{"dell"}, "*", BMC, `^Installed-.*__iDRAC.`},
	{[]string{"dell"}, "*", UEFI, `^Installed-.*__BIOS.Setup.`},
	{[]string{"dell"}, "*", CPLDMB, `^Installed-.*__CPLD.Embedded.`},
	{[]string{"lenovo", "lenovoami"}, "ThinkSystem HS350X V3", BMC, `BMCImage1`},
	{[]string{"lenovo", "lenovoami"}, "*", BMC, `^BMC-Primary`},
	{[]string{"lenovo", "lenovoami"}, "*", UEFI, `^UEFI`},
	{[]string{"nvidia"}, "DGXH100", CombinedBMCUEFI, `^HostBMC_0$`},
	{[]string{"nvidia"}, "DGXH100", CX7, `^CX7_[0-9]+$`},
	{[]string{"nvidia"}, "DGXH100", HGXBMC, `^HGX_FW_BMC_0$`},
	{[]string{"nvidia"}, "DGXH100", UEFI, `^HostBIOS_0$`},
	{[]string{"nvidia"}, "GB200 NVL", BMC, `^FW_BMC_0$`},
	{[]string{"nvidia"}, "GB200 NVL", HGXBMC, `^HGX_FW_GPU_0$`},
	{[]string{"nvidia"}, "GB200 NVL", UEFI, `^HGX_FW_CPU_0$`},
}

func alnumLower(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// BuiltinMatcher returns the built-in current_version_reported_as of a
// vendor, model and component (a named model before the vendor-wide
// entry), as NICo derives it for overrides that carry none.
func BuiltinMatcher(vendor, model string, c ComponentType) (string, bool) {
	fam, m := Family(vendor), alnumLower(model)
	for _, e := range builtinMatchers {
		if e.c != c || (e.model != "*" && alnumLower(e.model) != m) {
			continue
		}
		for _, f := range e.families {
			if f == fam {
				return e.re, true
			}
		}
	}
	return "", false
}

// WithOverrides returns the catalog with runtime overrides applied last,
// oldest first: a model or component the catalog lacks is added (a new
// component needs a matcher, given or built in); the version is upserted
// (an entry of the same version is replaced, in place); a default clears
// the other defaults; the model's ordering only gains the component type
// when it lacks it. An override that cannot apply is refused whole.
func (c *Catalog) WithOverrides(ovs []Override) (*Catalog, error) {
	if len(ovs) == 0 {
		return c, nil
	}
	sorted := append([]Override(nil), ovs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].UpdatedAt.Before(sorted[j].UpdatedAt) })
	out := c.Clone()
	for _, o := range sorted {
		if err := out.applyOverride(o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *Catalog) applyOverride(o Override) error {
	where := o.Vendor + " / " + o.Model + " " + string(o.Component) + " " + o.Entry.Version
	if strings.TrimSpace(o.Vendor) == "" || strings.TrimSpace(o.Model) == "" || strings.TrimSpace(o.Entry.Version) == "" {
		return CatalogInvalid.New("override %s: vendor, model and version are required", where)
	}
	if _, ok := ParseComponentType(string(o.Component)); !ok {
		return CatalogInvalid.New("override %s: unknown component type %q (types: %s)", where, o.Component, componentNames())
	}
	for i, a := range o.Entry.Artifacts {
		if key, msg := artifactProblem(a); key != "" {
			return CatalogInvalid.New("override %s: artifacts[%d] %s: %s", where, i, key, msg)
		}
	}
	k := keyOf(o.Vendor, o.Model)
	m, ok := c.models[k]
	if !ok {
		m = &Model{Vendor: o.Vendor, Model: o.Model, Components: map[ComponentType]*Component{}}
		c.models[k] = m
	}
	comp, ok := m.Components[o.Component]
	matcher := o.Matcher
	if matcher == "" && !ok {
		var found bool
		if matcher, found = BuiltinMatcher(o.Vendor, o.Model, o.Component); !found {
			return CatalogInvalid.New("override %s: no current_version_reported_as mapping found for %s %s %s, and the override gives none", where, o.Vendor, o.Model, o.Component)
		}
	}
	if !ok {
		comp = &Component{Type: o.Component, source: "override"}
		m.Components[o.Component] = comp
	}
	if matcher != "" {
		re, err := regexp.Compile(matcher)
		if err != nil {
			return CatalogInvalid.New("override %s: matcher %q does not compile: %v", where, matcher, err)
		}
		comp.CurrentVersionReportedAs, comp.re = matcher, re
	}
	if o.Entry.Default {
		for i := range comp.KnownFirmware {
			comp.KnownFirmware[i].Default = false
		}
	}
	replaced := false
	for i := range comp.KnownFirmware {
		if comp.KnownFirmware[i].Version == o.Entry.Version {
			comp.KnownFirmware[i] = o.Entry
			replaced = true
			break
		}
	}
	if !replaced {
		comp.KnownFirmware = append(comp.KnownFirmware, o.Entry)
	}
	ord := m.Ordering
	if len(ord) == 0 {
		ord = append([]ComponentType(nil), DefaultOrdering...)
	}
	for _, t := range ord {
		if t == o.Component {
			return nil
		}
	}
	m.Ordering = append(ord, o.Component)
	return nil
}
