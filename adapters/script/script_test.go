package script_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/script"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/firmware"
)

const password = "Bmc-Secret-9f3!"

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	cases := []struct {
		name    string
		body    string
		timeout time.Duration
		ok      bool
		code    int
		out     []string // the output contains
		notOut  []string
	}{
		{"the environment carries the BMC", `echo "addr=$HOSTFORGE_BMC_ADDRESS user=$HOSTFORGE_BMC_USERNAME pw=$HOSTFORGE_BMC_PASSWORD comp=$HOSTFORGE_FIRMWARE_COMPONENT ver=$HOSTFORGE_FIRMWARE_VERSION"; echo "$#" > ` + args + "\n",
			time.Minute, true, 0, []string{"addr=10.0.0.7:443 user=root pw=******** comp=uefi ver=22J-1.60"}, []string{password}},
		{"a failing script", "echo flashing >&2; exit 3\n", time.Minute, false, 3, []string{"flashing"}, nil},
		{"the worker's secrets stay out", `echo "dsn=$HOSTFORGE_TEST_DSN"` + "\n", time.Minute, true, 0, []string{"dsn=\n"}, []string{"postgres://"}},
		{"a script past its timeout is killed with its children", "sleep 30 & sleep 30; echo never\n", 300 * time.Millisecond, false, -1, []string{"killed after its timeout"}, []string{"never"}},
	}
	t.Setenv("HOSTFORGE_TEST_DSN", "postgres://hostforge:pw@db/state")
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logs := &bytes.Buffer{}
			r := &script.Runner{KillGrace: 200 * time.Millisecond, Log: slog.New(slog.NewTextHandler(logs, nil)),
				Locate: func(context.Context, string) (string, bmc.Credential, error) {
					return "10.0.0.7:443", bmc.Credential{Username: "root", Password: password}, nil
				}}
			p := write(t, dir, "s"+string(rune('a'+i))+".sh", c.body)
			start := time.Now()
			o, err := r.Run(context.Background(), firmware.ScriptJob{ID: "1-script-1-0", MachineID: "m1", Script: p, Component: firmware.UEFI, Version: "22J-1.60", Timeout: c.timeout})
			if err != nil {
				t.Fatal(err)
			}
			if o.OK != c.ok || o.ExitCode != c.code {
				t.Fatalf("outcome %+v, want ok %v exit %d", o, c.ok, c.code)
			}
			for _, s := range c.out {
				if !strings.Contains(o.Output, s) {
					t.Errorf("output %q lacks %q", o.Output, s)
				}
			}
			for _, s := range c.notOut {
				if strings.Contains(o.Output, s) {
					t.Errorf("output %q carries %q", o.Output, s)
				}
			}
			if strings.Contains(logs.String(), password) || strings.Contains(logs.String(), "root") && strings.Contains(logs.String(), "pw=") {
				t.Errorf("the log carries the credential:\n%s", logs)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
	if b, _ := os.ReadFile(args); strings.TrimSpace(string(b)) != "0" {
		t.Errorf("the script got %q arguments, want none", b)
	}
}

func TestRunMissingScript(t *testing.T) {
	r := &script.Runner{Locate: func(context.Context, string) (string, bmc.Credential, error) { return "a", bmc.Credential{}, nil }}
	o, err := r.Run(context.Background(), firmware.ScriptJob{MachineID: "m1", Script: "/nonexistent/flash.sh", Timeout: time.Second})
	if err != nil || o.OK || o.ExitCode != 127 || !strings.Contains(o.Output, "does not exist") {
		t.Fatalf("= %+v, %v", o, err)
	}
}

// NICo's legacy scripts read the BMC from BMC_IP, BMC_USERNAME and
// BMC_PASSWORD (and stop with exit 3 when one is missing): they run
// unchanged. BMC_IP is the address without its port; BMC_PORT carries a
// port the address names.
func TestRunNICoScriptEnvironment(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen")
	p := write(t, dir, "nico-upgrade.sh", `for v in BMC_IP BMC_USERNAME BMC_PASSWORD; do
  eval "x=\${$v:-}"
  [ -n "$x" ] || { echo "$v is not set" >&2; exit 3; }
done
[ "$BMC_PASSWORD" = '`+password+`' ] || { echo "wrong password" >&2; exit 4; }
echo "ip=$BMC_IP port=${BMC_PORT:-} user=$BMC_USERNAME" > `+seen+`
`)
	for _, c := range []struct{ addr, want string }{
		{"10.0.0.7:8443", "ip=10.0.0.7 port=8443 user=root"},
		{"10.0.0.8", "ip=10.0.0.8 port= user=root"},
		{"[fd00::7]:443", "ip=fd00::7 port=443 user=root"},
	} {
		r := &script.Runner{Locate: func(context.Context, string) (string, bmc.Credential, error) {
			return c.addr, bmc.Credential{Username: "root", Password: password}, nil
		}}
		o, err := r.Run(context.Background(), firmware.ScriptJob{ID: "1-script-1-0", MachineID: "m1", Script: p, Component: firmware.BMC, Version: "1", Timeout: time.Minute})
		if err != nil || !o.OK {
			t.Fatalf("%s: NICo's script failed: %+v, %v", c.addr, o, err)
		}
		b, _ := os.ReadFile(seen)
		if got := strings.TrimSpace(string(b)); got != c.want {
			t.Errorf("%s: the script saw %q, want %q", c.addr, got, c.want)
		}
	}
}
