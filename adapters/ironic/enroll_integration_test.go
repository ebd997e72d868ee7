//go:build integration

package ironic_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/verify"
)

// realInstance is the Ironic instance name the real Ironic is routed as.
const realInstance = "ironic-real"

// fastTiming makes the phases poll a fake-hardware Ironic about once a
// second: its transitions take 0.03-0.3 s, the inspector is asked every 2 s.
var fastTiming = ironic.Timing{
	StatePoll: time.Second, LockRetry: time.Second, InspectionPoll: time.Second,
	InspectionTimeout: 3 * time.Minute, PowerOnTimeout: time.Minute, LinkBudget: 30 * time.Second,
	CleanPollMin: time.Second, CleanPollMax: 2 * time.Second, InventoryGrace: 30 * time.Second,
}

// tlog is a slog destination that writes through t.Log.
type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// realWorld is one fake site (NetBox, DHCP, BMCs, vault, fleet manager)
// whose Ironic instance is a real Ironic behind the gophercloud adapter.
type realWorld struct {
	site   *fakes.Site
	host   *fakes.Host
	client *adapter.Client
	phases *ironic.Phases
	exec   *enrollment.Executor
	cfg    enrollment.SiteConfig
	notes  noteBox
}

// noteBox hands the note of the Ironic step that just ran to the timeline.
type noteBox struct {
	mu   sync.Mutex
	note string
}

func (b *noteBox) set(state, note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.note = state
	if note != "" {
		b.note += ": " + note
	}
}

func (b *noteBox) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.note
	b.note = ""
	return n
}

// notingPhases is the Ironic phases, recording what each call saw and did
// (the node's provision state and the call's note) for the step timeline.
type notingPhases struct {
	*ironic.Phases
	box *noteBox
}

func (n *notingPhases) Inspection(ctx context.Context, in ironic.InspectionIn) (ironic.InspectionOut, error) {
	out, err := n.Phases.Inspection(ctx, in)
	n.box.set(out.Node.ProvisionState, out.Note)
	return out, err
}

func (n *notingPhases) Cleaning(ctx context.Context, in ironic.CleaningIn) (ironic.CleaningOut, error) {
	out, err := n.Phases.Cleaning(ctx, in)
	n.box.set(out.Node.ProvisionState, out.Note)
	return out, err
}

func (n *notingPhases) Finalize(ctx context.Context, in ironic.FinalizeIn) (ironic.FinalizeOut, error) {
	out, err := n.Phases.Finalize(ctx, in)
	note := ""
	if out.PoweredOn {
		note = "power on requested"
	}
	n.box.set(out.Node.ProvisionState, note)
	return out, err
}

// fakeHardwareSettings is ironic_settings for a test deployment: Ironic's
// fake-hardware driver, inspection through ironic-inspector.
func fakeHardwareSettings(inspect string) map[string]any {
	return map[string]any{
		"driver": ironic.DriverFakeHardware, "interface_type": "25gbase-x-sfp28",
		"interfaces":     map[string]any{"inspect": inspect, "raid": "fake", "network": "noop"},
		"bond":           map[string]any{"mode": "802.3ad", "miimon": 100, "xmit_hash_policy": "layer3+4"},
		"resource_class": "baremetal", "cpu_arch": "x86_64",
		"capabilities": map[string]any{"boot_mode": "uefi"},
	}
}

func newRealWorld(t *testing.T, url, inspect string) *realWorld {
	t.Helper()
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := "it-enrol-" + hex.EncodeToString(b[:])
	site := fakes.NewSite()
	host := site.AddHost(fakes.HostSpec{Name: name, ConfigContext: map[string]any{"ironic_settings": fakeHardwareSettings(inspect)}})
	// The run sleeps on the wall clock: so does the site.
	t.Cleanup(site.OnWallClock())
	log := slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c := connect(t, url)
	w := &realWorld{site: site, host: host, client: c}
	w.phases = &ironic.Phases{Verifier: verify.Verifier{},
		Client:      c,
		Credentials: ironic.VaultCredentials{Vault: site.Vault},
		Links:       site.BMCs, // the fake host's BMC reports its links
		Clock:       clock.Real{},
		Log:         log,
		Timing:      fastTiming,
	}
	w.exec = enrolltest.Executor(site, log)
	w.exec.Ironic = map[string]enrollment.IronicPhases{realInstance: &notingPhases{Phases: w.phases, box: &w.notes}}
	w.cfg = enrollment.SiteConfig{
		ConfigureDHCP: true, ConfigureBMC: true, IronicEnrol: true,
		IronicInstances: map[string]string{intent.ClassCPUBaremetal: realInstance},
		EnrolProject:    "baremetal-enrol",
	}
	t.Cleanup(func() { w.deleteNode(t) })
	return w
}

// deleteNode removes the test's node, aborting an inspection left running.
func (w *realWorld) deleteNode(t *testing.T) {
	ctx := context.Background()
	n, err := w.client.GetNode(ctx, w.host.Name)
	if err != nil {
		return
	}
	if n.ProvisionState == ironic.StateInspectWait {
		_ = w.client.ChangeProvisionState(ctx, n.UUID, ironic.ActionAbort)
	}
	for i := 0; i < 40; i++ {
		if err = w.client.DeleteNode(ctx, n.UUID); err == nil {
			return
		}
		time.Sleep(250 * time.Millisecond) // a lock or a transition in flight
	}
	t.Logf("cleanup: node %s not deleted: %v", w.host.Name, err)
}

// timeline records the step timeline of one run, as Local reports it.
type timeline struct {
	mu     sync.Mutex
	start  time.Time
	events []flow.Event
	notes  []string
	box    *noteBox
}

func (tl *timeline) on(e flow.Event) {
	note := ""
	if e.Kind == "step" {
		note = tl.box.take()
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.events = append(tl.events, e)
	tl.notes = append(tl.notes, note)
}

func (tl *timeline) log(t *testing.T) {
	t.Helper()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for i, e := range tl.events {
		at := e.At.Sub(tl.start).Round(time.Millisecond)
		note := ""
		if tl.notes[i] != "" {
			note = "  [" + tl.notes[i] + "]"
		}
		switch {
		case e.Kind == "sleep":
			t.Logf("%9s  sleep %s", at, e.Took.Round(time.Millisecond))
		case e.Wait != nil:
			t.Logf("%9s  %-22s %-7s took %-8s %s after %s: %s%s", at, e.Step, e.Outcome, e.Took.Round(time.Millisecond), e.Wait.Reason, e.Wait.After, e.Wait.Detail, note)
		case e.Failure != nil:
			t.Logf("%9s  %-22s %-7s took %-8s %s: %s%s", at, e.Step, e.Outcome, e.Took.Round(time.Millisecond), e.Failure.Code, e.Failure.Error(), note)
		default:
			t.Logf("%9s  %-22s %-7s took %-8s%s", at, e.Step, e.Outcome, e.Took.Round(time.Millisecond), note)
		}
	}
}

func (tl *timeline) steps() []flow.Event {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]flow.Event(nil), tl.events...)
}

func (w *realWorld) enroll(ctx context.Context, p enrollment.Params) (enrollment.Result, *timeline, error) {
	tl := &timeline{start: time.Now(), box: &w.notes}
	w.notes.take()
	rt := &flow.Local{Steps: w.exec, Log: w.exec.Log, Clock: clock.Real{}, RoundTrip: true, Subject: w.host.Name, OnEvent: tl.on}
	res, err := enrollment.Enroll(ctx, rt, enrollment.NewRequest(w.host.Name, intent.ClassCPUBaremetal, "lab1", w.cfg, true, p))
	return res, tl, err
}

// ipaPayload is what IPA would post to ironic-inspector for the fake host:
// its inventory (NICs with raw LLDP naming the switch ports they are really
// cabled to) and the collectors' data (extra-hardware, PCI devices), which
// Ironic's inventory API later returns as plugin_data.
func ipaPayload(t *testing.T, h *fakes.Host) []byte {
	t.Helper()
	var doc struct {
		Inventory  map[string]any `json:"inventory"`
		PluginData map[string]any `json:"plugin_data"`
	}
	if err := json.Unmarshal(fakes.InventoryJSON(h), &doc); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"inventory": doc.Inventory, "boot_interface": strings.ToLower(h.NICs[0].MAC), "error": nil}
	for k, v := range doc.PluginData {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// feedInspector plays the ramdisk: once the node waits in inspect wait and
// ironic-inspector reports "waiting" for it, it posts the host's payload to
// /v1/continue. It returns a function that stops it and reports how many
// payloads were accepted.
func feedInspector(t *testing.T, c *adapter.Client, inspector string, h *fakes.Host) (stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	payload := ipaPayload(t, h)
	var wg sync.WaitGroup
	var mu sync.Mutex
	posted := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			n, err := c.GetNode(ctx, h.Name)
			if err != nil || n.ProvisionState != ironic.StateInspectWait || introspectionState(ctx, inspector, n.UUID) != "waiting" {
				continue
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, inspector+"/v1/continue", bytes.NewReader(payload))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				mu.Lock()
				posted++
				mu.Unlock()
				t.Logf("inspector: IPA payload for %s accepted", h.Name)
			} else {
				t.Logf("inspector: IPA payload for %s refused: %d %s", h.Name, resp.StatusCode, msg)
			}
		}
	}()
	return func() int {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return posted
	}
}

func introspectionState(ctx context.Context, inspector, uuid string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, inspector+"/v1/introspection/"+uuid, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var st struct {
		State string `json:"state"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&st) != nil {
		return ""
	}
	return st.State
}

// TestEnrollOneHostRealIronic enrols one host end to end: NetBox, DHCP, the
// BMC, the vault and the fleet manager are the fake site's, Ironic is real
// (fake-hardware, inspection through the real ironic-inspector fed the
// host's IPA payload). It must reach available, verified, tagged, with
// Ironic's node built as NetBox describes it.
func TestEnrollOneHostRealIronic(t *testing.T) {
	url, inspector := env(t, "HOSTFORGE_IRONIC_URL"), env(t, "HOSTFORGE_IRONIC_INSPECTOR_URL")
	w := newRealWorld(t, url, "inspector")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	stop := feedInspector(t, w.client, inspector, w.host)
	res, tl, err := w.enroll(ctx, enrollment.Params{})
	posted := stop()
	t.Logf("step timeline of %s (%s):", w.host.Name, time.Since(tl.start).Round(time.Millisecond))
	tl.log(t)
	if err != nil || !res.Enrolled || res.ProvisionState != ironic.StateAvailable {
		t.Fatalf("enrollment: %+v, %v", res, err)
	}
	if posted != 1 {
		t.Fatalf("the inspector accepted %d payloads, want exactly one inspection", posted)
	}
	for _, ph := range res.Phases {
		if ph.Status != "done" && ph.Status != "skipped" {
			t.Fatalf("phase %s: %s (%s)", ph.Phase, ph.Status, ph.Note)
		}
	}
	for _, step := range []string{enrollment.StepConfigureDHCP, enrollment.StepConfigureBMC, enrollment.StepIronicInspection, enrollment.StepIronicCleaning, enrollment.StepIronicFinalize, enrollment.StepTagDevice} {
		if !hasStep(tl.steps(), step, hostforge.Done) {
			t.Fatalf("the timeline has no finished %s step", step)
		}
	}

	// Ironic's node is what NetBox says.
	n, err := w.client.GetNode(ctx, w.host.Name)
	if err != nil {
		t.Fatal(err)
	}
	if res.Node != n.UUID || n.Driver != ironic.DriverFakeHardware || n.Interfaces["raid"] != "fake" || n.Interfaces["inspect"] != "inspector" {
		t.Fatalf("node %+v (result node %s)", n, res.Node)
	}
	// The fleet manager's projection lists the node under the device's name.
	listed, err := w.client.ListNodes(ctx)
	if err != nil {
		t.Fatalf("ListNodes: %v", err)
	}
	found := false
	for _, ln := range listed {
		found = found || ln.Name == w.host.Name && ln.UUID == n.UUID && ln.ProvisionState == ironic.StateAvailable
	}
	if !found {
		t.Fatalf("ListNodes (%d nodes) does not list %s as %s", len(listed), w.host.Name, n.UUID)
	}
	if n.Owner != "baremetal-enrol" || n.Lessee != "baremetal-enrol" || n.ResourceClass != "baremetal" || !n.HasTrait("HW_ARCH_X86_64") || n.Maintenance {
		t.Fatalf("node owner %q lessee %q resource_class %q traits %v maintenance %v", n.Owner, n.Lessee, n.ResourceClass, n.Traits, n.Maintenance)
	}
	cred, err := w.site.Vault.Item(ctx, enrollment.AdminItem(w.host.Name))
	if err != nil || n.DriverInfo["redfish_username"] != cred["username"] || n.DriverInfo["redfish_address"] != "https://"+w.host.OOBIP {
		t.Fatalf("driver_info %v: want the per-host credential (%v) and the BMC address", n.DriverInfo, err)
	}
	waitPowerOn(t, w.client, w.host.Name) // finalize leaves it powered on

	ports, err := w.client.ListPorts(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	pgs, err := w.client.ListPortgroups(ctx, n.UUID)
	if err != nil || len(pgs) != 1 || !strings.EqualFold(pgs[0].Address, w.host.NICs[0].MAC) || pgs[0].Mode != "802.3ad" {
		t.Fatalf("portgroups %+v, %v: want one 802.3ad bond on %s", pgs, err, w.host.NICs[0].MAC)
	}
	byMAC := map[string]ironic.Port{}
	pxe := 0
	for _, p := range ports {
		byMAC[strings.ToLower(p.Address)] = p
		if p.PXEEnabled {
			pxe++
		}
	}
	if pxe != 1 || !byMAC[strings.ToLower(w.host.NICs[0].MAC)].PXEEnabled {
		t.Fatalf("ports %+v: want PXE on exactly the first frontend NIC", ports)
	}
	for _, nic := range w.host.NICs {
		p, ok := byMAC[strings.ToLower(nic.MAC)]
		if !ok || p.PortgroupUUID != pgs[0].UUID || p.LocalLinkConnection["switch_info"] != nic.Switch || p.LocalLinkConnection["port_id"] != nic.Port {
			t.Fatalf("port of %s (%s): %+v, want in the bond, linked to %s %s", nic.Name, nic.MAC, p, nic.Switch, nic.Port)
		}
	}

	// The inventory Ironic keeps is the one the inspector was fed.
	inv, err := w.client.Inventory(ctx, n.UUID)
	if err != nil || !bytes.Contains(inv, []byte(strings.ToLower(w.host.NICs[1].MAC))) {
		t.Fatalf("inventory: %v (%d bytes)", err, len(inv))
	}
	dev, err := w.site.NetBox.Device(ctx, w.host.Name)
	if err != nil || dev.Status != intent.StatusActive || !dev.HasTag(intent.DefaultIronicTag) {
		t.Fatalf("NetBox device %+v, %v: want active and tagged %s", dev, err, intent.DefaultIronicTag)
	}

	// A rerun on the enrolled host: the prelude finds the node available
	// (enrolment-satisfied), and it stays so.
	res2, tl2, err := w.enroll(ctx, enrollment.Params{})
	t.Logf("rerun timeline (%s):", time.Since(tl2.start).Round(time.Millisecond))
	tl2.log(t)
	if err != nil || res2.ProvisionState != ironic.StateAvailable || res2.Node != n.UUID {
		t.Fatalf("rerun: %+v, %v", res2, err)
	}
}

// TestEnrollNodeLockedRealIronic holds a real node lock (the locking Ironic's
// fake power change holds it for 4 s): the Ironic phase answers with a
// node_locked wait at once instead of holding a worker, and the workflow
// backs off and converges once the lock clears.
func TestEnrollNodeLockedRealIronic(t *testing.T) {
	url := env(t, "HOSTFORGE_IRONIC_LOCKING_URL")
	w := newRealWorld(t, url, "fake")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	off := false
	noInspect := enrollment.Params{RunInspection: &off} // fake inspect stores no inventory

	// Enrol once, then hand the node back to manageable: a rerun has to
	// mutate it again (credentials, traits), which needs its lock.
	if res, tl, err := w.enroll(ctx, noInspect); err != nil {
		tl.log(t)
		t.Fatalf("first enrollment: %+v, %v", res, err)
	}
	n, err := w.client.GetNode(ctx, w.host.Name)
	if err != nil {
		t.Fatal(err)
	}
	retryLocked(t, func() error { return w.client.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage) })
	waitStable(t, w.client, w.host.Name, ironic.StateManageable)

	// One call of the phase while a power change holds the lock: a wait,
	// returned at once, naming the holder and the live provision state.
	holdLock(t, w.client, w.host.Name)
	{
		start := time.Now()
		_, err := w.phases.Inspection(ctx, ironic.InspectionIn{Spec: w.spec(t, ctx)})
		wt, ok := hostforge.AsWait(err)
		if !ok || wt.Reason != ironic.WaitNodeLocked {
			t.Fatalf("inspection under a held lock: %v, want a %s wait", err, ironic.WaitNodeLocked)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("the phase held on for %s under the lock, want an immediate wait", took)
		}
		if !strings.Contains(wt.Detail, "locked by host") || !strings.Contains(wt.Detail, "manageable") || strings.Contains(wt.Detail, "host unknown") {
			t.Fatalf("wait detail %q: want the lock holder and provision state", wt.Detail)
		}
		t.Logf("phase under the lock: %s after %s: %s", wt.Reason, wt.After, wt.Detail)
	}
	waitUnlocked(t, w.client, w.host.Name)

	// The whole workflow under a fresh lock: it waits, then converges.
	holdLock(t, w.client, w.host.Name)
	res, tl, err := w.enroll(ctx, noInspect)
	t.Logf("step timeline under the lock (%s):", time.Since(tl.start).Round(time.Millisecond))
	tl.log(t)
	if err != nil || res.ProvisionState != ironic.StateAvailable {
		t.Fatalf("enrollment under a lock: %+v, %v", res, err)
	}
	locked := false
	for _, e := range tl.steps() {
		if e.Kind == "step" && e.Outcome == hostforge.Waiting && e.Wait != nil && e.Wait.Reason == enrollment.WaitReasonNodeLocked {
			locked = true
		}
	}
	if !locked {
		t.Fatal("the timeline shows no node_locked wait: the lock was not seen")
	}
}

// spec is the node spec enrollment would hand the phases for the host.
func (w *realWorld) spec(t *testing.T, ctx context.Context) ironic.NodeSpec {
	t.Helper()
	s := ironic.NodeSpec{
		Name: w.host.Name, Driver: ironic.DriverFakeHardware,
		Interfaces: map[string]string{"inspect": "fake", "raid": "fake", "network": "noop"},
		BMCAddress: w.host.OOBIP, CredentialItem: fakes.AdminItem(w.host.Name), MonitoringItem: fakes.MonitoringItem, Project: w.cfg.EnrolProject, ResourceClass: "baremetal", CPUArch: "x86_64",
		Capabilities: map[string]string{"boot_mode": "uefi"},
		Bond:         &ironic.Bond{Mode: "802.3ad", Miimon: 100, XmitHashPolicy: "layer3+4"},
	}
	for _, nic := range w.host.NICs {
		s.NICs = append(s.NICs, ironic.NIC{Name: nic.Name, MAC: nic.MAC, Switch: nic.Switch, Port: nic.Port})
	}
	return s
}

func hasStep(events []flow.Event, step string, o hostforge.Outcome) bool {
	for _, e := range events {
		if e.Kind == "step" && e.Step == step && e.Outcome == o {
			return true
		}
	}
	return false
}

// holdLock starts a power change on the locking Ironic: its fake power
// driver holds the node's lock for 4 s.
func holdLock(t *testing.T, c *adapter.Client, name string) {
	t.Helper()
	n, err := c.GetNode(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	target := ironic.PowerOn
	if n.PowerState == ironic.PowerOn {
		target = ironic.PowerOff
	}
	if err := c.ChangePowerState(context.Background(), n.UUID, target); err != nil {
		t.Fatalf("%s to hold the lock: %v", target, err)
	}
}

func retryLocked(t *testing.T, fn func() error) {
	t.Helper()
	var err error
	for i := 0; i < 100; i++ {
		if err = fn(); !ironic.IsNodeLocked(err) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, c *adapter.Client, name, what string, ok func(ironic.Node) bool) ironic.Node {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := c.GetNode(context.Background(), name)
		if err == nil && ok(n) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s never %s: %+v, %v", name, what, n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitStable(t *testing.T, c *adapter.Client, name, state string) {
	t.Helper()
	waitFor(t, c, name, "reached "+state, func(n ironic.Node) bool {
		return n.ProvisionState == state && ironic.Stable(n) && n.Reservation == ""
	})
}

func waitUnlocked(t *testing.T, c *adapter.Client, name string) {
	t.Helper()
	waitFor(t, c, name, "unlocked", func(n ironic.Node) bool { return n.Reservation == "" && n.TargetPowerState == "" })
}

func waitPowerOn(t *testing.T, c *adapter.Client, name string) {
	t.Helper()
	waitFor(t, c, name, "powered on", func(n ironic.Node) bool { return n.PowerState == ironic.PowerOn })
}
