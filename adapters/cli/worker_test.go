package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/lab"
)

func TestWorkerAndTemporalFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "c.yaml", goodConfig, 0o600)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"worker without config", []string{"worker", "--temporal", "127.0.0.1:7233"}, "--config is required"},
		{"worker without temporal", []string{"worker", "--config", cfg}, "--temporal is required"},
		{"worker negative stop timeout", []string{"worker", "--config", cfg, "--temporal", "x:1", "--stop-timeout", "-1s"}, "--stop-timeout"},
		{"worker heartbeat timeout too short", []string{"worker", "--config", cfg, "--temporal", "x:1", "--heartbeat-timeout", "1s"}, "--heartbeat-timeout"},
		{"worker takes no arguments", []string{"worker", "--config", cfg, "--temporal", "x:1", "cpu-r1-u10"}, "unknown command"},
		{"enroll temporal with demo", []string{"enroll", "--demo", "--temporal", "127.0.0.1:7233", "cpu-r1-u10"}, "--temporal needs --config"},
		{"enroll temporal without config", []string{"enroll", "--temporal", "127.0.0.1:7233", "cpu-r1-u10"}, "--temporal needs --config"},
		{"lab takes no arguments", []string{"lab", "extra"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", nil, tc.args...)
			wantCode(t, r, ExitUsage)
			wantError(t, r, tc.want)
		})
	}
}

func TestWorkerHelp(t *testing.T) {
	for _, cmd := range []string{"worker", "lab"} {
		r := run(t, "", nil, cmd, "--help")
		wantCode(t, r, ExitOK)
		for _, want := range []string{"--config", "lab.yaml"} {
			if cmd == "worker" && want == "lab.yaml" {
				want = "--temporal"
			}
			if !strings.Contains(r.out, want) {
				t.Errorf("%s --help does not mention %s:\n%s", cmd, want, r.out)
			}
		}
	}
}

// A worker that cannot reach Temporal fails at once with the code an
// operator acts on, after checking the config.
func TestWorkerTemporalUnreachable(t *testing.T) {
	l := startLab(t)
	r := run(t, "", nil, "worker", "--config", l.Config, "--temporal", "127.0.0.1:1", "--log-level", "off")
	wantCode(t, r, ExitInfra)
	wantError(t, r, "TEMPORAL_UNAVAILABLE", "127.0.0.1:1")
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// 'hostforge lab' serves the rack until interrupted, and 'enroll --config
// lab.yaml' enrols through it: DHCP over SSH, the BMC over Redfish with
// verified TLS, NetBox activation.
func TestLabCommandEnrolsThroughItsConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int)
	go func() {
		done <- Run(ctx, []string{"lab", "--dir", dir, "--no-ironic", "--log-level", "off"}, Streams{Out: &out}, func(string) (string, bool) { return "", false })
	}()
	cfg := filepath.Join(dir, lab.ConfigFile)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "runs until interrupted") {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("the lab did not come up:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(cfg); err != nil {
		t.Fatal(err)
	}
	// Supermicro (no rotation, no reset) and a NetBox refusal: quick.
	r := run(t, "", nil, "enroll", "--config", cfg, "--log-level", "off", "-o", "json", "cpu-r1-u11", "bad-offline-u18")
	wantCode(t, r, ExitInfra)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 2 {
		t.Fatalf("-o json:\n%s", r.out)
	}
	var ok, refused enrollJSON
	if json.Unmarshal([]byte(lines[0]), &ok) != nil || json.Unmarshal([]byte(lines[1]), &refused) != nil {
		t.Fatalf("-o json:\n%s", r.out)
	}
	if !ok.Enrolled || phaseStatus(t, lines[0], "configure_dhcp") != "done" || phaseStatus(t, lines[0], "configure_bmc") != "done" {
		t.Errorf("cpu-r1-u11: %s", lines[0])
	}
	if refused.Failure == nil || refused.Failure.Code != "NETBOX_STATUS_INELIGIBLE" {
		t.Errorf("bad-offline-u18: %s", lines[1])
	}
	if b, err := os.ReadFile(filepath.Join(dir, lab.DHCPDir, "hostforge.d", "cpu-r1-u11.conf")); err != nil || !strings.Contains(string(b), "cpu-r1-u11") {
		t.Errorf("the lab's DHCP server holds no reservation for cpu-r1-u11: %v", err)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("the lab exited %d after the interrupt:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "lab stopped") {
		t.Errorf("no 'lab stopped':\n%s", out.String())
	}
}
