package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
)

func init() {
	// The SDK's test environment keeps process-wide helpers alive.
	leakOptions = append(leakOptions,
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*sharedWorkerStopChannel)"))
}

// leakyDevices are the demo hosts the leaky rack breaks, in the order a
// sequential run reaches them.
var leakyDevices = []string{"gpu-r1-u06", "cpu-r1-u10", "cpu-r1-u11", "gpu-r1-u02"}

// leakyRack is the demo rack with systems that echo secrets back:
//
//	gpu-r1-u06  the BMC refuses the shared IPMI monitoring password and echoes it
//	cpu-r1-u10  factory-reset; the BMC refuses the rotated admin password and echoes it
//	cpu-r1-u11  Ironic refuses the node and echoes its driver_info, password included
//	gpu-r1-u02  factory-reset; the answer to the password change is lost, and a busy
//	            answer quotes the factory credential
func leakyRack() *fakes.Site {
	site := enrolltest.DemoRack()
	b := func(host string) *fakes.FakeBMC {
		m, ok := site.BMCs.Of(host)
		if !ok {
			panic("no BMC for " + host)
		}
		return m
	}
	b("gpu-r1-u06").RefusePasswords(1)
	b("cpu-r1-u10").FactoryReset()
	b("cpu-r1-u10").RefusePasswords(1)
	b("gpu-r1-u02").FactoryReset()
	b("gpu-r1-u02").LoseAnswers("set_password", 1)
	b("gpu-r1-u02").Busy(1, "Service busy: session admin:"+fakes.FakeFactoryPassword+" holds the lock")
	admin, err := site.Vault.Item(context.Background(), fakes.AdminItem("cpu-r1-u11"))
	if err != nil {
		panic(err)
	}
	site.Inject(fakes.SysIronic, "create_node", 1, fmt.Errorf(`Invalid driver_info: {'redfish_username': %q, 'redfish_password': %q, 'redfish_address': 'https://10.10.0.4'}: %w`,
		admin[bmc.FieldUsername], admin[bmc.FieldPassword], hostforge.ErrInvalid))
	return site
}

// vaultSecrets are every secret value the site's vault holds at the end of
// a run: factory, monitoring, per-host and pending passwords.
func vaultSecrets(t *testing.T, site *fakes.Site) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, name := range site.Vault.Names() {
		it, err := site.Vault.Item(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range it {
			if hostforge.SecretField(k) && v != "" {
				seen[v] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// artifacts are what a run leaves for people and systems to read, by kind.
type artifacts map[string]*strings.Builder

func (a artifacts) add(kind, text string) {
	if a[kind] == nil {
		a[kind] = &strings.Builder{}
	}
	a[kind].WriteString(text)
	a[kind].WriteString("\n")
}

// leaks lists "kind: value" for every secret value, in any of the forms it
// travels in (hostforge.Variants), in any case, found in an artifact.
func leaks(a artifacts, values []string) []string {
	var out []string
	for kind, b := range a {
		text := strings.ToLower(b.String())
		for _, v := range values {
			for _, form := range hostforge.Variants(v) {
				if strings.Contains(text, strings.ToLower(form)) {
					out = append(out, fmt.Sprintf("%s: %q", kind, v))
					break
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// runLocal enrols the leaky devices inline, the way the CLI's demo wires
// them, and records the logs, every Failure's JSON, err.Error() and the
// events. secrets nil runs without the scrubber, to show what leaks then.
func runLocal(t *testing.T, secrets *hostforge.Secrets) (*fakes.Site, artifacts) {
	t.Helper()
	a := artifacts{}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if secrets != nil {
		log = slog.New(secrets.Handler(log.Handler()))
	}
	site := leakyRack()
	exec := enrolltest.Executor(site, log)
	scrubDemo(exec, site, secrets)
	cfg := demoSiteConfig(exec)
	for _, d := range leakyDevices {
		dev, err := site.NetBox.Device(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		rt := exec.Local(site.Clock)
		rt.RoundTrip, rt.Subject = true, d
		rt.OnEvent = func(e flow.Event) {
			b, _ := json.Marshal(e)
			a.add("events", string(b))
		}
		res, err := enrollment.Enroll(context.Background(), rt, enrollment.NewRequest(d, dev.Role.DeviceClass, demoSite, cfg, true, enrollment.Params{MaxAttemptsOverride: 3}))
		if err != nil {
			a.add("err.Error()", err.Error())
		}
		if res.Failure != nil {
			b, _ := json.Marshal(res.Failure)
			a.add("Failure JSON", string(b))
		}
		b, _ := json.Marshal(res)
		a.add("Result JSON", string(b))
	}
	a.add("logs", logs.String())
	return site, a
}

// recordingConverter keeps every payload Temporal would store.
type recordingConverter struct {
	converter.DataConverter
	mu       sync.Mutex
	payloads []string
}

func (r *recordingConverter) keep(ps ...*commonpb.Payload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range ps {
		r.payloads = append(r.payloads, string(p.GetData()))
	}
}

func (r *recordingConverter) ToPayload(v any) (*commonpb.Payload, error) {
	p, err := r.DataConverter.ToPayload(v)
	if p != nil {
		r.keep(p)
	}
	return p, err
}

func (r *recordingConverter) ToPayloads(vs ...any) (*commonpb.Payloads, error) {
	ps, err := r.DataConverter.ToPayloads(vs...)
	if ps != nil {
		r.keep(ps.GetPayloads()...)
	}
	return ps, err
}

// runTemporal enrols the leaky devices under the SDK's test environment
// and records what the history keeps: every payload (inputs, results, the
// Failure details of errors), every activity's error message and the
// workflows' errors and results.
func runTemporal(t *testing.T, secrets *hostforge.Secrets) (*fakes.Site, artifacts) {
	t.Helper()
	a := artifacts{}
	var sdkLogs bytes.Buffer
	site := leakyRack()
	exec := enrolltest.Executor(site, slog.New(slog.DiscardHandler))
	scrubDemo(exec, site, secrets)
	cfg := demoSiteConfig(exec)
	for _, d := range leakyDevices {
		dev, err := site.NetBox.Device(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		var s testsuite.WorkflowTestSuite
		// The worker's own log (the SDK logs every activity error).
		s.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewJSONHandler(&sdkLogs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		env := s.NewTestWorkflowEnvironment()
		rec := &recordingConverter{DataConverter: converter.GetDefaultDataConverter()}
		env.SetDataConverter(rec)
		env.SetStartTime(site.Clock.Now())
		env.SetTestTimeout(time.Minute)
		// The fakes' time follows the workflow's sleeps: its timers, and
		// the sleeps its steps carry.
		env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { site.Clock.Advance(d) })
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
			if d, ok := temporal.DeferredSleep(info, args); ok {
				site.Clock.Advance(d)
			}
		})
		env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, err error) {
			if err != nil {
				a.add("activity errors", info.ActivityType.Name+": "+err.Error())
			}
		})
		temporal.Register(env, &temporal.Activities{Exec: exec, Secrets: secrets}, temporal.ActivityOptions{}, temporal.Enrollment)
		req := enrollment.NewRequest(d, dev.Role.DeviceClass, demoSite, cfg, true, enrollment.Params{MaxAttemptsOverride: 3})
		env.ExecuteWorkflow(temporal.WorkflowName, temporal.Input{Request: req, Identity: "id-" + d})
		if !env.IsWorkflowCompleted() {
			t.Fatalf("%s: workflow did not complete", d)
		}
		if err := env.GetWorkflowError(); err != nil {
			a.add("workflow error", err.Error())
			if f := temporal.FailureOf(err); f != nil {
				b, _ := json.Marshal(f)
				a.add("Failure JSON", string(b))
			}
		}
		rec.mu.Lock()
		a.add("history payloads", strings.Join(rec.payloads, "\n"))
		rec.mu.Unlock()
	}
	a.add("Temporal SDK logs", sdkLogs.String())
	return site, a
}

// runCLI runs 'enroll --demo' on the leaky rack, -o json and text, with
// debug logs, and records both streams.
func runCLI(t *testing.T) (*fakes.Site, artifacts) {
	t.Helper()
	a := artifacts{}
	var sites []*fakes.Site
	saved := newDemoSite
	newDemoSite = func() *fakes.Site { s := leakyRack(); sites = append(sites, s); return s }
	t.Cleanup(func() { newDemoSite = saved })
	for _, format := range []string{"json", "text"} {
		args := append([]string{"enroll", "--demo", "--log-level", "debug", "--max-attempts", "3", "-o", format}, leakyDevices...)
		r := run(t, "", nil, args...)
		a.add("CLI -o "+format, r.out)
		a.add("CLI logs", r.err)
		if format == "json" && strings.Count(r.out, "\n") != len(leakyDevices) {
			t.Fatalf("-o json printed %d lines for %d devices:\n%s", strings.Count(r.out, "\n"), len(leakyDevices), r.out)
		}
	}
	return sites[len(sites)-1], a
}

// TestNoSecretLeavesARun enrols a rack whose systems echo secrets back — a
// BMC that echoes the admin password it refused, one that echoes the
// shared IPMI monitoring password, an Ironic that echoes driver_info, a
// lost answer to a password change and a busy answer quoting the factory
// credential — inline, through the CLI and under the Temporal test
// environment, then scans the logs, every Failure's JSON, err.Error(), the
// CLI's -o json and text output and the recorded Temporal history for
// every secret the vault holds. Its "extensions" part does the same for
// an extension run whose tasks receive secrets and whose receivers echo
// them (noSecretLeavesAnExtensionRun).
func TestNoSecretLeavesARun(t *testing.T) {
	t.Run("extensions", noSecretLeavesAnExtensionRun)
	runs := []struct {
		name string
		run  func(t *testing.T) (*fakes.Site, artifacts)
	}{
		{"local", func(t *testing.T) (*fakes.Site, artifacts) { return runLocal(t, hostforge.NewSecrets()) }},
		{"CLI", runCLI},
		{"Temporal", func(t *testing.T) (*fakes.Site, artifacts) { return runTemporal(t, hostforge.NewSecrets()) }},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			site, a := r.run(t)
			values := vaultSecrets(t, site)
			if len(values) < 4 {
				t.Fatalf("the vault holds %d secrets; the run did not exercise the rack", len(values))
			}
			if l := leaks(a, values); len(l) > 0 {
				t.Fatalf("secrets left the run:\n%s", strings.Join(l, "\n"))
			}
			// The faults did happen, and their reasons reached the operator.
			all := ""
			for _, b := range a {
				all += b.String()
			}
			for _, want := range []string{"BMC_WRITE_REJECTED", "PropertyValueFormatError", "Invalid driver_info", hostforge.Redacted} {
				if !strings.Contains(all, want) {
					t.Errorf("the run's output never says %q", want)
				}
			}
		})
	}
}

// Without the process's scrubber the same faults do leak — the echoes are
// real — and the scan finds them, in whichever artifact a secret is
// planted.
func TestTheSecretScanFindsWhatLeaks(t *testing.T) {
	t.Run("extensions", extensionScanFindsWhatLeaks)
	t.Run("no scrubber: the echoes leak", func(t *testing.T) {
		for name, run := range map[string]func(*testing.T, *hostforge.Secrets) (*fakes.Site, artifacts){"local": runLocal, "Temporal": runTemporal} {
			site, a := run(t, nil)
			l := leaks(a, vaultSecrets(t, site))
			if len(l) == 0 {
				t.Fatalf("%s: an unscrubbed run leaked nothing: the faults do not echo, so the clean run proves nothing", name)
			}
			t.Logf("%s without the scrubber leaks: %v", name, l)
		}
	})
	t.Run("planted", func(t *testing.T) {
		site, a := runLocal(t, hostforge.NewSecrets())
		values := vaultSecrets(t, site)
		monitoring := values[0]
		for _, v := range values {
			if strings.Contains(v, "ipmi") {
				monitoring = v
			}
		}
		for _, kind := range []string{"logs", "Failure JSON", "err.Error()", "events", "CLI -o json", "CLI logs", "history payloads", "activity errors", "Temporal SDK logs"} {
			for _, form := range []func(string) string{
				func(v string) string { return v },
				func(v string) string {
					b, _ := json.Marshal(map[string]string{"m": "the value " + v})
					return string(b)
				},
			} {
				planted := artifacts{}
				for k, b := range a {
					planted.add(k, b.String())
				}
				planted.add(kind, "BMC answered HTTP 400: "+form(monitoring))
				if l := leaks(planted, values); len(l) != 1 || !strings.HasPrefix(l[0], kind+":") {
					t.Errorf("a secret planted in %s was not found: %v", kind, l)
				}
			}
		}
	})
}
