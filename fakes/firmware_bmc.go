package fakes

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
)

// FirmwareMember is one member of a fake BMC's firmware inventory, as
// Redfish reports it (Id, Name, Version, Status.State).
type FirmwareMember struct {
	ID      string
	Name    string
	Version string
	State   string
}

// Activation is what makes staged firmware the running firmware.
type Activation string

// Activations of a FirmwareImage.
const (
	// ActivateSelf: the BMC activates the image when its task completes
	// (an iDRAC updating itself).
	ActivateSelf Activation = "self"
	// ActivateBMCReset: a reset of the BMC (Manager.Reset).
	ActivateBMCReset Activation = "bmc_reset"
	// ActivateHostReboot: any host reboot: ForceRestart, power off then
	// on, or an AC power cycle.
	ActivateHostReboot Activation = "host_reboot"
	// ActivatePowerCycle: the host powered off then on (ForceRestart is
	// not enough), or an AC power cycle.
	ActivatePowerCycle Activation = "power_cycle"
	// ActivateACCycle: only an AC power cycle (a power drain).
	ActivateACCycle Activation = "ac_cycle"
	// ActivateNever: the image stages but never activates (a fault).
	ActivateNever Activation = "never"
)

// FirmwareImage is what an uploaded artifact installs.
type FirmwareImage struct {
	// Targets are the Ids of the members the image replaces.
	Targets []string
	// Version is what the targets report once the image is active.
	Version string
	// Activation is the reset that activates the staged image.
	Activation Activation
	// TaskTime is how long the BMC's update task runs (default 2 min).
	TaskTime time.Duration
	// TaskEnd is the task's final state: "" is Completed; Exception,
	// Killed, Interrupted or Cancelled fail it (nothing is staged).
	TaskEnd string
	// ShowPending lists, while the image is staged, a member
	// "<target>-Pending" with the new version and State Disabled, as
	// Lenovo's XCC does.
	ShowPending bool
}

type fwTask struct {
	id      string
	key     string
	pushID  string
	image   FirmwareImage
	start   time.Time
	done    time.Time
	state   string
	applied bool
}

// FirmwareTask is one update task of a fake BMC as its TaskService lists
// it.
type FirmwareTask struct {
	ID    string
	State string
	// Image is the file name of the pushed artifact (the last segment of
	// its filename or URL).
	Image string
	// Start is when the push was taken; End when the task ended (zero
	// while it runs).
	Start, End time.Time
}

// FirmwarePush is one push a fake BMC took.
type FirmwarePush struct {
	// Key is the artifact as pushed (its filename or URL); PushID the
	// client's push record, when it sent one.
	Key, PushID, Task string
	At                time.Time
}

// FirmwareBMC is a fake BMC's firmware side: an inventory, an update
// service whose uploads run as tasks on the clock, staged images that
// become active only through the reset their image needs, power and BMC
// resets, lockdown. It counts calls and takes injected faults. Safe for
// concurrent use.
type FirmwareBMC struct {
	clock clock.Clock

	mu           sync.Mutex
	manufacturer string
	model        string
	vendor       string
	members      []FirmwareMember
	images       map[string]FirmwareImage
	tasks        map[string]*fwTask
	staged       []FirmwareImage
	nextTask     int
	powerOn      bool
	lockdown     bool
	bmcDownUntil time.Time
	resets       []string
	uploads      int
	pushes       []FirmwarePush
	calls        map[string]int
	faults       map[string]*fwFault
	lost         map[string]*fwFault
	forgetTasks  bool
	noLockdown   bool
	noACCycle    bool
	// The system's and the BMC's last reset, as their LastResetTime.
	systemReset  time.Time
	managerReset time.Time
}

type fwFault struct {
	n   int
	err error
}

// BMCResetDowntime is how long a fake BMC does not answer after its reset.
const BMCResetDowntime = 90 * time.Second

// NewFirmwareBMC returns a powered-on BMC of a system (manufacturer and
// model as its ComputerSystem reports them; vendor is the BMC's own, e.g.
// "AMI") with the given inventory, in collection order.
func NewFirmwareBMC(clk clock.Clock, manufacturer, model, vendor string, members []FirmwareMember) *FirmwareBMC {
	now := clk.Now()
	return &FirmwareBMC{
		clock: clk, manufacturer: manufacturer, model: model, vendor: vendor,
		members: append([]FirmwareMember(nil), members...),
		images:  map[string]FirmwareImage{}, tasks: map[string]*fwTask{},
		powerOn: true, lockdown: true, calls: map[string]int{}, faults: map[string]*fwFault{}, lost: map[string]*fwFault{},
		systemReset: now.Add(-time.Hour), managerReset: now.Add(-24 * time.Hour),
	}
}

// AddImage registers what the artifact named key (its filename or URL)
// installs on this BMC. An upload of an unknown artifact is refused.
func (b *FirmwareBMC) AddImage(key string, img FirmwareImage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if img.TaskTime <= 0 {
		img.TaskTime = 2 * time.Minute
	}
	b.images[key] = img
}

// Fail makes the next n calls of op ("inventory", "upload", "task",
// "tasks", "reset_status", "reset", "lockdown", "lockdown_status"; "*"
// any) return err
// before they take effect.
func (b *FirmwareBMC) Fail(op string, n int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults[op] = &fwFault{n: n, err: err}
}

// FailLost makes the next n calls of op ("*" any) take effect and then
// return err, as when the connection drops after the BMC took an upload
// or a reset: the caller cannot tell whether it happened. On a read it is
// the same as Fail.
func (b *FirmwareBMC) FailLost(op string, n int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lost[op] = &fwFault{n: n, err: err}
}

// answer ends a call that took effect: it returns the lost-answer fault
// of op, if one is armed.
func (b *FirmwareBMC) answer(op string) error {
	for _, k := range []string{op, "*"} {
		if f := b.lost[k]; f != nil && f.n > 0 {
			f.n--
			return f.err
		}
	}
	return nil
}

// ForgetTasks makes the BMC forget every task (polls answer 404), as a
// BMC does after its own reset.
func (b *FirmwareBMC) ForgetTasks(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forgetTasks = on
}

// NoLockdown gives the BMC no platform lockdown (an AMI MegaRAC, which
// has none hostforge knows): Lockdown reports none and SetLockdown
// changes nothing.
func (b *FirmwareBMC) NoLockdown() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noLockdown = true
}

// NoACPowerCycle gives the BMC no AC power cycle (a DGX's MegaRAC lists
// none of FullPowerCycle, PowerCycle or an OEM cycle): Reset
// "ACPowerCycle" is refused with ErrUnsupported and changes nothing.
func (b *FirmwareBMC) NoACPowerCycle() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noACCycle = true
}

// SetLockdownState sets platform lockdown as it is before a test, without
// counting a call.
func (b *FirmwareBMC) SetLockdownState(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lockdown = on
}

// SetMember sets a member's version (adding it when absent): firmware
// changed behind hostforge's back.
func (b *FirmwareBMC) SetMember(m FirmwareMember) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.members {
		if b.members[i].ID == m.ID {
			b.members[i] = m
			return
		}
	}
	b.members = append(b.members, m)
}

func (b *FirmwareBMC) call(op string) error {
	b.calls[op]++
	for _, k := range []string{op, "*"} {
		if f := b.faults[k]; f != nil && f.n > 0 {
			f.n--
			return f.err
		}
	}
	if op != "upload" && op != "reset" && op != "lockdown" {
		// A read has no effect: a lost answer is an error like any other.
		if err := b.answer(op); err != nil {
			return err
		}
	}
	if op != "reset" && b.clock.Now().Before(b.bmcDownUntil) {
		return fmt.Errorf("fake BMC %s: resetting, no answer: %w", b.model, hostforge.ErrUnavailable)
	}
	return nil
}

// advance completes due tasks: a completed task stages its image (or
// activates it, for ActivateSelf).
func (b *FirmwareBMC) advance() {
	now := b.clock.Now()
	ids := make([]string, 0, len(b.tasks))
	for id := range b.tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t := b.tasks[id]
		if t.applied || now.Before(t.done) {
			continue
		}
		t.applied = true
		t.state = hostforgeTaskEnd(t.image.TaskEnd)
		if t.state != "Completed" {
			continue
		}
		if t.image.Activation == ActivateSelf {
			b.activate(t.image)
		} else {
			b.staged = append(b.staged, t.image)
		}
	}
}

func hostforgeTaskEnd(s string) string {
	if s == "" {
		return "Completed"
	}
	return s
}

func (b *FirmwareBMC) activate(img FirmwareImage) {
	for _, id := range img.Targets {
		for i := range b.members {
			if b.members[i].ID == id {
				b.members[i].Version = img.Version
			}
		}
	}
}

// applyStaged activates the staged images the event activates.
func (b *FirmwareBMC) applyStaged(event Activation) {
	keep := b.staged[:0]
	for _, img := range b.staged {
		fires := false
		switch event {
		case ActivateBMCReset:
			fires = img.Activation == ActivateBMCReset
		case ActivateHostReboot: // ForceRestart
			fires = img.Activation == ActivateHostReboot
		case ActivatePowerCycle: // off, then on
			fires = img.Activation == ActivateHostReboot || img.Activation == ActivatePowerCycle
		case ActivateACCycle:
			fires = img.Activation == ActivateHostReboot || img.Activation == ActivatePowerCycle || img.Activation == ActivateACCycle
		}
		if fires {
			b.activate(img)
		} else {
			keep = append(keep, img)
		}
	}
	b.staged = keep
}

// Identity returns the system's manufacturer and model and the BMC's vendor.
func (b *FirmwareBMC) Identity() (manufacturer, model, vendor string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.manufacturer, b.model, b.vendor
}

// Inventory reads the firmware inventory, with pending members for staged
// images that show them.
func (b *FirmwareBMC) Inventory(context.Context) ([]FirmwareMember, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("inventory"); err != nil {
		return nil, err
	}
	b.advance()
	out := make([]FirmwareMember, 0, len(b.members)+len(b.staged))
	for _, m := range b.members {
		out = append(out, m)
		for _, img := range b.staged {
			if !img.ShowPending {
				continue
			}
			for _, t := range img.Targets {
				if t == m.ID {
					out = append(out, FirmwareMember{ID: m.ID + "-Pending", Version: img.Version, State: "Disabled"})
				}
			}
		}
	}
	return out, nil
}

// Upload accepts an artifact (by its filename or URL) and starts its task;
// pushID is the client's record of the push (kept, for tests; "" when the
// client sends none). The fake pushes instantly; its task then runs the
// image's TaskTime.
func (b *FirmwareBMC) Upload(_ context.Context, artifact, pushID string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("upload"); err != nil {
		return "", err
	}
	img, ok := b.images[artifact]
	if !ok {
		return "", fmt.Errorf("fake BMC %s: %q is not a firmware image for this platform: %w", b.model, artifact, hostforge.ErrInvalid)
	}
	b.uploads++
	b.nextTask++
	id := fmt.Sprintf("JID_%04d", b.nextTask)
	now := b.clock.Now()
	b.tasks[id] = &fwTask{id: id, key: artifact, pushID: pushID, image: img, start: now, done: now.Add(img.TaskTime), state: "Running"}
	b.pushes = append(b.pushes, FirmwarePush{Key: artifact, PushID: pushID, Task: id, At: now})
	return id, b.answer("upload")
}

// Tasks lists the update tasks the BMC knows, oldest first, and its clock
// (none while it forgets its tasks).
func (b *FirmwareBMC) Tasks(context.Context) ([]FirmwareTask, time.Time, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("tasks"); err != nil {
		return nil, time.Time{}, err
	}
	b.advance()
	now := b.clock.Now()
	if b.forgetTasks {
		return nil, now, nil
	}
	ids := make([]string, 0, len(b.tasks))
	for id := range b.tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]FirmwareTask, 0, len(ids))
	for _, id := range ids {
		out = append(out, b.tasks[id].info())
	}
	return out, now, nil
}

// ResetStatus reads the power state ("On" or "Off") and the system's and
// the BMC's last reset times.
func (b *FirmwareBMC) ResetStatus(context.Context) (power string, systemReset, managerReset time.Time, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("reset_status"); err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	power = "Off"
	if b.powerOn {
		power = "On"
	}
	return power, b.systemReset, b.managerReset, nil
}

// Install puts an artifact's image in place without the update service,
// as a script on the host does: staged, or active at once with activate
// (a script that activates its own firmware).
func (b *FirmwareBMC) Install(artifact string, activate bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls["install"]++
	img, ok := b.images[artifact]
	if !ok {
		return fmt.Errorf("fake BMC %s: %q is not a firmware image for this platform: %w", b.model, artifact, hostforge.ErrInvalid)
	}
	if activate || img.Activation == ActivateSelf {
		b.activate(img)
	} else {
		b.staged = append(b.staged, img)
	}
	return nil
}

// Task polls a task: Running until its time, then its end state. A task
// the BMC does not know is ErrNotFound.
func (b *FirmwareBMC) Task(ctx context.Context, id string) (state string, err error) {
	t, err := b.TaskDetail(ctx, id)
	return t.State, err
}

// TaskDetail polls a task as Task does, with its image and times.
func (b *FirmwareBMC) TaskDetail(_ context.Context, id string) (FirmwareTask, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("task"); err != nil {
		return FirmwareTask{}, err
	}
	b.advance()
	t, ok := b.tasks[id]
	if !ok || b.forgetTasks {
		return FirmwareTask{}, fmt.Errorf("fake BMC %s: task %s: %w", b.model, id, hostforge.ErrNotFound)
	}
	return t.info(), nil
}

func (t *fwTask) info() FirmwareTask {
	ft := FirmwareTask{ID: t.id, State: t.state, Image: path.Base(t.key), Start: t.start}
	if t.applied {
		ft.End = t.done
	}
	return ft
}

// Reset performs a power or BMC action: "ForceOff", "On", "ForceRestart",
// "ACPowerCycle" or "BMCReset".
func (b *FirmwareBMC) Reset(_ context.Context, kind string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("reset"); err != nil {
		return err
	}
	if b.clock.Now().Before(b.bmcDownUntil) {
		return fmt.Errorf("fake BMC %s: resetting, no answer: %w", b.model, hostforge.ErrUnavailable)
	}
	b.advance()
	now := b.clock.Now()
	switch kind {
	case "ForceOff":
		b.powerOn = false
	case "On":
		if !b.powerOn {
			b.applyStaged(ActivatePowerCycle)
			b.systemReset = now
		}
		b.powerOn = true
	case "ForceRestart":
		if b.powerOn {
			b.applyStaged(ActivateHostReboot)
			b.systemReset = now
		}
	case "ACPowerCycle":
		if b.noACCycle {
			return fmt.Errorf("fake BMC %s: no AC power cycle (no FullPowerCycle, PowerCycle or OEM cycle): %w", b.model, bmc.ErrUnsupported)
		}
		b.applyStaged(ActivateACCycle)
		b.powerOn = false
		b.systemReset = now
	case "BMCReset":
		b.applyStaged(ActivateBMCReset)
		b.bmcDownUntil = now.Add(BMCResetDowntime)
		b.managerReset = now
	default:
		return fmt.Errorf("fake BMC %s: unknown reset %q: %w", b.model, kind, hostforge.ErrInvalid)
	}
	b.resets = append(b.resets, kind)
	return b.answer("reset")
}

// SetLockdown turns platform lockdown on or off (nothing on a BMC
// without lockdown).
func (b *FirmwareBMC) SetLockdown(_ context.Context, on bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("lockdown"); err != nil {
		return err
	}
	if !b.noLockdown {
		b.lockdown = on
	}
	return b.answer("lockdown")
}

// Lockdown reads platform lockdown; has is false on a BMC without it.
func (b *FirmwareBMC) Lockdown(context.Context) (on, has bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("lockdown_status"); err != nil {
		return false, false, err
	}
	return b.lockdown && !b.noLockdown, !b.noLockdown, nil
}

// FirmwareState is a snapshot of a fake BMC for assertions.
type FirmwareState struct {
	Members  []FirmwareMember
	Staged   int
	PowerOn  bool
	Lockdown bool
	Resets   []string
	Uploads  int
	// Pushes are the pushes the BMC took, in order.
	Pushes []FirmwarePush
	Calls  map[string]int
	// SystemReset and ManagerReset are the system's and the BMC's last
	// reset (their LastResetTime).
	SystemReset, ManagerReset time.Time
}

// State returns a snapshot.
func (b *FirmwareBMC) State() FirmwareState {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance()
	calls := make(map[string]int, len(b.calls))
	for k, v := range b.calls {
		calls[k] = v
	}
	return FirmwareState{
		Members: append([]FirmwareMember(nil), b.members...), Staged: len(b.staged),
		PowerOn: b.powerOn, Lockdown: b.lockdown, Resets: append([]string(nil), b.resets...),
		Uploads: b.uploads, Pushes: append([]FirmwarePush(nil), b.pushes...), Calls: calls,
		SystemReset: b.systemReset, ManagerReset: b.managerReset,
	}
}

// Version returns the version a member reports ("" when absent).
func (b *FirmwareBMC) Version(id string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance()
	for _, m := range b.members {
		if m.ID == id {
			return m.Version
		}
	}
	return ""
}

// String names the BMC for messages.
func (b *FirmwareBMC) String() string {
	return strings.TrimSpace(b.manufacturer + " " + b.model)
}
