package firmwarefake

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
)

// BMCs is firmware.BMCClient over fake firmware BMCs, one per machine.
// Errors are classified as an adapter classifies them (firmware.BMCErrors);
// a task the BMC does not know is reported Gone.
type BMCs struct {
	mu sync.Mutex
	m  map[string]*fakes.FirmwareBMC
}

var _ firmware.BMCClient = (*BMCs)(nil)

// NewBMCs returns an empty set.
func NewBMCs() *BMCs { return &BMCs{m: map[string]*fakes.FirmwareBMC{}} }

// Add places a machine's BMC.
func (b *BMCs) Add(machine string, fb *fakes.FirmwareBMC) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[machine] = fb
}

// Of returns a machine's BMC (nil when none).
func (b *BMCs) Of(machine string) *fakes.FirmwareBMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[machine]
}

// Machines lists the machines, sorted.
func (b *BMCs) Machines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.m))
	for k := range b.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (b *BMCs) of(machine string) (*fakes.FirmwareBMC, error) {
	fb := b.Of(machine)
	if fb == nil {
		return nil, firmware.BMCRefused.New("machine %s has no BMC", machine)
	}
	return fb, nil
}

func classify(err error, what, machine string) error {
	if err == nil {
		return nil
	}
	return firmware.BMCErrors.Classify(err, "firmware_update", "%s of %s", what, machine)
}

// Inventory reads the machine's identity and inventory.
func (b *BMCs) Inventory(ctx context.Context, machine string) (firmware.Inventory, error) {
	fb, err := b.of(machine)
	if err != nil {
		return firmware.Inventory{}, err
	}
	ms, err := fb.Inventory(ctx)
	if err != nil {
		return firmware.Inventory{}, classify(err, "reading the firmware inventory", machine)
	}
	man, model, vendor := fb.Identity()
	id := firmware.Identity{Manufacturer: man, Model: model}
	if v, err := bmc.Detect(bmc.Identity{Vendor: vendor}); err == nil {
		id.BMCVendor = v
	}
	inv := firmware.Inventory{Identity: id, Entries: make([]firmware.InventoryEntry, len(ms))}
	for i, m := range ms {
		inv.Entries[i] = firmware.InventoryEntry{ID: m.ID, Name: m.Name, Version: m.Version, State: m.State}
	}
	return inv, nil
}

// Upload pushes an artifact (known to the fake by filename, else URL).
func (b *BMCs) Upload(ctx context.Context, machine string, u firmware.UploadRequest) (string, error) {
	fb, err := b.of(machine)
	if err != nil {
		return "", err
	}
	key := u.Artifact.Filename
	if key == "" {
		key = u.Artifact.URL
	}
	id, err := fb.Upload(ctx, key, u.PushID)
	return id, classify(err, "uploading "+key, machine)
}

// Tasks lists the BMC's update tasks: every one is a firmware update that
// records its image's file name.
func (b *BMCs) Tasks(ctx context.Context, machine string) (firmware.TaskList, error) {
	fb, err := b.of(machine)
	if err != nil {
		return firmware.TaskList{}, err
	}
	ts, now, err := fb.Tasks(ctx)
	if err != nil {
		return firmware.TaskList{}, classify(err, "listing the tasks", machine)
	}
	if len(ts) > firmware.MaxTasksListed {
		ts = ts[len(ts)-firmware.MaxTasksListed:]
	}
	l := firmware.TaskList{Now: now, Tasks: make([]firmware.TaskInfo, len(ts))}
	for i, t := range ts {
		l.Tasks[i] = firmware.TaskInfo{ID: t.ID, State: t.State, Name: "Firmware update " + t.ID, Update: true, Image: t.Image, Start: t.Start, End: t.End}
	}
	return l, nil
}

// ResetStatus reads the power state and the last reset times.
func (b *BMCs) ResetStatus(ctx context.Context, machine string) (firmware.ResetStatus, error) {
	fb, err := b.of(machine)
	if err != nil {
		return firmware.ResetStatus{}, err
	}
	power, sys, mgr, err := fb.ResetStatus(ctx)
	if err != nil {
		return firmware.ResetStatus{}, classify(err, "reading the power state", machine)
	}
	return firmware.ResetStatus{Power: power, SystemLastReset: sys.UTC().Format(time.RFC3339Nano), ManagerLastReset: mgr.UTC().Format(time.RFC3339Nano)}, nil
}

// Task polls a task.
func (b *BMCs) Task(ctx context.Context, machine, taskID string) (firmware.Task, error) {
	fb, err := b.of(machine)
	if err != nil {
		return firmware.Task{}, err
	}
	st, err := fb.Task(ctx, taskID)
	if errors.Is(err, hostforge.ErrNotFound) {
		return firmware.Task{Gone: true}, nil
	}
	if err != nil {
		return firmware.Task{}, classify(err, "polling task "+taskID, machine)
	}
	return firmware.Task{State: st}, nil
}

// Reset performs a power or BMC action.
func (b *BMCs) Reset(ctx context.Context, machine string, kind firmware.ResetKind) error {
	fb, err := b.of(machine)
	if err != nil {
		return err
	}
	return classify(fb.Reset(ctx, string(kind)), "reset "+string(kind), machine)
}

// Lockdown reads platform lockdown.
func (b *BMCs) Lockdown(ctx context.Context, machine string) (firmware.LockdownState, error) {
	fb, err := b.of(machine)
	if err != nil {
		return "", err
	}
	on, has, err := fb.Lockdown(ctx)
	switch {
	case err != nil:
		return "", classify(err, "reading lockdown", machine)
	case !has:
		return firmware.LockdownNone, nil
	case on:
		return firmware.LockdownEnabled, nil
	}
	return firmware.LockdownDisabled, nil
}

// SetLockdown turns lockdown on or off.
func (b *BMCs) SetLockdown(ctx context.Context, machine string, on bool) error {
	fb, err := b.of(machine)
	if err != nil {
		return err
	}
	return classify(fb.SetLockdown(ctx, on), "setting lockdown", machine)
}

// Harness is the BMC contract's harness of a fake BMC (see
// firmwaretest.RunBMC): a Dell R750 with firmwaretest.DellMembers.
func Harness(clk *clock.Fake, members []fakes.FirmwareMember) (*BMCs, *fakes.FirmwareBMC) {
	b := NewBMCs()
	fb := fakes.NewFirmwareBMC(clk, "Dell Inc.", "PowerEdge R750", "Dell", members)
	b.Add("m1", fb)
	return b, fb
}
