package fleetsim_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/ironic"
)

// clobberingNetBox is a deliberately broken NetBox: tagging a device also
// rewrites its platform_class, as a careless full-object PUT would.
type clobberingNetBox struct {
	enrollment.NetBox
	site *fakes.Site
}

func (n clobberingNetBox) AddTags(ctx context.Context, id int, slugs ...string) error {
	_ = n.site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.Devices[id].CustomFields["platform_class"] = "CLOBBERED_01"
		return nil
	})
	return n.NetBox.AddTags(ctx, id, slugs...)
}

// tagDroppingNetBox replaces the device's tags instead of adding to them.
type tagDroppingNetBox struct {
	enrollment.NetBox
	site *fakes.Site
}

func (n tagDroppingNetBox) AddTags(ctx context.Context, id int, slugs ...string) error {
	_ = n.site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.Devices[id].TagIDs = nil
		return nil
	})
	return n.NetBox.AddTags(ctx, id, slugs...)
}

// rawErrorNetBox returns an error no phase can classify.
type rawErrorNetBox struct{ enrollment.NetBox }

func (rawErrorNetBox) SetStatus(context.Context, int, intent.Status) error {
	return errors.New("netbox: something odd")
}

// panickingNetBox panics on activation.
type panickingNetBox struct{ enrollment.NetBox }

func (panickingNetBox) SetStatus(context.Context, int, intent.Status) error {
	panic("netbox client: nil map")
}

// TestSuiteCatchesBrokenFakes proves the suite has teeth: each deliberately
// broken client must make Check report the promise it breaks.
func TestSuiteCatchesBrokenFakes(t *testing.T) {
	cases := []struct {
		name string
		wrap func(f *fleetsim.Fleet, e *enrollment.Executor)
		// divergent pre-populates platform_class on half the hosts.
		divergent float64
		want      string
	}{
		{
			name:      "NetBox that overwrites a populated platform_class",
			wrap:      func(f *fleetsim.Fleet, e *enrollment.Executor) { e.NetBox = clobberingNetBox{e.NetBox, f.Site} },
			divergent: 1,
			want:      "populated platform_class",
		},
		{
			name: "NetBox that drops tags it does not own",
			wrap: func(f *fleetsim.Fleet, e *enrollment.Executor) { e.NetBox = tagDroppingNetBox{e.NetBox, f.Site} },
			want: "lost tag " + fleetsim.AuditTag,
		},
		{
			name: "NetBox client returning an unclassifiable error",
			wrap: func(_ *fleetsim.Fleet, e *enrollment.Executor) { e.NetBox = rawErrorNetBox{e.NetBox} },
			want: "UNCLASSIFIED",
		},
		{
			name: "NetBox client that panics",
			wrap: func(_ *fleetsim.Fleet, e *enrollment.Executor) { e.NetBox = panickingNetBox{e.NetBox} },
			want: "panicked",
		},
		{
			name: "Ironic credentials read from the monitoring user's vault item",
			wrap: func(f *fleetsim.Fleet, e *enrollment.Executor) {
				for inst, p := range e.Ironic {
					if ph, ok := p.(*ironic.Phases); ok {
						cp := *ph
						cp.Credentials = ironic.VaultCredentials{Vault: monitoringVault{f.Site.Vault}}
						e.Ironic[inst] = &cp
					}
				}
			},
			want: "driver_info redfish_password holds the shared monitoring credential",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fleetsim.Schedule{Seed: 11, Fleet: fleetsim.Config{Hosts: 2, Seed: 11, Divergent: tc.divergent}}
			problems := fleetsim.Check(context.Background(), s, fleetsim.CheckOptions{Wrap: tc.wrap})
			for _, p := range problems {
				if strings.Contains(p, tc.want) {
					return
				}
			}
			t.Fatalf("the suite did not report %q; it reported:\n  %s", tc.want, strings.Join(problems, "\n  "))
		})
	}
}

// monitoringVault answers every per-host admin item with the shared
// monitoring user's item, as a mis-keyed vault would.
type monitoringVault struct{ v *fakes.Vault }

func (m monitoringVault) Item(ctx context.Context, name string) (map[string]string, error) {
	if strings.HasPrefix(name, "bmc-admin-") {
		name = fakes.MonitoringItem
	}
	return m.v.Item(ctx, name)
}

// TestHealthyScheduleHasNoProblems: without faults or broken clients, a
// fleet with every breakage passes the suite, so a report is never noise.
func TestHealthyScheduleHasNoProblems(t *testing.T) {
	s := fleetsim.Schedule{Seed: 5, Fleet: fleetsim.Config{Hosts: 6, Seed: 5, Broken: 0.5, Divergent: 0.3}}
	if problems := fleetsim.Check(context.Background(), s, fleetsim.CheckOptions{}); len(problems) > 0 {
		t.Fatalf("a fault-free schedule reported:\n  %s", strings.Join(problems, "\n  "))
	}
}
