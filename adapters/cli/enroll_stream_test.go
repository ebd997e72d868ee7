package cli

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// timedWriter records when each line arrives.
type timedWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	lines []time.Time
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for range strings.Count(string(p), "\n") {
		w.lines = append(w.lines, time.Now())
	}
	return len(p), nil
}

// With -o json each host's line is written the moment it finishes: over
// the lab, the host NetBox refuses is reported while the AMI host still
// waits out its BMC's resets.
func TestEnrollJSONStreamsEachHostAsItFinishes(t *testing.T) {
	ctx := context.Background()
	l := startLab(t)
	var out timedWriter
	start := time.Now()
	code := Run(ctx, []string{"enroll", "--config", l.Config, "--parallel", "3", "--log-level", "off", "-o", "json", "gpu-r1-u06", "cpu-r1-u11", "bad-offline-u18"},
		Streams{Out: &out}, func(string) (string, bool) { return "", false })
	end := time.Now()
	if code != ExitInfra {
		t.Fatalf("exit code %d, want %d:\n%s", code, ExitInfra, out.buf.String())
	}
	lines := strings.Split(strings.TrimSpace(out.buf.String()), "\n")
	if len(lines) != 3 || len(out.lines) != 3 {
		t.Fatalf("want 3 lines, one per host:\n%s", out.buf.String())
	}
	var first, last enrollJSON
	if json.Unmarshal([]byte(lines[0]), &first) != nil || json.Unmarshal([]byte(lines[2]), &last) != nil {
		t.Fatalf("not JSON lines:\n%s", out.buf.String())
	}
	if first.Device != "bad-offline-u18" || last.Device != "gpu-r1-u06" {
		t.Errorf("lines in the order %s … %s, want the refused host first and the AMI host last", first.Device, last.Device)
	}
	lastRan := time.Duration(last.ElapsedSeconds * float64(time.Second))
	firstAt := out.lines[0].Sub(start)
	t.Logf("first line after %s; the last host ran %s; the run took %s", firstAt, lastRan, end.Sub(start))
	if lastRan < 2*time.Second || firstAt > end.Sub(start)-lastRan/2 {
		t.Errorf("the first line came %s into a %s run whose last host ran %s: not written as its host finished", firstAt, end.Sub(start), lastRan)
	}
}
