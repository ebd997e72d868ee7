package fleetsim

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// SnapshotNetBox deep-copies the fake NetBox's state.
func SnapshotNetBox(nb *fakes.NetBox) *fakes.NetBoxState {
	var out *fakes.NetBoxState
	nb.View(func(st *fakes.NetBoxState) { out = st.Clone() })
	return out
}

// DiffNetBox lists what changed between two NetBox snapshots that the
// enrollment SDK does not own. The SDK owns three things: a device's status
// (staged → active only), tags it adds (allowed slugs only, never dropping
// one), and custom_fields.platform_class when it was empty. Anything else
// that changed is data lost.
func DiffNetBox(before, after *fakes.NetBoxState, allowedTags ...string) []string {
	var out []string
	allowed := map[string]bool{}
	for _, t := range allowedTags {
		allowed[t] = true
	}
	for id, b := range before.Devices {
		a, ok := after.Devices[id]
		if !ok {
			out = append(out, fmt.Sprintf("netbox: device %s (id %d) disappeared", b.Name, id))
			continue
		}
		out = append(out, diffDevice(b, a, before, after, allowed)...)
	}
	for id, a := range after.Devices {
		if _, ok := before.Devices[id]; !ok {
			out = append(out, fmt.Sprintf("netbox: device %s (id %d) appeared", a.Name, id))
		}
	}
	for id, b := range before.Tags {
		if a, ok := after.Tags[id]; !ok || !reflect.DeepEqual(a, b) {
			out = append(out, fmt.Sprintf("netbox: tag %s (id %d) changed or disappeared", b.Slug, id))
		}
	}
	for id, a := range after.Tags {
		if _, ok := before.Tags[id]; !ok && !allowed[a.Slug] {
			out = append(out, fmt.Sprintf("netbox: tag %q was created; enrollment creates only %v", a.Slug, allowedTags))
		}
	}
	for _, c := range []struct {
		kind string
		b, a any
	}{
		{"interfaces", before.Interfaces, after.Interfaces},
		{"cables", before.Cables, after.Cables},
		{"device types", before.DeviceTypes, after.DeviceTypes},
		{"manufacturers", before.Manufacturers, after.Manufacturers},
		{"roles", before.Roles, after.Roles},
		{"sites", before.Sites, after.Sites},
	} {
		if !reflect.DeepEqual(c.b, c.a) {
			out = append(out, "netbox: "+c.kind+" changed; enrollment never writes them")
		}
	}
	sort.Strings(out)
	return out
}

func diffDevice(b, a *fakes.NBDevice, before, after *fakes.NetBoxState, allowed map[string]bool) []string {
	var out []string
	if a.Status != b.Status && (b.Status != string(intent.StatusStaged) || a.Status != string(intent.StatusActive)) {
		out = append(out, fmt.Sprintf("netbox: device %s status %s → %s; enrollment only moves staged → active", b.Name, b.Status, a.Status))
	}
	has := map[int]bool{}
	for _, t := range a.TagIDs {
		has[t] = true
	}
	for _, t := range b.TagIDs {
		if !has[t] {
			out = append(out, fmt.Sprintf("netbox: device %s lost tag %s", b.Name, tagSlug(before, t)))
		}
		delete(has, t)
	}
	for t := range has {
		if s := tagSlug(after, t); !allowed[s] {
			out = append(out, fmt.Sprintf("netbox: device %s got tag %q; enrollment adds only its own tags", b.Name, s))
		}
	}
	bpc, apc := pc(b), pc(a)
	if bpc != "" && apc != bpc {
		out = append(out, fmt.Sprintf("netbox: device %s: populated platform_class %q was overwritten with %q", b.Name, bpc, apc))
	}
	if bpc == "" && apc == "" && !reflect.DeepEqual(b.CustomFields["platform_class"], a.CustomFields["platform_class"]) {
		out = append(out, fmt.Sprintf("netbox: device %s: empty platform_class changed from %v to %v", b.Name, b.CustomFields["platform_class"], a.CustomFields["platform_class"]))
	}
	// Everything else must be untouched.
	bc, ac := *b, *a
	bc.Status, ac.Status = "", ""
	bc.TagIDs, ac.TagIDs = nil, nil
	bc.CustomFields, ac.CustomFields = withoutPC(b.CustomFields), withoutPC(a.CustomFields)
	if !reflect.DeepEqual(bc, ac) {
		out = append(out, fmt.Sprintf("netbox: device %s: fields enrollment does not own changed", b.Name))
	}
	return out
}

func pc(d *fakes.NBDevice) string {
	s, _ := d.CustomFields["platform_class"].(string)
	return s
}

func withoutPC(cf map[string]any) map[string]any {
	out := make(map[string]any, len(cf))
	for k, v := range cf {
		if k != "platform_class" {
			out[k] = v
		}
	}
	return out
}

func tagSlug(st *fakes.NetBoxState, id int) string {
	if t := st.Tags[id]; t != nil {
		return t.Slug
	}
	return fmt.Sprintf("#%d", id)
}
