package cli

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command that runs something takes --log-level, --log-file and -o,
// whenever it was added: a command holding none of them is the exception
// the list names.
func TestEveryCommandThatRunsTakesLogLevelAndOutput(t *testing.T) {
	root := NewRoot(Streams{}, nil)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if runsSomething(c) {
			for _, f := range []string{"log-level", "log-file", "output"} {
				if c.Flags().Lookup(f) == nil {
					t.Errorf("%s has no --%s", c.CommandPath(), f)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	// The exceptions print only what is built into the binary.
	for path := range builtinOnly {
		c, _, err := root.Find(strings.Fields(path)[1:])
		if err != nil || c.CommandPath() != path {
			t.Errorf("builtinOnly names %q, which is not a command", path)
		}
	}
}

// A bad --log-level or -o is refused (exit 2) before anything runs, on
// every command that takes them.
func TestLogLevelAndOutputCheckedBeforeRunning(t *testing.T) {
	for _, args := range [][]string{
		{"ledger", "show", "--config", "/nonexistent.yaml", "--log-level", "loud", "x"},
		{"verify", "--inventory", "/nonexistent", "--expect", "/nonexistent", "--log-level", "loud"},
		{"scout", "token", "--config", "/nonexistent.yaml", "--machine", "m1", "-o", "yaml"},
		{"lab", "--dir", "/nonexistent/lab", "-o", "yaml"},
		{"extensions", "validate", "/nonexistent.json", "--log-level", "loud"},
	} {
		r := run(t, "", nil, args...)
		wantCode(t, r, ExitUsage)
		wantError(t, r, "CLI_INPUT_INVALID")
		if strings.Contains(r.err, "nonexistent") {
			t.Errorf("%v read its files before checking its flags:\n%s", args, r.err)
		}
	}
}

// Flags that cannot be given together are refused in hostforge's words,
// naming both and why, with exit code 2.
func TestExclusiveFlagsExplained(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"enroll", "--demo", "--config", "x.yaml", "cpu-r1-u10"}, []string{"--demo and --config cannot be given together", "built-in fake rack"}},
		{[]string{"enroll", "--demo", "--no-inspection", "--force-inspection", "cpu-r1-u10"}, []string{"--no-inspection and --force-inspection cannot be given together"}},
		{[]string{"bmc", "detect", "--url", "https://127.0.0.1:1", "--ca-file", "ca.pem", "--insecure-skip-verify"}, []string{"--ca-file and --insecure-skip-verify cannot be given together"}},
		{[]string{"firmware", "auto-update", "--config", "x.yaml", "--machine", "m1", "--enable", "--disable"}, []string{"--enable and --disable cannot be given together"}},
		{[]string{"platform-class", "backfill", "--demo", "--apply", "--dry-run"}, []string{"--apply and --dry-run cannot be given together"}},
	} {
		r := run(t, "", nil, tc.args...)
		wantCode(t, r, ExitUsage)
		lines := strings.Split(strings.TrimRight(r.err, "\n"), "\n")
		r.err = strings.Join(lines[len(lines)-2:], "\n") + "\n" // after a deprecation notice
		wantError(t, r, append([]string{"CLI_INPUT_INVALID"}, tc.want...)...)
		if strings.Contains(r.err, "if any flags in the group") {
			t.Errorf("cobra's words:\n%s", r.err)
		}
	}
}

// The old spellings work for one more release, each with one line on the
// error stream naming its replacement: --id and --machines are --machine,
// --dry-run is the default.
func TestDeprecatedSpellingsStillWork(t *testing.T) {
	e := newFWEnv(t)
	ctx := context.Background()
	r := e.run(t, "firmware", "reprovision", "set", "--id", "m1", "--update-message", "CHG-1", "-o", "json")
	wantCode(t, r, ExitOK)
	if r.err != "warning: --id is deprecated and goes in the next release; use --machine\n" {
		t.Errorf("stderr %q", r.err)
	}
	var req struct {
		MachineID string `json:"machine_id"`
	}
	if err := json.Unmarshal([]byte(r.out), &req); err != nil || req.MachineID != "m1" {
		t.Fatalf("--id did not name the machine: %s (%v)", r.out, err)
	}
	// --machines took a list, after the flag or comma-separated.
	for _, args := range [][]string{{"--machines", "m1", "m2"}, {"--machines", "m1,m2"}} {
		r = e.run(t, append([]string{"firmware", "start-updates", "-o", "json", "--start", "2026-07-01T02:00:00+0000"}, args...)...)
		wantCode(t, r, ExitOK)
		if !strings.HasPrefix(r.err, "warning: --machines is deprecated and goes in the next release; use --machine\n") {
			t.Errorf("stderr %q", r.err)
		}
		ws, _ := e.store(t).Windows(ctx)
		if len(ws) != 2 {
			t.Errorf("%v: %d windows, want 2", args, len(ws))
		}
	}
	r = run(t, "", nil, "platform-class", "backfill", "--demo", "--dry-run", "--log-level", "off", "-o", "json", "cpu-r1-u10")
	wantCode(t, r, ExitOK)
	if !strings.HasPrefix(r.err, "warning: --dry-run is deprecated") {
		t.Errorf("stderr %q", r.err)
	}
	var rep backfillReportJSON
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil || rep.Applied || len(rep.Devices) != 1 || rep.Devices[0].NetBox != "would write" {
		t.Errorf("--dry-run: %s (%v)", r.out, err)
	}
}

// A command that acts on one machine refuses a second --machine; one that
// acts on several takes it repeated.
func TestMachineFlag(t *testing.T) {
	e := newFWEnv(t)
	for _, args := range [][]string{
		{"firmware", "approve"}, {"firmware", "reset"}, {"firmware", "cancel"}, {"firmware", "history"}, {"firmware", "show"},
		{"firmware", "auto-update", "--enable"}, {"firmware", "reprovision", "clear"}, {"firmware", "reprovision", "mark-manual-upgrade-complete"},
		{"firmware", "reprovision", "set", "--update-message", "x"},
	} {
		r := e.run(t, append(args, "--machine", "m1", "--machine", "m2")...)
		wantCode(t, r, ExitUsage)
		wantError(t, r, "--machine is given 2 times", "acts on one machine")
	}
	r := e.run(t, "firmware", "start-updates", "--machine", "m1", "--machine", "m2", "--cancel", "-o", "json")
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, `"m2"`) || r.err != "" {
		t.Errorf("stdout %s stderr %s", r.out, r.err)
	}
	r = e.run(t, "firmware", "start-updates", "m1")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "give each machine as --machine ID")
}

// validate, render and fire take definitions as --definition, as
// arguments, or both.
func TestDefinitionsAsFlagOrArguments(t *testing.T) {
	def, payload := extFiles(t)
	for _, args := range [][]string{{def}, {"--definition", def}} {
		r := run(t, "", nil, append([]string{"extensions", "validate", "-o", "json"}, args...)...)
		wantCode(t, r, ExitOK)
		if !strings.Contains(r.out, `"name": "notify"`) {
			t.Errorf("validate %v: %s", args, r.out)
		}
		r = run(t, "", nil, append([]string{"extensions", "render", "--stage", "serverRegistered", "--payload", payload, "-o", "json"}, args...)...)
		wantCode(t, r, ExitOK)
		if strings.Count(r.out, `"taskType"`) != 3 {
			t.Errorf("render %v: %s", args, r.out)
		}
	}
	recv := &countingReceiver{ids: map[string][]string{}}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	hook, hookPayload, vaultFile := fireSetup(t, srv.URL, "")
	for _, args := range [][]string{{hook}, {"--definition", hook}} {
		r := run(t, "", nil, append([]string{"extensions", "fire", "--stage", "serverRegistered", "--payload", hookPayload, "--vault", vaultFile, "-o", "json"}, args...)...)
		wantCode(t, r, ExitOK)
		if !strings.Contains(r.out, `"status": "succeeded"`) {
			t.Errorf("fire %v: %s", args, r.out)
		}
	}
	if n := len(recv.take()); n == 0 {
		t.Error("fire delivered nothing")
	}
	// Both at once: every file, once each.
	other := strings.Replace(def, "notify.json", "notify2.json", 1)
	r := run(t, "", nil, "extensions", "validate", "--definition", def, other, "-o", "json")
	wantCode(t, r, ExitUsage) // the second file does not exist
	if !strings.Contains(r.out, def) || !strings.Contains(r.out, other) {
		t.Errorf("validate --definition A B: %s", r.out)
	}
}

// A command marked with cobra's own flag groups is still refused in
// hostforge's words.
func TestCobraFlagGroupsInHostforgesWords(t *testing.T) {
	for _, tc := range []struct{ mark, want string }{
		{"exclusive", "--a and --b cannot be given together"},
		{"together", "--a and --b go together"},
		{"one", "give one of --a or --b"},
	} {
		root, _ := newRoot(Streams{}, nil)
		c := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
		c.Flags().Bool("a", false, "")
		c.Flags().Bool("b", false, "")
		switch tc.mark {
		case "exclusive":
			c.MarkFlagsMutuallyExclusive("a", "b")
		case "together":
			c.MarkFlagsRequiredTogether("a", "b")
		default:
			c.MarkFlagsOneRequired("a", "b")
		}
		root.AddCommand(c)
		args := []string{"x", "--a", "--b"}
		if tc.mark != "exclusive" {
			args = []string{"x"}
			if tc.mark == "together" {
				args = []string{"x", "--a"}
			}
		}
		root.SetArgs(args)
		var errb strings.Builder
		cmd, err := root.ExecuteC()
		if err == nil {
			t.Fatalf("%s: no refusal", tc.mark)
		}
		code := report(&errb, cmd, err)
		if code != ExitUsage || !strings.Contains(errb.String(), tc.want) || strings.Contains(errb.String(), "if any flags") {
			t.Errorf("%s: exit %d:\n%s", tc.mark, code, errb.String())
		}
	}
}
