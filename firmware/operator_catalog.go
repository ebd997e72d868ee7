package firmware

import (
	"context"
	"strings"
)

// The Host Firmware Config API: runtime catalog overrides, the last merge
// stage (see WithOverrides), written by the operator and read by every
// pass and step. A change is checked against the catalog of files and the
// other overrides before it is written, and written by compare-and-set
// on what was read: an override that would not apply is refused
// (FIRMWARE_CATALOG_INVALID) and changes nothing.

// SetOverride upserts ov (by vendor family, model, component and version),
// stamped now, after checking that the effective catalog with it applies.
func (o *Operator) SetOverride(ctx context.Context, ov Override) (Override, error) {
	if strings.TrimSpace(ov.Vendor) == "" || strings.TrimSpace(ov.Model) == "" || strings.TrimSpace(string(ov.Component)) == "" || strings.TrimSpace(ov.Entry.Version) == "" {
		return Override{}, CatalogInvalid.New("an override needs its vendor, model, component and version")
	}
	ov.UpdatedAt = o.Clock.Now()
	for range 5 {
		ovs, err := o.Store.Overrides(ctx)
		if err != nil {
			return Override{}, err
		}
		var old *Override
		next := make([]Override, 0, len(ovs)+1)
		for i := range ovs {
			if SameOverrideKey(ovs[i], ov) {
				cur := ovs[i]
				old = &cur
				continue
			}
			next = append(next, ovs[i])
		}
		if old != nil && !ov.UpdatedAt.After(old.UpdatedAt) {
			ov.UpdatedAt = old.UpdatedAt.Add(1)
		}
		if err := o.checkOverrides(append(next, ov)); err != nil {
			return Override{}, err
		}
		err = o.Store.SwapOverride(ctx, old, &ov)
		if StateConflict.Is(err) {
			continue // another operator changed it: check again on what is there now
		}
		if err != nil {
			return Override{}, err
		}
		return ov, nil
	}
	return Override{}, StateConflict.New("the override of %s / %s %s %s kept changing; try again", ov.Vendor, ov.Model, ov.Component, ov.Entry.Version)
}

// DeleteOverride removes the override of vendor, model, component and
// version, after checking that the catalog without it still applies.
func (o *Operator) DeleteOverride(ctx context.Context, vendor, model string, c ComponentType, version string) (Override, error) {
	key := Override{Vendor: vendor, Model: model, Component: c, Entry: Entry{Version: version}}
	for range 5 {
		ovs, err := o.Store.Overrides(ctx)
		if err != nil {
			return Override{}, err
		}
		var old *Override
		rest := make([]Override, 0, len(ovs))
		for i := range ovs {
			if SameOverrideKey(ovs[i], key) {
				cur := ovs[i]
				old = &cur
				continue
			}
			rest = append(rest, ovs[i])
		}
		if old == nil {
			return Override{}, RequestRefused.New("there is no runtime override of %s / %s %s %s", vendor, model, c, version)
		}
		if err := o.checkOverrides(rest); err != nil {
			return Override{}, err
		}
		err = o.Store.SwapOverride(ctx, old, nil)
		if StateConflict.Is(err) {
			continue
		}
		if err != nil {
			return Override{}, err
		}
		return *old, nil
	}
	return Override{}, StateConflict.New("the override of %s / %s %s %s kept changing; try again", vendor, model, c, version)
}

// checkOverrides refuses overrides that do not apply to the catalog of
// files, or whose effective catalog the site refuses.
func (o *Operator) checkOverrides(ovs []Override) error {
	cat, err := currentOf(o.Catalog).WithOverrides(ovs)
	if err != nil {
		return err
	}
	if o.CheckCatalog != nil {
		return o.CheckCatalog(cat)
	}
	return nil
}

// EffectiveCatalog is the catalog of files with the stored overrides on
// top: what the passes and steps use now.
func (o *Operator) EffectiveCatalog(ctx context.Context) (*Catalog, []Override, error) {
	ovs, err := o.Store.Overrides(ctx)
	if err != nil {
		return nil, nil, err
	}
	cat, err := currentOf(o.Catalog).WithOverrides(ovs)
	return cat, ovs, err
}
