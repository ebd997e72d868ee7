//go:build integration

package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.uber.org/goleak"

	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// The integration tests talk to real servers through adapters whose HTTP
// clients keep idle keep-alive connections (the Ironic and NetBox adapters
// expose no way to close them); their read and write loops outlive the
// tests until the transports' idle timeouts.
func init() {
	leakOptions = append(leakOptions,
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}

// itEnv reads a variable scripts/integration exports: the test skips
// without it, and fails under HOSTFORGE_REQUIRE_INTEGRATION=1.
func itEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("HOSTFORGE_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("%s is unset: scripts/integration did not start its component", name)
		}
		t.Skipf("%s is unset; run scripts/integration", name)
	}
	return v
}

// realLab is a lab of one fresh host (a random name, so runs never share
// an Ironic node) against the real components scripts/integration starts:
// Temporal's dev server, OpenSSH's sshd as the DHCP server, Ironic and
// ironic-inspector; NetBox and the host's BMC are the emulators over HTTPS.
type realLab struct {
	*lab.Lab
	host     *fakes.Host
	temporal string
	queue    string
	ironic   *ironicapi.Client
}

func newRealLab(t *testing.T, vendor string, linksDown bool, timing func(*lab.Options)) *realLab {
	t.Helper()
	temporalAddr := itEnv(t, "HOSTFORGE_TEMPORAL_ADDRESS")
	ironicURL, inspectorURL := itEnv(t, "HOSTFORGE_IRONIC_URL"), itEnv(t, "HOSTFORGE_IRONIC_INSPECTOR_URL")
	sshd := sshdTarget(t)
	var b [3]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "it-" + vendor + "-" + suffix, Class: intent.ClassCPUBaremetal, Vendor: vendor})
	uniqueMACs(t, site, h, b)
	if linksDown {
		for i := range h.NICs {
			h.NICs[i].Link = "down"
		}
	}
	o := lab.Options{
		Dir: filepath.Join(t.TempDir(), "lab"), Site: site, SiteName: "it-" + suffix, IronicURL: ironicURL, InspectorURL: inspectorURL,
		SSH: sshd,
	}
	if timing != nil {
		timing(&o)
	}
	l, err := lab.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	c, err := ironicapi.New(context.Background(), ironicapi.Config{Endpoint: ironicURL})
	if err != nil {
		t.Fatal(err)
	}
	r := &realLab{Lab: l, host: h, temporal: temporalAddr, queue: "it-" + suffix, ironic: c}
	t.Cleanup(func() { r.deleteNode(t) })
	t.Cleanup(func() { deleteSchedules(t, temporalAddr, "it-"+suffix) })
	return r
}

// sshdTarget is the real sshd the integration run starts, as a lab's
// DHCP server: its address, user, client key and known_hosts.
func sshdTarget(t *testing.T) *lab.SSHTarget {
	t.Helper()
	key, err := os.ReadFile(itEnv(t, "HOSTFORGE_SSHD_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	known, err := os.ReadFile(itEnv(t, "HOSTFORGE_SSHD_KNOWN_HOSTS"))
	if err != nil {
		t.Fatal(err)
	}
	return &lab.SSHTarget{Addr: itEnv(t, "HOSTFORGE_SSHD_ADDR"), User: itEnv(t, "HOSTFORGE_SSHD_USER"), PrivateKey: string(key), KnownHosts: string(known)}
}

// uniqueMACs gives the host's frontend NICs MACs no other test's host has:
// the fake site numbers MACs by host, and Ironic refuses a port whose MAC
// another node holds (tests of several packages share one Ironic).
func uniqueMACs(t *testing.T, site *fakes.Site, h *fakes.Host, rnd [3]byte) {
	t.Helper()
	byName := map[string]string{}
	for i := range h.NICs {
		h.NICs[i].MAC = fmt.Sprintf("02:1c:%02x:%02x:%02x:%02x", rnd[0], rnd[1], rnd[2], i)
		byName[h.NICs[i].Name] = h.NICs[i].MAC
	}
	err := site.NetBox.Update(func(st *fakes.NetBoxState) error {
		d := st.DeviceByName(h.Name)
		for _, i := range st.DeviceInterfaces(d.ID) {
			if m, ok := byName[i.Name]; ok {
				i.MAC = m
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// deleteNode removes the test's Ironic node, aborting an inspection left
// waiting, in maintenance when its state refuses a delete.
func (r *realLab) deleteNode(t *testing.T) {
	ctx := context.Background()
	n, err := r.ironic.GetNode(ctx, r.host.Name)
	if err != nil {
		return
	}
	if n.ProvisionState == ironic.StateInspectWait {
		_ = r.ironic.ChangeProvisionState(ctx, n.UUID, ironic.ActionAbort)
	}
	for i := range 40 {
		if err = r.ironic.DeleteNode(ctx, n.UUID); err == nil {
			return
		}
		if i == 4 {
			// A node left in a state Ironic refuses to delete from
			// (inspect failed) is deleted in maintenance.
			_ = r.ironic.SetMaintenance(ctx, n.UUID, true, "hostforge test cleanup")
		}
		time.Sleep(250 * time.Millisecond) // a lock or a transition in flight
	}
	t.Logf("cleanup: node %s not deleted: %v", r.host.Name, err)
}

// deleteSchedules removes the schedules workers made for site on the
// shared dev server (default namespace).
func deleteSchedules(t *testing.T, addr, site string) {
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		t.Logf("deleting the schedules of %s: %v", site, err)
		return
	}
	defer c.Close()
	for _, p := range []string{temporal.PurposeProjection, temporal.PurposeExplore, temporal.PurposePass} {
		_ = c.ScheduleClient().GetHandle(context.Background(), temporal.ScheduleID(site, p)).Delete(context.Background())
	}
}

// process is the hostforge command line running as its own process (the
// test binary, see TestMain), its output collected.
type process struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error
}

func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	a, _ := json.Marshal(args)
	p := &process{cmd: exec.Command(os.Args[0], "-test.run=^$"), out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "HOSTFORGE_CLI_ARGS="+string(a))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		t.Logf("%s output:\n%s", args[0], p.out.String())
	})
	return p
}

// waitOutput waits until the process printed want.
func (p *process) waitOutput(t *testing.T, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(p.out.String(), want) {
		select {
		case <-p.done:
			t.Fatalf("the process ended (%v) before printing %q:\n%s", p.err, want, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %s:\n%s", want, within, p.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wait waits for the process to end and returns its exit code.
func (p *process) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("the process did not end within %s:\n%s", within, p.out.String())
	}
	if p.err == nil {
		return 0
	}
	if ee, ok := p.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatal(p.err)
	return -1
}

// worker starts 'hostforge worker' on the lab as its own process.
func (r *realLab) worker(t *testing.T) *process {
	t.Helper()
	w := startProcess(t, "worker", "--config", r.Config, "--temporal", r.temporal, "--task-queue", r.queue, "--log-level", "info", "--stop-timeout", "5s",
		"--metrics-listen", "127.0.0.1:0")
	w.waitOutput(t, "worker polling task queue "+r.queue, 60*time.Second)
	return w
}

// waitMetrics scrapes the worker's /metrics until it holds every line of
// want, and returns the last scrape.
func waitMetrics(t *testing.T, w *process, want ...string) string {
	t.Helper()
	addr := regexp.MustCompile(`metrics on (http://\S+/metrics)`).FindStringSubmatch(w.out.String())
	if addr == nil {
		t.Fatalf("the worker announced no metrics address:\n%s", w.out.String())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var body string
		if resp, err := http.Get(addr[1]); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		missing := ""
		for _, l := range want {
			if !strings.Contains(body, l+"\n") {
				missing = l
				break
			}
		}
		if missing == "" {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker's metrics lack %s:\n%s", missing, grepLines(body, "hostforge_"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// enrollJSONLines runs 'hostforge enroll' in-process and decodes its -o json.
func enrollJSONLines(t *testing.T, ctx context.Context, args ...string) ([]enrollJSON, result) {
	t.Helper()
	return jsonLines[enrollJSON](t, ctx, "enroll", args...)
}

// jsonLines runs 'hostforge COMMAND ARGS -o json' in-process and decodes
// each line it prints as a T.
func jsonLines[T any](t *testing.T, ctx context.Context, command string, args ...string) ([]T, result) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(ctx, append(append([]string{command}, args...), "-o", "json"), Streams{Out: &out, Err: &errb}, os.LookupEnv)
	r := result{out: out.String(), err: errb.String(), code: code}
	var lines []T
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		if l == "" {
			continue
		}
		var j T
		if err := json.Unmarshal([]byte(l), &j); err != nil {
			t.Fatalf("-o json line %q: %v\nstderr:\n%s", l, err, r.err)
		}
		lines = append(lines, j)
	}
	return lines, r
}

// TestWorkerEnrolsOneHostThroughTemporal: 'hostforge worker' (its own
// process, on the lab's config) and 'hostforge enroll --temporal' enrol one
// host end to end on real Temporal, sshd, Ironic and ironic-inspector,
// with NetBox and the BMC emulated over HTTPS; the worker stops cleanly on
// SIGINT.
func TestWorkerEnrolsOneHostThroughTemporal(t *testing.T) {
	r := newRealLab(t, "lenovo", false, nil)
	w := r.worker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	lines, res := enrollJSONLines(t, ctx, "--config", r.Config, "--temporal", r.temporal, "--task-queue", r.queue, r.host.Name)
	t.Logf("enroll --temporal took %s", time.Since(start).Round(time.Second))
	if res.code != ExitOK || len(lines) != 1 {
		t.Fatalf("exit %d:\n%s\n%s", res.code, res.out, res.err)
	}
	j := lines[0]
	if !j.Enrolled || j.ProvisionState != ironic.StateAvailable || j.WorkflowID != "enroll/"+r.host.Name || j.Node == "" {
		t.Fatalf("result %+v", j)
	}
	for _, ph := range []string{"configure_dhcp", "configure_bmc", "netbox_activation"} {
		if phaseStatusOf(j, ph) != "done" {
			t.Errorf("phase %s: %q, want done (%+v)", ph, phaseStatusOf(j, ph), j.Phases)
		}
	}
	// Every system holds what the enrollment did.
	n, err := r.ironic.GetNode(ctx, r.host.Name)
	if err != nil || n.UUID != j.Node || n.ProvisionState != ironic.StateAvailable || n.Driver != ironic.DriverFakeHardware {
		t.Fatalf("Ironic node %+v, %v", n, err)
	}
	if posted := r.Ramdisk().Posted(r.host.Name); posted != 1 {
		t.Errorf("the inspector was fed %d times, want one inspection", posted)
	}
	v, err := vault.Open(filepath.Join(r.Dir, lab.VaultFile))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := v.Item(ctx, enrollment.AdminItem(r.host.Name))
	factory, _ := v.Item(ctx, enrollment.DefaultFactoryItem)
	if err != nil || admin[bmc.FieldPassword] == "" || admin[bmc.FieldPassword] == factory[bmc.FieldPassword] {
		t.Errorf("the BMC phase left no rotated admin credential in the vault: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, lab.DHCPDir, "hostforge.d", r.host.Name+".conf")); err != nil || !bytes.Contains(b, []byte(r.host.OOBIP)) {
		t.Errorf("the DHCP server holds no reservation for %s: %v", r.host.Name, err)
	}
	if d, err := r.Site.NetBox.Device(ctx, r.host.Name); err != nil || d.Status != intent.StatusActive {
		t.Errorf("NetBox device %s: %q, %v", r.host.Name, d.Status, err)
	}
	// The enrollment's settlement ran on the worker (its close probe
	// through the worker's client): the ledger holds the platform class and
	// proof against the node the worker projected from Ironic.
	if j.Proof == nil || j.Proof.Action != enrollment.ProofEstablished || j.Proof.Reference != lab.IronicInstance+"/"+j.Node {
		t.Errorf("proof %+v, want established on %s/%s", j.Proof, lab.IronicInstance, j.Node)
	}
	sr := run(t, "", nil, "ledger", "show", "--config", r.Config, "-o", "json", r.host.Name)
	var rec ledgerShowJSON
	if err := json.Unmarshal([]byte(sr.out), &rec); err != nil {
		t.Fatalf("ledger show: %v\n%s%s", err, sr.out, sr.err)
	}
	if rec.ProofState != sqlstore.ProofStateValid || rec.Reference != lab.IronicInstance+"/"+j.Node || rec.PlatformClass != j.PlatformClass || rec.PlatformClass == "" {
		t.Errorf("ledger record %+v after the enrollment %+v", rec, j)
	}
	if strings.Contains(w.out.String(), admin[bmc.FieldPassword]) || strings.Contains(res.out+res.err, admin[bmc.FieldPassword]) {
		t.Error("the rotated password reached a log or the output")
	}
	// The worker counted the enrollment once, from the workflow under
	// Temporal: its run, its phases, its steps; no label names the host.
	body := waitMetrics(t, w,
		`hostforge_workflow_runs_started_total{workflow="enrollment"} 1`,
		`hostforge_workflow_runs_finished_total{code="",outcome="succeeded",owner="",workflow="enrollment"} 1`,
		`hostforge_phase_duration_seconds_count{phase="configure_bmc",status="done",workflow="enrollment"} 1`,
		`hostforge_phase_duration_seconds_count{phase="ironic.inspection",status="done",workflow="enrollment"} 1`,
		`hostforge_step_duration_seconds_count{outcome="done",step="configure_dhcp"} 1`)
	if strings.Contains(body, r.host.Name) {
		t.Errorf("the worker's metrics name the host:\n%s", grepLines(body, "hostforge_"))
	}

	// SIGINT stops the worker cleanly.
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(t, 30*time.Second); code != 0 || !strings.Contains(w.out.String(), "worker stopped") {
		t.Fatalf("the worker exited %d after SIGINT", code)
	}
}

func phaseStatusOf(j enrollJSON, phase string) string {
	for _, p := range j.Phases {
		if p.Phase == phase {
			return p.Status
		}
	}
	return ""
}

var downFor = regexp.MustCompile(`DOWN for ([0-9.]+m?[0-9.]*s) since power on`)

// TestLinkDownThroughRealWiring: a host whose BMC (the Redfish emulator)
// reports every frontend link DOWN ends, through the real wiring ('enroll
// --config', the Redfish link reader with the per-host credential the BMC
// phase rotated) and a real Ironic, as IRONIC_FRONTEND_LINK_DOWN within the
// configured link budget, naming its ports, owned by DC_OPS.
func TestLinkDownThroughRealWiring(t *testing.T) {
	const budget = 15 * time.Second
	r := newRealLab(t, "ami", true, func(o *lab.Options) {
		tm := lab.FastTiming()
		tm.LinkBudget = enrollment.Duration(budget)
		o.Timing = &tm
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	lines, res := enrollJSONLines(t, ctx, "--config", r.Config, "--log-level", "info", r.host.Name)
	took := time.Since(start)
	t.Logf("enroll took %s\n%s", took.Round(time.Second), res.err)
	if res.code != ExitOnSite || len(lines) != 1 || lines[0].Failure == nil {
		t.Fatalf("exit %d:\n%s\n%s", res.code, res.out, res.err)
	}
	f := lines[0].Failure
	if f.Code != ironic.LinkDown.Code || f.Owner != string(ironic.LinkDown.Owner) {
		t.Fatalf("failure %+v, want %s", f, ironic.LinkDown.Code)
	}
	for _, nic := range r.host.NICs {
		if want := nic.Name + " (" + nic.Switch + " " + nic.Port + ") DOWN"; !strings.Contains(f.Message, want) {
			t.Errorf("the failure does not name %q: %s", want, f.Message)
		}
	}
	m := downFor.FindStringSubmatch(f.Message)
	if m == nil {
		t.Fatalf("no duration in %q", f.Message)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil || d < budget || d > budget+10*time.Second {
		t.Errorf("failed after the links were DOWN for %s, want the %s budget (polled every second)", m[1], budget)
	}
	if posted := r.Ramdisk().Posted(r.host.Name); posted != 0 {
		t.Errorf("a host with no link posted %d inspections", posted)
	}
}

// TestWorkerKilledDuringBMCResetWait: the worker is SIGKILLed while the
// workflow waits (a durable timer) for the BMC to come back from the cold
// reset that applies its rotated password; a new worker finishes the run,
// and the BMC's admin password was changed exactly once.
func TestWorkerKilledDuringBMCResetWait(t *testing.T) {
	r := newRealLab(t, "lenovo", false, nil)
	emu := r.BMCs[r.host.Name].Emulator
	admin := accountPath(t, emu, "admin")
	before := len(emu.Requests())
	w := r.worker(t)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"enroll", "--config", r.Config, "--temporal", r.temporal, "--task-queue", r.queue, r.host.Name},
			Streams{Out: &out, Err: &errb}, os.LookupEnv)
	}()
	// Progress prints the wait as "bmc/configure_bmc: wait 15s (bmc_reset): ...".
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(out.String(), "("+bmcResetWait+")") {
		select {
		case code := <-done:
			t.Fatalf("enroll ended (%d) before the BMC reset wait:\n%s\n%s", code, out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s wait within 3 minutes:\n%s", bmcResetWait, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	w.wait(t, 10*time.Second)
	t.Logf("worker killed during the %s wait", bmcResetWait)
	r.worker(t) // a fresh worker picks the workflow up

	var code int
	select {
	case code = <-done:
	case <-time.After(6 * time.Minute):
		t.Fatalf("enroll did not finish after the restart:\n%s", out.String())
	}
	if code != ExitOK || !summaryHas(out.String(), r.host.Name, "enrolled") {
		t.Fatalf("exit %d after the worker restart:\n%s\n%s", code, out.String(), errb.String())
	}
	rotations := 0
	for _, req := range emu.Requests()[before:] {
		if req.Method == http.MethodPatch && req.Path == admin && req.Status/100 == 2 {
			rotations++
		}
	}
	if rotations != 1 {
		t.Fatalf("the admin password was changed %d times, want exactly one rotation", rotations)
	}
}

// bmcResetWait is the BMC phase's wait reason after a cold reset.
const bmcResetWait = "bmc_reset"

// accountPath is the emulator's account of user.
func accountPath(t *testing.T, emu *redfishemu.Emulator, user string) string {
	t.Helper()
	d := emu.Doc("/redfish/v1/AccountService/Accounts")
	ms, _ := d["Members"].([]any)
	for _, m := range ms {
		p, _ := m.(map[string]any)["@odata.id"].(string)
		p = strings.TrimSuffix(p, "/")
		if emu.Doc(p)["UserName"] == user {
			return p
		}
	}
	t.Fatalf("the emulator has no account %q", user)
	return ""
}

// 'hostforge worker -o json' prints one document once connected to the
// real Temporal, and nothing else on the standard output (docs/json.md).
func TestWorkerJSON(t *testing.T) {
	addr := itEnv(t, "HOSTFORGE_TEMPORAL_ADDRESS")
	var b [3]byte
	_, _ = rand.Read(b[:])
	site := "it-json-" + hex.EncodeToString(b[:])
	l, err := lab.Start(context.Background(), lab.Options{Dir: filepath.Join(t.TempDir(), "lab"), SiteName: site})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	t.Cleanup(func() { deleteSchedules(t, addr, site) })
	args := []string{"worker", "--config", l.Config, "--temporal", addr, "--task-queue", site, "--stop-timeout", "1s", "--log-level", "off", "-o", "json"}
	out := serveJSON(t, args...)
	checkJSONOutput(t, args, out)
	var doc workerJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Temporal != addr || doc.TaskQueue != site || doc.Site != site {
		t.Errorf("worker -o json: %s (%v)", out, err)
	}
}
