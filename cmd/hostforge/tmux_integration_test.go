//go:build integration

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// tmux runs tmux on the test's own server socket.
type tmux struct {
	t      *testing.T
	bin    string
	socket string
}

func (x tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command(x.bin, append([]string{"-L", x.socket}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// In a real terminal (tmux, 80 and 160 columns), 'enroll --config
// lab/lab.yaml --parallel 4' over the lab's rack leaves one row per host
// (the summary table), no line as wide as the terminal (a wrapped row) and
// every log line above the summary.
func TestLiveViewInTmux(t *testing.T) {
	bin := os.Getenv("HOSTFORGE_TMUX")
	if bin == "" {
		if os.Getenv("HOSTFORGE_REQUIRE_INTEGRATION") == "1" {
			t.Fatal("HOSTFORGE_TMUX is unset (scripts/integration.d/tmux.sh)")
		}
		t.Skip("HOSTFORGE_TMUX is unset: run scripts/integration")
	}
	hf := binary(t)
	for _, cols := range []int{80, 160} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			lab := exec.Command(hf, "lab", "--no-ironic", "--dir", filepath.Join(dir, "lab"), "--log-level", "off")
			lab.Dir = dir
			if err := lab.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = lab.Process.Kill(); _ = lab.Wait() }()
			hostsFile := filepath.Join(dir, "lab", "hosts")
			deadline := time.Now().Add(time.Minute)
			for {
				if _, err := os.Stat(filepath.Join(dir, "lab", "lab.yaml")); err == nil {
					if b, err := os.ReadFile(hostsFile); err == nil && len(b) > 0 {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatal("the lab did not write lab.yaml")
				}
				time.Sleep(100 * time.Millisecond)
			}
			b, _ := os.ReadFile(hostsFile)
			hosts := strings.Fields(string(b))
			x := tmux{t: t, bin: bin, socket: fmt.Sprintf("hostforge-test-%d-%d", os.Getpid(), cols)}
			defer exec.Command(bin, "-L", x.socket, "kill-server").Run()
			shell := fmt.Sprintf("cd %s && %s enroll --config lab/lab.yaml --parallel 4 $(cat lab/hosts); echo EXIT=$?; sleep 600", dir, hf)
			x.run("new-session", "-d", "-s", "enroll", "-x", fmt.Sprint(cols), "-y", "50", shell)
			x.run("set-option", "-t", "enroll", "history-limit", "10000")
			deadline = time.Now().Add(5 * time.Minute)
			var screen string
			for {
				screen = x.run("capture-pane", "-p", "-t", "enroll", "-S", "-", "-E", "-")
				if strings.Contains(screen, "EXIT=") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("enroll did not finish:\n%s", screen)
				}
				time.Sleep(500 * time.Millisecond)
			}
			lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
			count := map[string]int{}
			header, lastLog := -1, -1
			for i, l := range lines {
				l = strings.TrimRight(l, " ")
				if strings.HasPrefix(l, "HOST ") {
					header = i
				}
				// From the summary on, nothing may wrap (log lines above
				// it are written whole, and wrap as the terminal likes).
				if header >= 0 && utf8.RuneCountInString(l) >= cols {
					t.Errorf("line %d is as wide as the terminal (%d): %q", i, cols, l)
				}
				if strings.Contains(l, "level=") {
					lastLog = i
				}
				for _, h := range hosts {
					if strings.HasPrefix(l, h+" ") {
						count[h]++
					}
				}
			}
			for _, h := range hosts {
				if count[h] != 1 {
					t.Errorf("%s has %d rows on the screen, want 1", h, count[h])
				}
			}
			if header < 0 || lastLog > header {
				t.Errorf("the summary's header at line %d, the last log line at %d: want every log line above the summary", header, lastLog)
			}
			if !strings.Contains(screen, "EXIT=4") {
				t.Errorf("want exit code 4 (the rack's routing failures)")
			}
			if t.Failed() {
				t.Logf("screen:\n%s", screen)
			}
		})
	}
}
