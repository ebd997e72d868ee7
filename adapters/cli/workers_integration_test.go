//go:build integration

package cli

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// listCounter is a reverse proxy in front of the real Ironic that counts
// the node list calls (the projection, the exploration and the pass each
// list the nodes once per run; nothing else lists them).
type listCounter struct {
	proxy *httputil.ReverseProxy
	mu    sync.Mutex
	lists int
}

func (l *listCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && (r.URL.Path == "/v1/nodes" || r.URL.Path == "/v1/nodes/detail") {
		l.mu.Lock()
		l.lists++
		l.mu.Unlock()
	}
	l.proxy.ServeHTTP(w, r)
}

func (l *listCounter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lists
}

// freshNamespace registers a namespace of the test's own on the shared dev
// server and returns it once it answers.
func freshNamespace(t *testing.T, addr, prefix string) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	ns := prefix + hex.EncodeToString(b[:])
	nc, err := client.NewNamespaceClient(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := nc.Describe(ctx, ns); err == nil {
			return ns
		}
		if ctx.Err() != nil {
			t.Fatalf("namespace %s never answered", ns)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rackHost is one host of the three-worker test and how it must end.
type rackHost struct {
	spec fakes.HostSpec
	// want is "available" or the failure code the outcome table gives.
	want     string
	firmware bool
}

// TestThreeWorkersOneKilled: three 'hostforge worker' processes on one
// Temporal namespace and one PostgreSQL database enrol a rack on the real
// Ironic, ironic-inspector and sshd (NetBox and the BMCs emulated over
// HTTPS), fire a signed webhook extension for each enrolled host, and
// bring the Dell hosts' BIOS to the catalog's version over Redfish; one
// worker is SIGKILLed mid-run and replaced. Every host ends as the outcome
// table says; each BMC password was rotated once, each firmware image
// pushed once, each extension task delivered once; the site's schedules —
// projection, exploration, pass, every 2 s — ran once per interval in
// total, as the Ironic list calls and the schedules' own counts show, not
// once per worker.
func TestThreeWorkersOneKilled(t *testing.T) {
	temporalAddr := itEnv(t, "HOSTFORGE_TEMPORAL_ADDRESS")
	ironicURL, inspectorURL := itEnv(t, "HOSTFORGE_IRONIC_URL"), itEnv(t, "HOSTFORGE_IRONIC_INSPECTOR_URL")
	sshd := sshdTarget(t)
	dsn := freshPostgres(t)
	ns := freshNamespace(t, temporalAddr, "it-workers-")
	start := time.Now()
	var rb [3]byte
	_, _ = rand.Read(rb[:])
	suffix := hex.EncodeToString(rb[:])
	siteName := "it-workers-" + suffix

	// The rack and its outcome table.
	hosts := []*rackHost{
		{spec: fakes.HostSpec{Name: "w3-dell-a-" + suffix, Class: intent.ClassCPUBaremetal, Vendor: "dell"}, want: ironic.StateAvailable, firmware: true},
		{spec: fakes.HostSpec{Name: "w3-dell-b-" + suffix, Class: intent.ClassCPUBaremetal, Vendor: "dell"}, want: ironic.StateAvailable, firmware: true},
		{spec: fakes.HostSpec{Name: "w3-lenovo-" + suffix, Class: intent.ClassCPUBaremetal, Vendor: "lenovo"}, want: ironic.StateAvailable},
		{spec: fakes.HostSpec{Name: "w3-optics-" + suffix, Class: intent.ClassCPUBaremetal, Vendor: "ami"}, want: ironic.LinkDown.Code},
		{spec: fakes.HostSpec{Name: "w3-offline-" + suffix, Class: intent.ClassCPUBaremetal, Vendor: "lenovo", Status: intent.StatusOffline}, want: enrollment.StatusIneligible.Code},
	}
	site := fakes.NewSite()
	byName := map[string]*rackHost{}
	var names []string
	for i, rh := range hosts {
		h := site.AddHost(rh.spec)
		uniqueMACs(t, site, h, [3]byte{rb[0], rb[1], rb[2] + byte(16*i)})
		if rh.want == ironic.LinkDown.Code {
			for j := range h.NICs {
				h.NICs[j].Link = "down"
			}
		}
		byName[rh.spec.Name] = rh
		names = append(names, rh.spec.Name)
	}
	l, err := lab.Start(context.Background(), lab.Options{
		Dir: filepath.Join(t.TempDir(), "lab"), Site: site, SiteName: siteName, IronicURL: ironicURL, InspectorURL: inspectorURL,
		SSH: sshd,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	ic, err := ironicapi.New(context.Background(), ironicapi.Config{Endpoint: ironicURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range names {
			(&realLab{ironic: ic, host: &fakes.Host{Name: n}}).deleteNode(t)
		}
	})

	// The workers reach Ironic through the counting proxy.
	target, _ := url.Parse(ironicURL)
	lists := &listCounter{proxy: httputil.NewSingleHostReverseProxy(target)}
	proxy := httptest.NewServer(lists)
	t.Cleanup(proxy.Close)

	// The webhook extension: one signed delivery per enrolled host.
	hookKey, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	recv := &signedReceiver{key: hookKey}
	hook := httptest.NewServer(recv)
	t.Cleanup(hook.Close)
	defs := t.TempDir()
	writeFW(t, filepath.Join(defs, "registration.json"), `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "registration", "label": "registration", "extensionType": "workflow",
 "vendor": "hostforge", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "configVars": [], "assets": [],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [
   {"label": "hook", "taskType": "ExtensionTaskWebhook", "failurePolicy": "continue",
    "options": {"endpoint": "`+hook.URL+`/enrolled", "method": "POST", "signingSecret": "extension-hook", "retries": 2,
      "requestTemplate": "{\"device\": {{ server.netboxDevice | dump }}, \"node\": {{ server.ironicNode | dump }}}"}}]}]}`)
	v, err := vault.Open(filepath.Join(l.Dir, lab.VaultFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.PutItem(context.Background(), "extension-hook", map[string]string{"password": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}); err != nil {
		t.Fatal(err)
	}

	// The firmware catalog: the Dell hosts' BIOS 1.8.2 → 1.13.2 over Redfish.
	dir := t.TempDir()
	image := filepath.Join(dir, "poweredge-r750-bios.exe")
	writeFW(t, image, "image of poweredge-r750-bios.exe")
	sum := sha256.Sum256([]byte("image of poweredge-r750-bios.exe"))
	catFile := filepath.Join(dir, "catalog.toml")
	writeFW(t, catFile, fmt.Sprintf(`
[host_models.r750]
vendor = "Dell"
model = "PowerEdge R750"
ordering = ["uefi"]
[host_models.r750.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
[[host_models.r750.components.uefi.known_firmware]]
version = "1.13.2"
default = true
files = [ { filename = %q, sha256 = %q } ]
`, image, hex.EncodeToString(sum[:])))
	dsnFile := filepath.Join(dir, "state.dsn")
	writeFW(t, dsnFile, dsn)

	// lab.yaml on the proxy, the ledger on PostgreSQL, firmware and
	// extensions added.
	raw, err := os.ReadFile(l.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(raw)
	cfg = strings.Replace(cfg, "url: "+ironicURL, "url: "+proxy.URL, 1)
	cfg = cfg[:strings.Index(cfg, "\nledger:")+1] + fmt.Sprintf(`ledger: {driver: postgres, dsn_file: %s, projection_interval: 2s}
firmware:
  catalog: [%s]
  artifact_cache: %s
  explore_interval: 2s
  settings:
    autoupdate: true
    max_concurrent_machine_updates_absolute: 20
    max_uploads: 2
    machine_update_run_interval: 2s
    task_poll: 1s
    inventory_poll: 1s
    recheck: 1s
    new_firmware_wait: 30s
    host_firmware_upgrade_retry_interval: 10s
    max_retries: 2
extensions:
  definitions: %s
`, dsnFile, catFile, filepath.Join(dir, "cache"), defs)
	writeFW(t, l.Config, cfg)

	// BMC accounts before anything runs, to count the rotations.
	admins := map[string]string{}
	before := map[string]int{}
	for _, n := range names {
		if b, ok := l.BMCs[n]; ok {
			admins[n] = accountPath(t, b.Emulator, fakes.FakeFactoryUser)
			before[n] = len(b.Emulator.Requests())
		}
	}

	queue := "it-workers-" + suffix
	worker := func() *process {
		w := startProcess(t, "worker", "--config", l.Config, "--temporal", temporalAddr, "--namespace", ns, "--task-queue", queue,
			"--log-level", "warn", "--stop-timeout", "5s", "--heartbeat-timeout", "10s")
		w.waitOutput(t, "worker polling task queue "+queue, 60*time.Second)
		return w
	}
	workers := []*process{worker(), worker(), worker()}
	for _, w := range workers[1:] {
		for _, p := range []string{temporal.PurposeProjection, temporal.PurposeExplore, temporal.PurposePass} {
			if id := temporal.ScheduleID(siteName, p); !strings.Contains(w.out.String(), "schedule "+id+" unchanged") {
				t.Fatalf("a later worker did not find %s as it wanted it:\n%s", id, w.out.String())
			}
		}
	}
	schedStart := time.Now()

	// Enrol the rack through the workers; kill one of them once the rack
	// is under way (its steps in flight are rerun by the others).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	type enrolled struct {
		lines []enrollJSON
		res   result
	}
	done := make(chan enrolled, 1)
	go func() {
		lines, res := enrollJSONLines(t, ctx, append([]string{"--config", l.Config, "--temporal", temporalAddr, "--namespace", ns, "--task-queue", queue}, names...)...)
		done <- enrolled{lines, res}
	}()
	time.Sleep(15 * time.Second)
	if err := workers[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	workers[0].wait(t, 10*time.Second)
	t.Logf("worker 1 SIGKILLed %s after the submission", 15*time.Second)
	workers[0] = worker() // its replacement: the schedules stay as they are
	var e enrolled
	select {
	case e = <-done:
	case <-ctx.Done():
		t.Fatal("the enrollments did not finish in 4 minutes")
	}
	outcome := map[string]enrollJSON{}
	for _, j := range e.lines {
		outcome[j.Device] = j
	}
	for _, n := range names {
		j, ok := outcome[n]
		got := ""
		switch {
		case !ok:
		case j.Failure != nil:
			got = j.Failure.Code
		case j.Enrolled:
			got = j.ProvisionState
		}
		if got != byName[n].want {
			t.Errorf("%s ended %q, the outcome table says %q (%+v)", n, got, byName[n].want, j)
		}
	}
	if t.Failed() {
		t.Fatalf("enroll exited %d:\n%s\n%s", e.res.code, e.res.out, e.res.err)
	}
	t.Logf("the rack enrolled in %s", time.Since(start).Round(time.Second))

	// The Dell hosts' BIOS gets its firmware inventory now (a model the
	// catalog knows, an image the BMC takes): the next exploration sees
	// the drift, the pass starts their updates.
	fbs := map[string]*fakes.FirmwareBMC{}
	for _, n := range names {
		if !byName[n].firmware {
			continue
		}
		emu := l.BMCs[n].Emulator
		if err := emu.SetProperties("/redfish/v1/Systems/System.Embedded.1", map[string]any{"Model": "PowerEdge R750"}); err != nil {
			t.Fatal(err)
		}
		fb, err := emu.EnableFirmware(redfishemu.FirmwareOptions{Members: []fakes.FirmwareMember{{ID: itBIOS, Name: "BIOS", Version: "1.8.2", State: "Enabled"}}})
		if err != nil {
			t.Fatal(err)
		}
		fb.AddImage(filepath.Base(image), fakes.FirmwareImage{Targets: []string{itBIOS}, Version: "1.13.2", Activation: fakes.ActivateHostReboot, TaskTime: 300 * time.Millisecond})
		fbs[n] = fb
	}
	db, err := sqlstore.Open(ctx, sqlstore.Postgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := sqlstore.NewFirmwareStore(db)
	for {
		done := 0
		for _, n := range names {
			if !byName[n].firmware {
				continue
			}
			_, pending, _ := store.Request(ctx, n)
			node, err := ic.GetNode(ctx, n)
			if !pending && fbs[n].Version(itBIOS) == "1.13.2" && err == nil && !node.Maintenance {
				done++
			}
		}
		if done == 2 {
			break
		}
		if ctx.Err() != nil {
			reqs, _ := store.Requests(context.Background())
			ups, _ := store.Updates(context.Background())
			t.Fatalf("the Dell hosts are not compliant: requests %+v\nupdates %+v", reqs, ups)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("firmware compliant %s after the start", time.Since(start).Round(time.Second))

	// The counts, read while every worker still polls.
	c, err := temporal.Dial(context.Background(), temporalAddr, ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	actions := map[string]int{}
	for _, p := range []string{temporal.PurposeProjection, temporal.PurposeExplore, temporal.PurposePass} {
		d, err := c.ScheduleClient().GetHandle(context.Background(), temporal.ScheduleID(siteName, p)).Describe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		actions[p] = d.Info.NumActions
	}
	listed := lists.count()
	elapsed := time.Since(schedStart)
	perInterval := int(elapsed/(2*time.Second)) + 1

	// Every host's side effects, once each.
	// Deliveries per device (the body names it), and each delivery ID
	// received once.
	hookIDs, bodies := recv.got()
	deliveries, seen := map[string]int{}, map[string]int{}
	for i, id := range hookIDs {
		seen[id]++
		var b struct {
			Device string `json:"device"`
		}
		if err := json.Unmarshal(bodies[i], &b); err != nil {
			t.Errorf("delivery %s: body %s: %v", id, bodies[i], err)
		}
		deliveries[b.Device]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %s received %d times", id, n)
		}
	}
	ups, _ := store.Updates(context.Background())
	fwRuns := map[string]int{}
	for _, n := range names {
		it, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = %q", temporal.FirmwareWorkflowID(n))})
		if err != nil {
			t.Fatal(err)
		}
		fwRuns[n] = len(it.GetExecutions())
	}
	var table []string
	for _, n := range names {
		rh := byName[n]
		rotations, pushes := 0, 0
		if b, ok := l.BMCs[n]; ok {
			for _, req := range b.Emulator.Requests()[before[n]:] {
				if req.Method == http.MethodPatch && req.Path == admins[n] && req.Status/100 == 2 {
					rotations++
				}
			}
			pushes = b.Emulator.Pushes()
		}
		hooks := deliveries[n]
		table = append(table, fmt.Sprintf("%-24s %-28s rotations %d  pushes %d  firmware runs %d  webhook deliveries %d", n, rh.want, rotations, pushes, fwRuns[n], hooks))
		wantRot, wantPush, wantHook := 0, 0, 0
		if rh.want == ironic.StateAvailable || rh.want == ironic.LinkDown.Code {
			wantRot = 1 // the BMC phase ran before the link guard failed
		}
		if rh.firmware {
			wantPush = 1
		}
		if rh.want == ironic.StateAvailable {
			wantHook = 1
		}
		if rotations != wantRot || pushes != wantPush || hooks != wantHook || (rh.firmware && fwRuns[n] != 1) {
			t.Errorf("%s: %d rotations, %d pushes, %d firmware runs, %d deliveries; want %d, %d, %d, %d", n, rotations, pushes, fwRuns[n], hooks, wantRot, wantPush, b2i(rh.firmware), wantHook)
		}
	}
	if len(hookIDs) != len(deliveries) {
		t.Errorf("the receiver got %d deliveries of %d IDs: one was delivered twice", len(hookIDs), len(deliveries))
	}
	for _, u := range ups {
		if byName[u.MachineID] != nil && u.RetryCount != 0 {
			t.Errorf("the update of %s retried %d times", u.MachineID, u.RetryCount)
		}
	}
	runs := actions[temporal.PurposeProjection] + actions[temporal.PurposeExplore] + actions[temporal.PurposePass]
	t.Logf("outcome and side effects per host:\n  %s", strings.Join(table, "\n  "))
	t.Logf("schedules over %s (every 2 s, so at most %d runs each): projection %d, exploration %d, pass %d runs; Ironic node lists %d (one per run: %d runs; once per worker would be about %d)",
		elapsed.Round(time.Second), perInterval, actions[temporal.PurposeProjection], actions[temporal.PurposeExplore], actions[temporal.PurposePass],
		listed, runs, 3*runs)
	for p, n := range actions {
		if n > perInterval+1 || n < perInterval/2 {
			t.Errorf("schedule %s ran %d times in %s at 2 s; want once per interval in total (at most %d)", p, n, elapsed.Round(time.Second), perInterval+1)
		}
	}
	// Each run lists the nodes once; a run in flight, or rerun after the
	// kill, moves the count by a few.
	if listed < runs-6 || listed > runs+6 {
		t.Errorf("Ironic was listed %d times for %d schedule runs", listed, runs)
	}
	ids := scheduleList(t, temporalAddr, ns)
	sort.Strings(ids)
	want := []string{temporal.ScheduleID(siteName, temporal.PurposeExplore), temporal.ScheduleID(siteName, temporal.PurposePass), temporal.ScheduleID(siteName, temporal.PurposeProjection)}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("temporal schedule list shows %v, want %v", ids, want)
	}
	for _, p := range []string{temporal.PurposeProjection, temporal.PurposeExplore, temporal.PurposePass} {
		_ = c.ScheduleClient().GetHandle(context.Background(), temporal.ScheduleID(siteName, p)).Delete(context.Background())
	}
	t.Logf("the whole test took %s", time.Since(start).Round(time.Second))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scheduleList runs 'temporal schedule list' on the namespace and returns
// the schedule IDs it shows (visibility is eventually consistent: it waits
// up to 30 s for three).
func scheduleList(t *testing.T, addr, ns string) []string {
	t.Helper()
	cli := itEnv(t, "HOSTFORGE_TEMPORAL_CLI")
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command(cli, "schedule", "list", "--address", addr, "--namespace", ns, "-o", "json").Output()
		if err != nil {
			t.Fatalf("temporal schedule list: %v", err)
		}
		m := regexp.MustCompile(`"scheduleId":\s*"([^"]+)"`).FindAllStringSubmatch(string(out), -1)
		if len(m) >= 3 || time.Now().After(deadline) {
			var ids []string
			for _, x := range m {
				ids = append(ids, x[1])
			}
			t.Logf("temporal schedule list --namespace %s: %v", ns, ids)
			return ids
		}
		time.Sleep(time.Second)
	}
}
