package main

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// buildOnce builds the hostforge binary once for the tests of this file.
var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "hostforge-main-test")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hostforge")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

// TestMain removes the binary the tests built, and fails the package when
// a goroutine outlives its tests (the receivers and the processes' output
// readers are theirs to stop).
func TestMain(m *testing.M) {
	code := m.Run()
	if built.Load() {
		if bin, err := buildOnce(); err == nil {
			_ = os.RemoveAll(filepath.Dir(bin))
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// built is set once a test asked for the binary.
var built atomic.Bool

func binary(t *testing.T) string {
	t.Helper()
	built.Store(true)
	bin, err := buildOnce()
	if err != nil {
		t.Fatalf("go build: %v", err)
	}
	return bin
}

// extensionDef writes a definition of one webhook task to endpoint with
// the request template tpl, and a serverRegistered payload.
func extensionDef(t *testing.T, dir, endpoint, tpl string) (def, payload string) {
	t.Helper()
	d := map[string]any{
		"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "signals", "label": "signals",
		"extensionType": "workflow", "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": map[string]any{},
		"inputs": []any{}, "outputs": []any{}, "assets": []any{},
		"onAssetChange": []any{map[string]any{"stage": "serverRegistered", "tasks": []any{map[string]any{
			"label": "hook", "taskType": "ExtensionTaskWebhook",
			"options": map[string]any{"endpoint": endpoint, "method": "POST", "requestTemplate": tpl}}}}},
	}
	b, _ := json.Marshal(d)
	def, payload = filepath.Join(dir, "signals.json"), filepath.Join(t.TempDir(), "server.json")
	if err := os.WriteFile(def, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(payload, []byte(`{"server": {"serialNumber": "6SBT0R3"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return def, payload
}

// interrupt starts the command, waits until ready returns (the command
// is at work), sends sig and returns how long the process took to end
// after it, its exit code and its standard error. A process still running
// 5 s after the signal is killed and fails the test.
func interrupt(t *testing.T, sig syscall.Signal, stdin *os.File, ready func(), args ...string) (time.Duration, int, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr, cmd.Stdin = &stderr, stdin
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	ready()
	select {
	case <-exited:
		t.Fatalf("the command ended before it was interrupted: %s", stderr.String())
	default:
	}
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("%v: the command was still running 5 s after the signal (it swallowed it)", sig)
	}
	return time.Since(sent), cmd.ProcessState.ExitCode(), stderr.String()
}

// TestSignalEndsTheCommandWithinASecond sends SIGTERM or SIGINT to the
// built binary while it works — rendering a template that would run for
// years, delivering a webhook to a receiver that never answers, or stuck
// reading a standard input that never ends (which no context reaches) —
// and holds it to ending within a second, with exit code 7.
func TestSignalEndsTheCommandWithinASecond(t *testing.T) {
	const bomb = `{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(60) }}`
	settle := func() { time.Sleep(500 * time.Millisecond) }

	t.Run("render", func(t *testing.T) {
		defs := t.TempDir()
		_, payload := extensionDef(t, defs, "https://hooks.example.com/", bomb)
		cfg := filepath.Join(t.TempDir(), "site.yaml")
		// A deadline far away: the signal, not the budget, must end it.
		doc := "site: lab1\nnetbox:\n  url: https://netbox.example.net\nextensions:\n  definitions: " + defs + "\n  render_timeout: 1m\n"
		if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			took, code, stderr := interrupt(t, sig, nil, settle, "extensions", "render", "--config", cfg, "--stage", "serverRegistered", "--payload", payload)
			if code != 7 || took > time.Second || !strings.Contains(stderr, "CANCELLED") || !strings.Contains(stderr, "render was interrupted") {
				t.Errorf("%v during a render: exit %d after %v, stderr %q; want 7 within 1s, CANCELLED", sig, code, took, stderr)
			}
		}
	})

	t.Run("fire", func(t *testing.T) {
		arrived, release := make(chan struct{}, 1), make(chan struct{})
		recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			<-release // never answers while the command runs
		}))
		defer recv.Close()
		defer close(release)
		ca := filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recv.Certificate().Raw}), 0o644); err != nil {
			t.Fatal(err)
		}
		def, payload := extensionDef(t, t.TempDir(), recv.URL+"/hook", `{"serial": {{ server.serialNumber | dump }}}`)
		took, code, stderr := interrupt(t, syscall.SIGTERM, nil, func() { <-arrived },
			"extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", payload, "--ca-file", ca)
		if code != 7 || took > time.Second || !strings.Contains(stderr, "CANCELLED") {
			t.Errorf("SIGTERM during a delivery: exit %d after %v, stderr %q; want 7 within 1s, CANCELLED", code, took, stderr)
		}
	})

	t.Run("stuck where no context reaches", func(t *testing.T) {
		def, _ := extensionDef(t, t.TempDir(), "https://hooks.example.com/", `{}`)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close() // held open: the payload never ends
		took, code, stderr := interrupt(t, syscall.SIGTERM, r, settle, "extensions", "render", "--definition", def, "--stage", "serverRegistered", "--payload", "-")
		if code != 7 || took > time.Second || !strings.Contains(stderr, "did not stop within") {
			t.Errorf("SIGTERM while reading standard input: exit %d after %v, stderr %q; want 7 within 1s", code, took, stderr)
		}
	})
}
