package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/internal/realdata"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestMain runs the tests, or — with HOSTFORGE_CLI_ARGS set (a JSON list)
// — the hostforge command line itself, so tests can run a command such as
// the worker as a separate process they can interrupt or kill.
func TestMain(m *testing.M) {
	if args := os.Getenv("HOSTFORGE_CLI_ARGS"); args != "" {
		os.Exit(runChild(args))
	}
	goleak.VerifyTestMain(m, leakOptions...)
}

// leakOptions are goleak's exceptions; the integration build adds its own.
var leakOptions []goleak.Option

// runChild runs the command tree with the JSON-encoded args, as
// cmd/hostforge does: interrupted by SIGINT or SIGTERM.
func runChild(args string) int {
	var argv []string
	if err := json.Unmarshal([]byte(args), &argv); err != nil {
		fmt.Fprintln(os.Stderr, "HOSTFORGE_CLI_ARGS:", err)
		return 99
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, argv, Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.LookupEnv)
}

// result is what one in-process run of the command tree gave.
type result struct {
	out, err string
	code     int
}

// run executes the command tree in-process.
func run(t *testing.T, stdin string, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	s := Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code := Run(context.Background(), args, s, lookup)
	if wantsJSON(args) {
		// Every -o json output a test produces is held to docs/json.md.
		checkJSONOutput(t, args, out.String())
	}
	return result{out: out.String(), err: errb.String(), code: code}
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (run go test -update to create it)", path, err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update after checking the change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func wantCode(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.out, r.err)
	}
}

// wantError checks the two-line error form: "error: ..." then "action: ...".
func wantError(t *testing.T, r result, contains ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.err, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "error: ") || !strings.HasPrefix(lines[1], "action: ") {
		t.Fatalf("stderr is not one error line and one action line:\n%s", r.err)
	}
	for _, c := range contains {
		if !strings.Contains(r.err, c) {
			t.Errorf("stderr does not mention %q:\n%s", c, r.err)
		}
	}
}

func TestEveryCommandHasAnExampleAndExitCodes(t *testing.T) {
	root := NewRoot(Streams{}, nil)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.HasParent() && c.Parent().Name() == "completion" || c.Name() == "completion" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s --help has no example", c.CommandPath())
		}
		if c.Runnable() && c.HasParent() && !c.HasSubCommands() && c.Name() != "version" && c.Name() != "failure-codes" && !strings.Contains(c.Long, "Exit codes:") {
			t.Errorf("%s --help does not document the exit codes", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown command", []string{"enrol"}, []string{"unknown command", "hostforge --help"}},
		{"unknown flag", []string{"enroll", "--demo", "--frobnicate"}, []string{"unknown flag: --frobnicate", "hostforge enroll --help"}},
		{"exclusive flags", []string{"enroll", "--demo", "--no-inspection", "--force-inspection", "cpu-r1-u10"}, []string{"no-inspection", "force-inspection"}},
		{"no systems", []string{"enroll", "cpu-r1-u10"}, []string{"CLI_INPUT_INVALID", "--config FILE", "--demo"}},
		{"no device", []string{"enroll", "--config", "x.yaml"}, []string{"name at least one DEVICE"}},
		{"bad parallel", []string{"enroll", "--demo", "--parallel", "0"}, []string{"--parallel 0"}},
		{"device twice", []string{"enroll", "--demo", "cpu-r1-u10", "cpu-r1-u10"}, []string{"cpu-r1-u10 is named twice"}},
		{"bad output", []string{"failure-codes", "-o", "yaml"}, []string{`--output "yaml"`}},
		{"bad log level", []string{"enroll", "--demo", "--log-level", "loud", "cpu-r1-u10"}, []string{`--log-level "loud"`}},
		{"missing required flag", []string{"verify", "--inventory", "x.json"}, []string{`"expect" not set`}},
		{"group without subcommand", []string{"platform-class"}, []string{"missing subcommand"}},
		{"unknown failure code", []string{"failure-codes", "NO_SUCH_CODE"}, []string{"NO_SUCH_CODE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", nil, tc.args...)
			wantCode(t, r, ExitUsage)
			wantError(t, r, tc.want...)
			if r.out != "" {
				t.Errorf("a usage error printed to stdout:\n%s", r.out)
			}
		})
	}
}

func TestExitCodeOf(t *testing.T) {
	spec := func(code string, owner hostforge.Owner) *hostforge.Failure {
		return &hostforge.Failure{Spec: hostforge.Spec{Code: code, Owner: owner}}
	}
	for _, tc := range []struct {
		f    *hostforge.Failure
		want int
	}{
		{nil, ExitOK},
		{spec("INSPECTION_CABLING_MISMATCH", hostforge.OwnerDCOps), ExitOnSite},
		{spec("IRONIC_ROUTING_UNRESOLVED", hostforge.OwnerInfraEng), ExitInfra},
		{spec("DHCP_RESTART_FAILED", hostforge.OwnerNetwork), ExitInfra},
		{spec("PLATFORM_CLASS_RECORD_FAILED", hostforge.OwnerFleetManager), ExitFleetManager},
		{spec("NOT_IMPLEMENTED", hostforge.OwnerSDK), ExitBug},
		{hostforge.Unclassified.New("x"), ExitBug},
		{hostforge.Cancelled.New("x"), ExitCancelled},
		{InputInvalid.New("x"), ExitUsage},
		{ConfigInvalid.New("x"), ExitUsage},
	} {
		name := "nil"
		if tc.f != nil {
			name = tc.f.Code
		}
		if got := exitCodeOf(tc.f); got != tc.want {
			t.Errorf("exitCodeOf(%s) = %d, want %d", name, got, tc.want)
		}
	}
	onsite, infra, fm, bug := spec("A", hostforge.OwnerDCOps), spec("B", hostforge.OwnerInfraEng), spec("C", hostforge.OwnerFleetManager), hostforge.Unclassified.New("x")
	for _, tc := range []struct {
		fs   []*hostforge.Failure
		want int
	}{
		{nil, ExitOK},
		{[]*hostforge.Failure{onsite}, ExitOnSite},
		{[]*hostforge.Failure{onsite, fm}, ExitFleetManager},
		{[]*hostforge.Failure{onsite, fm, infra}, ExitInfra},
		{[]*hostforge.Failure{bug, onsite, infra}, ExitBug},
		{[]*hostforge.Failure{hostforge.Cancelled.New("x"), onsite}, ExitOnSite},
	} {
		if got := worst(tc.fs); got != tc.want {
			t.Errorf("worst(%d failures) = %d, want %d", len(tc.fs), got, tc.want)
		}
	}
}

func TestFailureCodes(t *testing.T) {
	r := run(t, "", nil, "failure-codes")
	wantCode(t, r, ExitOK)
	for _, want := range []string{"CODE", "IRONIC_ROUTING_UNRESOLVED", "INSPECTION_CABLING_MISMATCH", "PLATFORM_CLASS_UNRESOLVABLE", "CONFIG_INVALID", "UNCLASSIFIED"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	r = run(t, "", nil, "failure-codes", "-o", "json")
	wantCode(t, r, ExitOK)
	var rows []codeJSON
	if err := json.Unmarshal([]byte(r.out), &rows); err != nil {
		t.Fatalf("-o json: %v", err)
	}
	if len(rows) != len(hostforge.Codes()) {
		t.Errorf("-o json lists %d codes, the registry %d", len(rows), len(hostforge.Codes()))
	}
	for _, row := range rows {
		if row.Action == "" || row.Owner == "" || row.Phase == "" {
			t.Errorf("%s: incomplete row %+v", row.Code, row)
		}
		if row.Code == "INSPECTION_CABLING_MISMATCH" && row.ExitCode != ExitOnSite {
			t.Errorf("INSPECTION_CABLING_MISMATCH exit code %d, want %d", row.ExitCode, ExitOnSite)
		}
	}
	r = run(t, "", nil, "failure-codes", "IRONIC_ROUTING_UNRESOLVED", "CLI_INPUT_INVALID")
	wantCode(t, r, ExitOK)
	golden(t, "failure-codes-selected.txt", r.out)
}

func TestVersion(t *testing.T) {
	r := run(t, "", nil, "version")
	wantCode(t, r, ExitOK)
	if !strings.HasPrefix(r.out, "hostforge ") || !strings.Contains(r.out, "go1.") {
		t.Errorf("version: %q", r.out)
	}
	r = run(t, "", nil, "version", "-o", "json")
	wantCode(t, r, ExitOK)
	var v versionInfo
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || v.Version == "" || v.GoVersion == "" {
		t.Errorf("version -o json: %v %+v", err, v)
	}
}

// The version comes from the release, else the module version, and the
// commit and its time from the build information; a build with none of
// them says how to get one.
func TestVersionFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "46177142f81fd9461410580fd0810399e3ed2989"},
		{Key: "vcs.time", Value: "2026-12-02T02:30:52Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name, release string
		bi            *debug.BuildInfo
		want          []string
	}{
		{"release", "v1.4.0", &debug.BuildInfo{Main: debug.Module{Version: develVersion}}, []string{"hostforge v1.4.0 go1."}},
		{"go install module@version", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.2"}}, []string{"hostforge v1.3.2 go1."}},
		{"a git clone", "", &debug.BuildInfo{Main: debug.Module{Version: develVersion}, Settings: vcs},
			[]string{"(commit 46177142f81fd9461410580fd0810399e3ed2989 of 2026-12-02T02:30:52Z, with uncommitted changes)"}},
		{"nothing recorded", "", &debug.BuildInfo{Main: debug.Module{Version: develVersion}}, []string{"no version or commit recorded", "-buildvcs=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := versionFrom(tc.release, tc.bi).line()
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
		})
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		r := run(t, "", nil, "completion", shell)
		wantCode(t, r, ExitOK)
		if !strings.Contains(r.out, "hostforge") {
			t.Errorf("completion %s does not mention hostforge", shell)
		}
	}
	// Dynamic completion of a flag value.
	r := run(t, "", nil, cobra.ShellCompRequestCmd, "platform-class", "resolve", "--device-class", "")
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, "GPU_COMPUTE") || !strings.Contains(r.out, "HYPERVISOR") {
		t.Errorf("--device-class completion: %q", r.out)
	}
}

func TestResolve(t *testing.T) {
	gpu := []string{"platform-class", "resolve", "--manufacturer", "Lenovo", "--model", "HG635N V2", "--gpu-type", "GB300", "--device-class", "GPU_COMPUTE"}
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string // exact stdout; "" checks stderr instead
		errs   []string
	}{
		{"gpu with infiniband ztp file", append(gpu, "--ztp", "testdata/ztp-ib.json"), "", ExitOK, "GB300_LENOVOHG635NV2_IB_01\n", nil},
		{"gpu with ztp on stdin", append(gpu, "--ztp", "-"), "infiniband: {rails: 4}\n", ExitOK, "GB300_LENOVOHG635NV2_IB_01\n", nil},
		{"gpu without ztp", gpu, "", ExitOK, "GB300_LENOVOHG635NV2_NORDMA_01\n", nil},
		{"cpu", []string{"platform-class", "resolve", "--manufacturer", "Dell", "--model", "PowerEdge R7615", "--device-class", "CPU_BAREMETAL"}, "", ExitOK, "NOGPU_DELLPOWEREDGER7615_NORDMA_01\n", nil},
		{"gpu with ztp lacking infiniband", append(gpu, "--ztp", "testdata/ztp-empty.yaml"), "", ExitInfra, "", []string{"PLATFORM_CLASS_UNRESOLVABLE", "no infiniband section", "action: Fix the NetBox data"}},
		{"gpu without gpu_type", []string{"platform-class", "resolve", "--manufacturer", "Dell", "--model", "PowerEdge XE9680", "--device-class", "GPU_COMPUTE"}, "", ExitInfra, "", []string{"PLATFORM_CLASS_UNRESOLVABLE", "gpu_type"}},
		{"ztp file missing", append(gpu, "--ztp", "testdata/nope.json"), "", ExitUsage, "", []string{"INPUT_INVALID", "--ztp testdata/nope.json"}},
		{"ztp not yaml", append(gpu, "--ztp", "-"), "{infiniband: [", ExitUsage, "", []string{"INPUT_INVALID", "not JSON or YAML"}},
		{"missing model", []string{"platform-class", "resolve", "--manufacturer", "Dell", "--device-class", "CPU_BAREMETAL"}, "", ExitUsage, "", []string{`"model" not set`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.stdin, nil, tc.args...)
			wantCode(t, r, tc.code)
			if tc.stdout != "" {
				if r.out != tc.stdout || r.err != "" {
					t.Errorf("stdout %q stderr %q, want stdout %q", r.out, r.err, tc.stdout)
				}
				return
			}
			wantError(t, r, tc.errs...)
		})
	}

	r := run(t, "", nil, append(gpu, "--ztp", "testdata/ztp-ib.json", "-o", "json")...)
	wantCode(t, r, ExitOK)
	golden(t, "resolve-gpu.json", r.out)
	r = run(t, "", nil, append(gpu, "--ztp", "testdata/ztp-empty.yaml", "-o", "json", "--device", "bad-nogputype-u20")...)
	wantCode(t, r, ExitInfra)
	golden(t, "resolve-unresolvable.json", r.out)
}

func TestBackfillDemo(t *testing.T) {
	r := run(t, "", nil, "platform-class", "backfill", "--demo", "--log-level", "off")
	wantCode(t, r, ExitInfra) // the rack has a GPU host without gpu_type and a switch
	golden(t, "backfill-dry-run.txt", r.out)

	// Named healthy devices: written on the first run with --apply (same
	// rack, fresh per run).
	r = run(t, "", nil, "platform-class", "backfill", "--demo", "--apply", "--log-level", "off", "--device", "gpu-r1-u02", "cpu-r1-u10")
	wantCode(t, r, ExitOK)
	golden(t, "backfill-named.txt", r.out)

	r = run(t, "", nil, "platform-class", "backfill", "--demo", "--log-level", "off", "-o", "json", "bad-nogputype-u20", "cpu-r1-u10")
	wantCode(t, r, ExitInfra)
	var rep backfillReportJSON
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("-o json is not one document: %v\n%s", err, r.out)
	}
	rows := rep.Devices
	if rep.Applied || len(rows) != 2 || rows[0].Failure == nil || rows[0].Failure.Code != "PLATFORM_CLASS_UNRESOLVABLE" ||
		rows[1].Failure != nil || rows[1].Effective != "NOGPU_DELLPOWEREDGER7615_NORDMA_01" || rows[1].NetBox != "would write" {
		t.Errorf("backfill -o json rows: %+v", rows)
	}
}

func TestBackfillWritesOnceThenNothing(t *testing.T) {
	sys := demoSystems(slog.New(slog.DiscardHandler), nil)
	ctx := context.Background()
	names := []string{"gpu-r1-u02", "cpu-r1-u10"}
	for i, wantWrites := range []bool{true, false} {
		before := sys.demo.Calls()
		entries, err := backfill(ctx, sys, names, false)
		if err != nil {
			t.Fatal(err)
		}
		writes := sys.demo.Calls().Sub(before).Writes()
		if (writes > 0) != wantWrites {
			t.Errorf("run %d: %d writes, want writes=%v", i+1, writes, wantWrites)
		}
		for _, e := range entries {
			if e.Failure != nil {
				t.Errorf("run %d: %s failed: %v", i+1, e.Device, e.Failure)
			}
		}
	}
}

func TestVerify(t *testing.T) {
	inv := realdata.Path(t, "ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json")
	r := run(t, "", nil, "verify", "--inventory", inv, "--expect", "testdata/r7615-pass.yaml")
	wantCode(t, r, ExitOK)
	golden(t, "verify-pass.txt", r.out)

	r = run(t, "", nil, "verify", "--inventory", inv, "--expect", "testdata/r7615-fail.yaml")
	wantCode(t, r, ExitOnSite)
	golden(t, "verify-fail.txt", r.out)

	r = run(t, "", nil, "verify", "--inventory", inv, "--expect", "testdata/r7615-fail.yaml", "-o", "json")
	wantCode(t, r, ExitOnSite)
	var v verifyJSON
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatal(err)
	}
	if v.OK || len(v.Mismatches) != 2 || v.Failure == nil || v.Failure.Owner != string(hostforge.OwnerDCOps) {
		t.Errorf("verify -o json: %+v", v)
	}
	for _, m := range v.Mismatches {
		if m.Action == "" {
			t.Errorf("mismatch %s %s has no action", m.Check, m.Subject)
		}
	}

	// The inventory on standard input.
	b := realdata.Read(t, "ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json")
	r = run(t, string(b), nil, "verify", "--inventory", "-", "--expect", "testdata/r7615-pass.yaml", "-o", "json")
	wantCode(t, r, ExitOK)

	// Bad input files are INPUT_INVALID usage errors naming the file, with
	// what the parser said (not its action, written for a live inspection).
	r = run(t, "", nil, "verify", "--inventory", inv, "--expect", "testdata/bad-key.yaml")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "INPUT_INVALID", "--expect testdata/bad-key.yaml", "cores_total")
	r = run(t, "{", nil, "verify", "--inventory", "-", "--expect", "testdata/r7615-pass.yaml")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "INPUT_INVALID", "--inventory -")
	if strings.Contains(r.err, "force_inspection") {
		t.Errorf("a bad inventory file is told to rerun an inspection:\n%s", r.err)
	}
	r = run(t, "", nil, "verify", "--inventory", "testdata/none.json", "--expect", "testdata/r7615-pass.yaml")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "INPUT_INVALID", "testdata/none.json")
}

func TestLLDPDecode(t *testing.T) {
	for _, tc := range []struct{ golden, dir, file string }{
		{"lldp-r7615.txt", "understack", "dell-r7615-inventory-raw-lldp.json"},
		{"lldp-r320.txt", "metal3-docs", "dell-r320-inspector-data-lldp.json"},
		{"lldp-not-collected.txt", "ironic-api-ref", "node-inventory-response.json"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := run(t, "", nil, "lldp", "decode", "--inventory", realdata.Path(t, "ipa-inventory", tc.dir, tc.file))
			wantCode(t, r, ExitOK)
			golden(t, tc.golden, r.out)
		})
	}

	// Junk TLVs are reported, never fatal.
	r := run(t, "", nil, "lldp", "decode", "--inventory", "testdata/junk-lldp.json")
	wantCode(t, r, ExitOK)
	golden(t, "lldp-junk.txt", r.out)
	if !strings.Contains(r.out, "warning: eth0:") {
		t.Errorf("junk TLVs not reported:\n%s", r.out)
	}

	r = run(t, "", nil, "lldp", "decode", "--inventory", "testdata/junk-lldp.json", "-o", "json")
	wantCode(t, r, ExitOK)
	var rows []lldpJSON
	if err := json.Unmarshal([]byte(r.out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].SwitchName != "leaf-1" || rows[0].PortID != "swp1" || len(rows[0].Problems) == 0 ||
		rows[1].Neighbour != nil || !rows[1].Collected || rows[2].Collected {
		t.Errorf("lldp -o json rows: %+v", rows)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startLab starts a lab with its defaults (the built-in rack, no real
// components) in a fresh directory, and closes it when the test ends.
func startLab(t *testing.T) *lab.Lab {
	t.Helper()
	l, err := lab.Start(context.Background(), lab.Options{Dir: filepath.Join(t.TempDir(), "lab")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}
