package fakes

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
)

// Site is a coherent fake world: one NetBox, one fleet manager, one vault,
// sharing a call counter, a fault schedule and a fake clock.
type Site struct {
	Clock        *clock.Fake
	NetBox       *NetBox
	FleetManager *FleetManager
	Vault        *Vault
	// Proofs is the fleet manager's Enrollment proof per device.
	Proofs *FleetProofs
	// DHCP is the DHCP server host (ISC flavour by default).
	DHCP *DHCPServer
	// Ironic holds the Ironic instances by name (see AddIronic).
	Ironic map[string]*Ironic
	// BMCs is one fake BMC per host, reached by out-of-band address.
	BMCs *BMCs

	calls  counter
	faults faults

	mu sync.Mutex
	// noPlatformClassField simulates a NetBox without the custom field.
	noPlatformClassField bool
	hosts                map[string]*Host
	hostOrder            []string
	switches             []string
	nextPort             map[string]int
	siteIDv              int
	hostSeq              int
}

// NewSite returns an empty site on a fake clock at clock.Epoch.
func NewSite() *Site {
	s := &Site{Clock: clock.NewFake(clock.Epoch)}
	s.NetBox = &NetBox{state: newNetBoxState(), site: s}
	s.FleetManager = &FleetManager{site: s, devices: map[string]string{}, changes: map[string]int64{}}
	s.Proofs = newFleetProofs(s)
	s.Vault = &Vault{site: s, items: map[string]map[string]string{}}
	s.DHCP = newDHCPServer(s)
	s.BMCs = newBMCs(s)
	s.seedBMCVault()
	return s
}

// Calls returns the calls made so far, per system.
func (s *Site) Calls() Calls { return s.calls.snapshot() }

// Inject makes the next n calls of system's op fail with err ("*" matches
// every op of the system). Typical errors: hostforge.ErrUnavailable for a
// 5xx, hostforge.ErrUnauthorized, context.DeadlineExceeded.
func (s *Site) Inject(system, op string, n int, err error) { s.faults.inject(system, op, n, err) }

// RemovePlatformClassField makes NetBox behave as if the platform_class
// custom field were not defined on this site: writes to it are refused.
func (s *Site) RemovePlatformClassField() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noPlatformClassField = true
}

func (s *Site) platformClassFieldDefined() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.noPlatformClassField
}

// FleetManager is the fake fleet inventory service: a platform_class per device.
type FleetManager struct {
	site    *Site
	mu      sync.Mutex
	devices map[string]string
	// changes counts the writes that changed each device's value.
	changes map[string]int64
}

func (f *FleetManager) enter(ctx context.Context, op string, write bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.site.calls.add(SysFleetManager, op, write)
	return f.site.faults.take(SysFleetManager, op)
}

// PlatformClass returns the recorded value ("" when unset).
func (f *FleetManager) PlatformClass(ctx context.Context, device string) (string, error) {
	if err := f.enter(ctx, "platform_class", false); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.devices[device], nil
}

// SetPlatformClass records a value. The fleet manager refuses keys longer
// than 128 characters.
func (f *FleetManager) SetPlatformClass(ctx context.Context, device, value string) error {
	if err := f.enter(ctx, "set_platform_class", true); err != nil {
		return err
	}
	if len(value) > 128 {
		return fmt.Errorf("fleet manager: platform_class longer than 128 characters: %w", hostforge.ErrInvalid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur, ok := f.devices[device]; !ok || cur != value {
		f.devices[device] = value
		f.changes[device]++
	}
	return nil
}

// Changes counts the writes that changed the device's value (an equal
// value writes nothing).
func (f *FleetManager) Changes(device string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changes[device]
}

// Set seeds a value without counting a call.
func (f *FleetManager) Set(device, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.devices[device] = value
}

// Get reads a value without counting a call.
func (f *FleetManager) Get(device string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.devices[device]
}

// Vault is the fake secrets vault: items of named fields.
type Vault struct {
	site  *Site
	mu    sync.Mutex
	items map[string]map[string]string
}

// Item returns a copy of an item's fields.
func (v *Vault) Item(ctx context.Context, name string) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.site.calls.add(SysVault, "item", false)
	if err := v.site.faults.take(SysVault, "item"); err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	it, ok := v.items[name]
	if !ok {
		return nil, fmt.Errorf("vault: item %q: %w", name, hostforge.ErrNotFound)
	}
	out := make(map[string]string, len(it))
	for k, val := range it {
		out[k] = val
	}
	return out, nil
}

// PutItem replaces an item's fields.
func (v *Vault) PutItem(ctx context.Context, name string, fields map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v.site.calls.add(SysVault, "put_item", true)
	if err := v.site.faults.take(SysVault, "put_item"); err != nil {
		return err
	}
	v.Set(name, fields)
	return nil
}

// Set seeds an item without counting a call.
func (v *Vault) Set(name string, fields map[string]string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	cp := make(map[string]string, len(fields))
	for k, val := range fields {
		cp[k] = val
	}
	v.items[name] = cp
}

// Names lists item names, sorted.
func (v *Vault) Names() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]string, 0, len(v.items))
	for k := range v.items {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
