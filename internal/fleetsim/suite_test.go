package fleetsim_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
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

// withIronic swaps every Ironic phase's client for wrap(client).
func withIronic(e *enrollment.Executor, wrap func(ironic.Client) ironic.Client) {
	for inst, p := range e.Ironic {
		if ph, ok := p.(*ironic.Phases); ok {
			cp := *ph
			cp.Client = wrap(ph.Client)
			e.Ironic[inst] = &cp
		}
	}
}

// noWriteAheadVault drops rotation's write-ahead: the vault write that
// records the new password as pending before the BMC changes.
type noWriteAheadVault struct{ bmc.Vault }

func (v noWriteAheadVault) PutItem(ctx context.Context, name string, fields map[string]string) error {
	if fields[bmc.FieldPendingPassword] != "" && fields[bmc.FieldPassword] == "" {
		return nil
	}
	return v.Vault.PutItem(ctx, name, fields)
}

// noRestoreIronic never sets maintenance back on: the restore after a failed
// manage recovery is gone.
type noRestoreIronic struct{ ironic.Client }

func (c noRestoreIronic) SetMaintenance(ctx context.Context, ident string, on bool, reason string) error {
	if on {
		return nil
	}
	return c.Client.SetMaintenance(ctx, ident, on, reason)
}

// blindIronic does not see instance_uuid: the Nova guard cannot work.
type blindIronic struct{ ironic.Client }

func (c blindIronic) GetNode(ctx context.Context, ident string, fields ...string) (ironic.Node, error) {
	n, err := c.Client.GetNode(ctx, ident, fields...)
	n.InstanceUUID = ""
	return n, err
}

// pxeEverywhereIronic creates every port PXE-enabled.
type pxeEverywhereIronic struct{ ironic.Client }

func (c pxeEverywhereIronic) CreatePort(ctx context.Context, p ironic.Port) (ironic.Port, error) {
	p.PXEEnabled = true
	return c.Client.CreatePort(ctx, p)
}

// pinStrippingIronic drops the root-device hint on every node update that
// does not set it, as a client that replaces the whole properties object.
type pinStrippingIronic struct{ ironic.Client }

func (c pinStrippingIronic) UpdateNode(ctx context.Context, ident string, ops []ironic.PatchOp) (ironic.Node, error) {
	n, err := c.Client.UpdateNode(ctx, ident, ops)
	if err != nil {
		return n, err
	}
	for _, op := range ops {
		if strings.HasPrefix(op.Path, "/properties") {
			return n, nil
		}
	}
	if _, ok := n.Properties["root_device"]; ok {
		return c.Client.UpdateNode(ctx, ident, []ironic.PatchOp{ironic.Remove("/properties/root_device")})
	}
	return n, nil
}

// tagBlindNetBox does not see the ironic tag on a device, so every run tags
// the device again.
type tagBlindNetBox struct{ enrollment.NetBox }

func (n tagBlindNetBox) Device(ctx context.Context, name string) (intent.Device, error) {
	d, err := n.NetBox.Device(ctx, name)
	kept := d.Tags[:0]
	for _, t := range d.Tags {
		if t != intent.DefaultIronicTag {
			kept = append(kept, t)
		}
	}
	d.Tags = kept
	return d, err
}

// quarantiningDHCP is a DHCP server whose rollback moves the host's file
// aside instead of restoring its previous content: the behaviour a refused
// change had before changes were transactional.
type quarantiningDHCP struct{ d *fakes.DHCPServer }

func (q quarantiningDHCP) Dial(ctx context.Context) (dhcp.Remote, error) {
	r, err := q.d.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return &quarantiningRemote{Remote: r, test: q.d.Config().ConfigTest}, nil
}

type quarantiningRemote struct {
	dhcp.Remote
	test    string
	refused bool
}

func (r *quarantiningRemote) Run(ctx context.Context, cmd string) (dhcp.Output, error) {
	out, err := r.Remote.Run(ctx, cmd)
	if err == nil && cmd == r.test && out.Exit != 0 {
		r.refused = true
	}
	return out, err
}

func (r *quarantiningRemote) Upload(ctx context.Context, p string, data []byte) error {
	if r.refused && !strings.Contains(p, ".hostforge-backup") {
		return r.Remote.Remove(ctx, p)
	}
	return r.Remote.Upload(ctx, p, data)
}

// downDHCP is a DHCP server whose rollback never restarts the service on
// the restored file, while saying it did.
type downDHCP struct{ d *fakes.DHCPServer }

func (q downDHCP) Dial(ctx context.Context) (dhcp.Remote, error) {
	r, err := q.d.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return &downRemote{Remote: r, restart: q.d.Config().Restart, status: q.d.Config().Status}, nil
}

type downRemote struct {
	dhcp.Remote
	restart, status string
	failed          bool
}

func (r *downRemote) Run(ctx context.Context, cmd string) (dhcp.Output, error) {
	if r.failed && (cmd == r.restart || cmd == r.status) {
		return dhcp.Output{}, nil
	}
	out, err := r.Remote.Run(ctx, cmd)
	if err == nil && cmd == r.restart && out.Exit != 0 {
		r.failed = true
	}
	return out, err
}

// brokenClients are one deliberately broken client per invariant of the
// specification's never-do list, and the report that catches each.
var brokenClients = []struct {
	name string
	wrap func(f *fleetsim.Fleet, e *enrollment.Executor)
	want string
}{
	{
		name: "password rotation without its write-ahead",
		wrap: func(_ *fleetsim.Fleet, e *enrollment.Executor) {
			c := *e.BMC.(*bmc.Configurator)
			c.Vault = noWriteAheadVault{c.Vault}
			e.BMC = &c
		},
		want: "its only copy was lost",
	},
	{
		name: "clean failed recovery without the maintenance restore",
		wrap: func(_ *fleetsim.Fleet, e *enrollment.Executor) {
			withIronic(e, func(c ironic.Client) ironic.Client { return noRestoreIronic{c} })
		},
		want: "a cleared maintenance flag was not restored",
	},
	{
		name: "Ironic client blind to instance_uuid (no Nova guard)",
		wrap: func(_ *fleetsim.Fleet, e *enrollment.Executor) {
			withIronic(e, func(c ironic.Client) ironic.Client { return blindIronic{c} })
		},
		want: "Nova-owned",
	},
	{
		name: "Ironic client that PXE-enables every port",
		wrap: func(_ *fleetsim.Fleet, e *enrollment.Executor) {
			withIronic(e, func(c ironic.Client) ironic.Client { return pxeEverywhereIronic{c} })
		},
		want: "has PXE on",
	},
	{
		name: "Ironic client that strips the root-device hint",
		wrap: func(_ *fleetsim.Fleet, e *enrollment.Executor) {
			withIronic(e, func(c ironic.Client) ironic.Client { return pinStrippingIronic{c} })
		},
		want: "lost its root-device hint",
	},
	{
		name: "DHCP rollback that moves the host's file aside",
		wrap: func(f *fleetsim.Fleet, e *enrollment.Executor) {
			e.DHCP = dhcp.New(quarantiningDHCP{f.Site.DHCP}, f.Site.DHCP.Config(), nil)
		},
		want: "valid before, was removed",
	},
	{
		name: "DHCP rollback that leaves the service down",
		wrap: func(f *fleetsim.Fleet, e *enrollment.Executor) {
			e.DHCP = dhcp.New(downDHCP{f.Site.DHCP}, f.Site.DHCP.Config(), nil)
		},
		want: "the DHCP service is down",
	},
	{
		name: "NetBox client that re-tags a tagged device",
		wrap: func(_ *fleetsim.Fleet, e *enrollment.Executor) { e.NetBox = tagBlindNetBox{e.NetBox} },
		want: "converged rerun: 1 write(s) to netbox",
	},
}

// TestSuiteCatchesBrokenClients: for each invariant, the seeded schedules
// — drawn by the same generator as TestFaultSchedules, from seed 1 on —
// catch a client broken against it, well within the suite's budget.
func TestSuiteCatchesBrokenClients(t *testing.T) {
	g := generator(t)
	const budget = 200
	for _, tc := range brokenClients {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= budget; seed++ {
				s := g.Generate(seed)
				for _, p := range fleetsim.Check(context.Background(), s, fleetsim.CheckOptions{Wrap: tc.wrap}) {
					if strings.Contains(p, tc.want) {
						t.Logf("caught by schedule seed %d: %s", seed, p)
						return
					}
				}
			}
			t.Fatalf("%d schedules did not report %q", budget, tc.want)
		})
	}
}

// TestHealthyScheduleHasNoProblems: without faults or broken clients, a
// fleet with every breakage passes the suite, so a report is never noise.
func TestHealthyScheduleHasNoProblems(t *testing.T) {
	s := fleetsim.Schedule{Seed: 5, Fleet: fleetsim.Config{Hosts: 6, Seed: 5, Broken: 0.5, Divergent: 0.3}}
	if problems := fleetsim.Check(context.Background(), s, fleetsim.CheckOptions{}); len(problems) > 0 {
		t.Fatalf("a fault-free schedule reported:\n  %s", strings.Join(problems, "\n  "))
	}
}
