package cli

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/bmc"
)

// declaredExitCodes reads the exit codes a command's help lists.
func declaredExitCodes(c *cobra.Command) []int {
	i := strings.Index(c.Long, "Exit codes:")
	if i < 0 {
		return nil
	}
	var codes []int
	for _, m := range regexp.MustCompile(`(?m)^  (\d)  `).FindAllStringSubmatch(c.Long[i:], -1) {
		n, _ := strconv.Atoi(m[1])
		codes = append(codes, n)
	}
	return codes
}

// commandOf finds the command args run.
func commandOf(t *testing.T, args []string) *cobra.Command {
	t.Helper()
	c, _, err := NewRoot(Streams{}, nil).Find(args)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return c
}

// repro runs a reproduction and checks its exit code, that the command's
// help lists that code, and the error's code and text.
func repro(t *testing.T, args []string, env map[string]string, code int, contains ...string) result {
	t.Helper()
	r := run(t, "", env, args...)
	wantCode(t, r, code)
	if !containsInt(declaredExitCodes(commandOf(t, args)), code) {
		t.Errorf("%s exits %d, which its help does not list", strings.Join(args[:2], " "), code)
	}
	wantError(t, r, contains...)
	return r
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// The reproductions of the operator's reports: each gives the code whose
// action fits its cause, and the exit code of its owner.
func TestReproductionsGiveTheirCauseAndExitCode(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "lab")
	l, err := lab.Start(ctx, lab.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			l.Close()
		}
	}()

	t.Run("bmc detect of an untrusted BMC", func(t *testing.T) {
		b := l.BMCs["cpu-r1-u10"]
		conn, err := tls.Dial("tcp", b.Endpoint, &tls.Config{InsecureSkipVerify: true}) // to read the certificate the test expects in the message
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(conn.ConnectionState().PeerCertificates[0].Raw)
		_ = conn.Close()
		r := repro(t, []string{"bmc", "detect", "--url", "https://" + b.Endpoint}, nil, ExitInfra,
			"BMC_TLS_UNTRUSTED", redfish.Fingerprint(sum[:]), "bmc.tls", "--ca-file")
		for _, wrong := range []string{"BMC_UNREACHABLE", "power", "cabling"} {
			if strings.Contains(r.err, wrong) {
				t.Errorf("an untrusted certificate's error says %q:\n%s", wrong, r.err)
			}
		}
	})

	t.Run("platform-class resolve with a device class that is none", func(t *testing.T) {
		repro(t, []string{"platform-class", "resolve", "--manufacturer", "Dell", "--model", "PowerEdge R7615", "--device-class", "CPU"}, nil, ExitUsage,
			"CLI_INPUT_INVALID", "--device-class", "CPU_BAREMETAL")
	})

	t.Run("ledger show of a device it does not know", func(t *testing.T) {
		r := repro(t, []string{"ledger", "show", "--config", l.Config, "no-such-host"}, nil, ExitInfra, "LEDGER_DEVICE_UNKNOWN", "no-such-host")
		if strings.Contains(r.err, "FLEET_MANAGER") {
			t.Errorf("an unknown device is blamed on the fleet manager:\n%s", r.err)
		}
	})

	t.Run("a malformed --temporal address", func(t *testing.T) {
		for _, addr := range []string{"127.0.0.1", "http://127.0.0.1:7233", "127.0.0.1:port", ":7233", "127.0.0.1:70000"} {
			repro(t, []string{"enroll", "--config", l.Config, "--temporal", addr, "cpu-r1-u10"}, nil, ExitUsage, "CLI_INPUT_INVALID", "--temporal")
			repro(t, []string{"worker", "--config", l.Config, "--temporal", addr}, nil, ExitUsage, "CLI_INPUT_INVALID", "--temporal")
		}
	})

	t.Run("a second lab in the same directory", func(t *testing.T) {
		repro(t, []string{"lab", "--dir", dir, "--no-ironic"}, nil, ExitUsage, "already running", fmt.Sprintf("PID %d", os.Getpid()))
		if _, err := os.Stat(filepath.Join(dir, lab.LedgerFile)); err != nil {
			t.Errorf("the refused lab removed the running one's ledger: %v", err)
		}
		var busy *lab.BusyError
		if _, err := lab.Start(ctx, lab.Options{Dir: dir}); !errors.As(err, &busy) || busy.PID != os.Getpid() {
			t.Errorf("lab.Start in a busy directory: %v", err)
		}
	})

	l.Close()
	stopped = true
	t.Run("enroll against a stopped lab", func(t *testing.T) {
		start := time.Now()
		repro(t, []string{"enroll", "--config", l.Config, "cpu-r1-u10"}, nil, ExitUsage, "LAB_NOT_RUNNING", "not running", "hostforge lab")
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the refusal took %s: something was contacted first", d)
		}
	})
}

// Input files of the offline commands and the config file: what cannot be
// read is INPUT_INVALID or CONFIG_UNREADABLE, exit code 2, with an action
// about the file.
func TestInputFilesAreInputInvalid(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect := filepath.Join(dir, "expect.yaml")
	if err := os.WriteFile(expect, []byte("device: cpu-r1-u10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"verify: an inventory that is not JSON", []string{"verify", "--inventory", garbage, "--expect", expect}, []string{"INPUT_INVALID", garbage}},
		{"verify: a missing inventory", []string{"verify", "--inventory", missing, "--expect", expect}, []string{"INPUT_INVALID", missing}},
		{"lldp decode: an inventory that is not JSON", []string{"lldp", "decode", "--inventory", garbage}, []string{"INPUT_INVALID", garbage}},
		{"platform-class resolve: a missing ztp file", []string{"platform-class", "resolve", "--manufacturer", "Lenovo", "--model", "HG635N V2", "--gpu-type", "GB300", "--device-class", "GPU_COMPUTE", "--ztp", missing}, []string{"INPUT_INVALID", "--ztp"}},
		{"bmc detect: a CA file without a certificate", []string{"bmc", "detect", "--url", "https://127.0.0.1:1", "--ca-file", garbage}, []string{"INPUT_INVALID", "--ca-file"}},
		{"enroll: a missing config file", []string{"enroll", "--config", missing, "cpu-r1-u10"}, []string{"CONFIG_UNREADABLE", missing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := repro(t, tc.args, nil, ExitUsage, tc.want...)
			for _, wrong := range []string{"force_inspection", "Fix the key", "at the line"} {
				if strings.Contains(r.err, wrong) {
					t.Errorf("the error about a file says %q:\n%s", wrong, r.err)
				}
			}
		})
	}
}

// A message says the underlying error once: BMC_UNREACHABLE after its
// wait budget, and bmc detect of a BMC that does not answer.
func TestBMCUnreachableSaysItsCauseOnce(t *testing.T) {
	detail := "cpu-r1-u10: connect: no answer: dial tcp 10.10.0.5:443: connect: connection refused"
	for _, w := range bmc.Waits() {
		err := w.Exhausted(bmc.Phase, &hostforge.Wait{After: 30 * time.Second, Reason: w.Reason, Detail: detail}, 2*time.Minute, 2*time.Minute)
		if n := strings.Count(err.Error(), "connection refused"); n != 1 {
			t.Errorf("%s: the cause appears %d times: %s", w.Reason, n, err)
		}
	}
	r := run(t, "", nil, "bmc", "detect", "--url", "http://127.0.0.1:1", "--timeout", "2s")
	wantCode(t, r, ExitOnSite)
	wantError(t, r, "BMC_UNREACHABLE")
	if n := strings.Count(r.err, "127.0.0.1:1/redfish/v1/"); n != 1 {
		t.Errorf("the URL appears %d times:\n%s", n, r.err)
	}
}

// docs/exit-codes.md is the exit codes, the failure codes that give exit
// code 2, and each command's codes as its help lists them; go test
// -update rewrites it.
func TestExitCodesDoc(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Exit codes\n\nGenerated by `go test ./adapters/cli -run TestExitCodesDoc -update` from the command tree; do not edit.\nA test fails when this file is stale.\n\n")
	b.WriteString("Every hostforge command exits with one of these codes. A failure's exit code follows from its owner (see\n[failure-codes.md](failure-codes.md) and `hostforge failure-codes`): a script can branch on who acts next.\n\n")
	b.WriteString("| code | meaning |\n| --- | --- |\n")
	for _, e := range exitCodeTable {
		fmt.Fprintf(&b, "| %d | %s |\n", e.code, strings.Join(strings.Fields(e.text), " "))
	}
	b.WriteString("\n" + severalHosts + "\n\n")
	b.WriteString("Exit code 2 is bad input found before anything was contacted. These failure codes give it:\n\n")
	var usage []string
	for _, s := range hostforge.Codes() {
		if exitCodeOf(&hostforge.Failure{Spec: s}) == ExitUsage {
			usage = append(usage, "`"+s.Code+"`")
		}
	}
	b.WriteString(strings.Join(usage, ", ") + ", and any command line cobra cannot parse (unknown command or flag, a missing or extra argument).\n\n")
	b.WriteString("## By command\n\nEach command's `--help` lists the codes it can return:\n\n| command | exit codes |\n| --- | --- |\n")
	var rows []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasParent() && c.Runnable() && !c.HasSubCommands() && c.Name() != "help" && !(c.HasParent() && c.Parent().Name() == "completion") {
			codes := declaredExitCodes(c)
			if len(codes) == 0 && (c.Name() == "version" || c.Name() == "failure-codes") {
				codes = []int{ExitOK, ExitUsage}
			}
			s := make([]string, len(codes))
			for i, c := range codes {
				s[i] = strconv.Itoa(c)
			}
			rows = append(rows, fmt.Sprintf("| `%s` | %s |", c.CommandPath(), strings.Join(s, ", ")))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(Streams{}, nil))
	sort.Strings(rows)
	b.WriteString(strings.Join(rows, "\n") + "\n")
	path := filepath.Join("..", "..", "docs", "exit-codes.md")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != b.String() {
		t.Errorf("docs/exit-codes.md is stale (go test ./adapters/cli -run TestExitCodesDoc -update): %v", err)
	}
}
