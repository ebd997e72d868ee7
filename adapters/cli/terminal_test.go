package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hinshun/vt10x"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/flow"
)

// screen is a terminal emulator the command writes to, both streams, as a
// terminal gets them through a tty (which turns LF into CR LF). check, when
// set, sees the screen after every write.
type screen struct {
	mu         sync.Mutex
	vt         vt10x.Terminal
	cols, rows int
	check      func(lines []string)
}

func newScreen(cols, rows int) *screen {
	return &screen{vt: vt10x.New(vt10x.WithSize(cols, rows)), cols: cols, rows: rows}
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.vt.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	if s.check != nil {
		s.check(s.linesLocked())
	}
	return len(p), nil
}

func (s *screen) size() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cols, s.rows
}

// lines are the screen's lines, trailing blanks removed.
func (s *screen) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.linesLocked()
}

func (s *screen) linesLocked() []string {
	out := make([]string, s.rows)
	for y := range s.rows {
		var b strings.Builder
		for x := range s.cols {
			c := s.vt.Cell(x, y).Char
			if c == 0 {
				c = ' '
			}
			b.WriteRune(c)
		}
		out[y] = strings.TrimRight(b.String(), " ")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// hostOf returns the host a line is the row of (it starts with the host's
// name), "" for any other line.
func hostOf(line string, hosts []string) string {
	for _, h := range hosts {
		if strings.HasPrefix(line, h+" ") || line == h {
			return h
		}
		// A name cut to fit its column.
		if i := strings.Index(line, "… "); i >= 8 && strings.HasPrefix(h, line[:i]) && !strings.Contains(line[:i], " ") {
			return h
		}
	}
	return ""
}

// isSummaryRow recognises the live area's last row.
func isSummaryRow(line string) bool {
	return strings.Contains(line, " hosts: ") && strings.Contains(line, " enrolled,")
}

// liveViewChecker checks every screen a run shows: while the live area is
// up it is one block — a row per host it shows, each once, then the
// summary row — with no host row anywhere else (no stale copy of a row) and
// no log line in it, and none of its rows reaches the terminal's last
// column (a row that wraps takes two lines).
type liveViewChecker struct {
	t     *testing.T
	hosts []string
	cols  int

	mu      sync.Mutex
	screens int
	failed  bool
}

func (c *liveViewChecker) check(lines []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed {
		return
	}
	sum := -1
	for i, l := range lines {
		if isSummaryRow(l) {
			if sum >= 0 {
				c.fail(lines, "two summary rows")
				return
			}
			sum = i
		}
	}
	if sum < 0 {
		return // between an erase and the redraw, or after the run
	}
	c.screens++
	if width(lines[sum]) >= c.cols {
		c.fail(lines, "the summary row reaches the last column")
		return
	}
	top := sum
	seen := map[string]bool{}
	for top > 0 {
		l := lines[top-1]
		h := hostOf(l, c.hosts)
		if h == "" && !strings.HasPrefix(l, "… ") {
			break
		}
		if h != "" && seen[h] {
			c.fail(lines, "host "+h+" has two rows in the live area")
			return
		}
		seen[h] = true
		if width(l) >= c.cols {
			c.fail(lines, "a row reaches the last column: "+l)
			return
		}
		top--
	}
	if sum-top == 0 {
		c.fail(lines, "a summary row without host rows above it")
		return
	}
	for i, l := range lines {
		if i >= top && i <= sum {
			if strings.Contains(l, "level=") {
				c.fail(lines, "a log line inside the live area")
				return
			}
			continue
		}
		if h := hostOf(l, c.hosts); h != "" {
			c.fail(lines, fmt.Sprintf("a stale row of %s outside the live area (line %d)", h, i))
			return
		}
	}
}

func (c *liveViewChecker) fail(lines []string, why string) {
	c.failed = true
	c.t.Errorf("%s; screen:\n%s", why, strings.Join(lines, "\n"))
}

// finalScreen checks the screen a run leaves: a row per host (the summary
// table), no live area, and no row of the table wider than the terminal.
func finalScreen(t *testing.T, lines []string, hosts []string, cols int) {
	t.Helper()
	count := map[string]int{}
	for _, l := range lines {
		if isSummaryRow(l) {
			t.Errorf("the live area's summary row was left on the screen:\n%s", strings.Join(lines, "\n"))
		}
		if h := hostOf(l, hosts); h != "" {
			count[h]++
			if width(l) >= cols {
				t.Errorf("row wider than %d columns: %q", cols-1, l)
			}
		}
	}
	for _, h := range hosts {
		if count[h] != 1 {
			t.Errorf("host %s has %d rows on the final screen, want 1:\n%s", h, count[h], strings.Join(lines, "\n"))
		}
	}
}

// A live area's rows never wrap, however long the host's state, and a
// log line printed while it is up lands above it.
func TestLiveAreaFitsAndLogsGoAbove(t *testing.T) {
	for _, cols := range []int{40, 80, 160} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			scr := newScreen(cols, 30)
			hosts := []string{"cpu-a", "gpu-with-a-rather-long-name-r1-u02", "hv-c"}
			chk := &liveViewChecker{t: t, hosts: hosts, cols: cols}
			scr.check = chk.check
			t0 := clock.Epoch
			now := t0
			live := newLiveArea(scr, scr.size)
			p := newProgress(scr, hosts, progressOptions{live: live, now: func() time.Time { return now }})
			log := func(msg string) {
				_, _ = live.above(scr, []byte("time=2026-12-02T01:59:32.246Z level=WARN msg=\""+msg+"\" device=cpu-a phase=configure_bmc\n"))
			}
			for i, h := range hosts {
				p.begin(h, t0)
				p.event(flow.Event{Subject: h, Kind: "step", Step: enrollment.StepConfigureBMC, Outcome: hostforge.Waiting, At: t0.Add(time.Duration(i) * time.Second),
					Wait: &hostforge.Wait{After: 10 * time.Second, Reason: "idrac_job_run", Detail: h + ": boot_order: host reset; job JID_740000000002 applies on this boot, and then some more words to pass any width"}})
				log("provisioning NIC's boot option not identified; nothing disabled, label reorder")
				p.event(flow.Event{Subject: h, Kind: "sleep", At: t0.Add(time.Duration(i) * time.Second), Took: 10 * time.Second})
			}
			now = t0.Add(7 * time.Second)
			p.mu.Lock()
			p.redraw()
			p.mu.Unlock()
			shown := strings.Join(scr.lines(), "\n")
			if !strings.Contains(shown, "…") {
				t.Errorf("no row was cut with an ellipsis:\n%s", shown)
			}
			if cols >= 160 && !strings.Contains(shown, "next attempt in 3s") {
				t.Errorf("the countdown does not run on the real clock (10 s sleep, 7 s later):\n%s", shown)
			}
			p.finish("cpu-a", hostResult{Result: enrollment.Result{Device: "cpu-a", Enrolled: true}, Elapsed: 17 * time.Second})
			log("after the first host")
			p.close()
			if chk.screens == 0 {
				t.Fatal("the checker never saw the live area")
			}
			for _, l := range scr.lines() {
				if hostOf(l, hosts) != "" || isSummaryRow(l) {
					t.Errorf("the closed area left a row: %q", l)
				}
			}
			logs := strings.Count(strings.Join(scr.lines(), "\n"), "level=WARN")
			if logs != len(hosts)+1 {
				t.Errorf("%d log lines on the screen, want %d:\n%s", logs, len(hosts)+1, strings.Join(scr.lines(), "\n"))
			}
		})
	}
}

// More hosts than the terminal has rows: the area shows the hosts at work
// and says how many more there are, and never scrolls.
func TestLiveAreaOnAShortTerminal(t *testing.T) {
	scr := newScreen(80, 8)
	hosts := make([]string, 12)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("host-%02d", i)
	}
	chk := &liveViewChecker{t: t, hosts: hosts, cols: 80}
	scr.check = chk.check
	t0 := clock.Epoch
	p := newProgress(scr, hosts, progressOptions{live: newLiveArea(scr, scr.size)})
	for _, h := range hosts[:4] {
		p.finish(h, hostResult{Result: enrollment.Result{Device: h, Enrolled: true}})
	}
	p.begin("host-10", t0)
	p.event(flow.Event{Subject: "host-10", Kind: "step", Step: enrollment.StepReadIntent, Outcome: hostforge.Done, At: t0})
	lines := scr.lines()
	if len(lines) > 7 {
		t.Errorf("the area takes %d lines of an 8-line terminal:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if hostOf(strings.Join(lines, "\n"), []string{"host-10"}) == "" && !strings.Contains(strings.Join(lines, "\n"), "host-10 ") {
		t.Errorf("the host at work is not shown:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(strings.Join(lines, "\n"), "… 7 more hosts") {
		t.Errorf("no line says how many hosts are not shown:\n%s", strings.Join(lines, "\n"))
	}
	p.close()
}

// A resize re-measures the width: the rows drawn after it fit the new one.
func TestLiveAreaFollowsAResize(t *testing.T) {
	scr := newScreen(160, 20)
	hosts := []string{"cpu-r1-u10", "gpu-r1-u02"}
	resized := make(chan struct{})
	t0 := clock.Epoch
	p := newProgress(scr, hosts, progressOptions{live: newLiveArea(scr, scr.size), resized: resized})
	for _, h := range hosts {
		p.begin(h, t0)
		p.event(flow.Event{Subject: h, Kind: "step", Step: enrollment.StepConfigureBMC, Outcome: hostforge.Waiting, At: t0,
			Wait: &hostforge.Wait{After: 10 * time.Second, Reason: "bmc_busy", Detail: strings.Repeat("the BMC is busy with something long ", 4)}})
	}
	scr.mu.Lock()
	scr.cols = 60
	scr.vt.Resize(60, 20)
	scr.mu.Unlock()
	resized <- struct{}{}
	p.mu.Lock() // the loop has redrawn once it lets go of the lock
	p.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok := true
		for _, l := range scr.lines() {
			if width(l) >= 60 {
				ok = false
			}
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rows still wider than the resized terminal:\n%s", strings.Join(scr.lines(), "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.close()
}

// The acceptance run: 'enroll --config lab/lab.yaml --parallel 4' over the
// lab's whole rack on an 80- and a 160-column terminal. Every screen the
// run shows holds one live area and no stale row, and the run leaves one
// row per host (the summary) with no row wider than the terminal.
func TestEnrollLiveViewOverTheLab(t *testing.T) {
	for _, cols := range []int{80, 160} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			l := startLab(t)
			// Tall enough that nothing the run prints scrolls away.
			scr := newScreen(cols, 200)
			chk := &liveViewChecker{t: t, hosts: l.Hosts, cols: cols}
			scr.check = chk.check
			args := append([]string{"enroll", "--config", l.Config, "--parallel", "4"}, l.Hosts...)
			code := Run(ctx, args, Streams{Out: scr, Err: scr, Terminal: true, Size: scr.size}, func(string) (string, bool) { return "", false })
			if code != ExitInfra {
				t.Errorf("exit code %d, want %d (routing failures):\n%s", code, ExitInfra, strings.Join(scr.lines(), "\n"))
			}
			if chk.screens == 0 {
				t.Fatal("no screen showed the live area")
			}
			finalScreen(t, scr.lines(), l.Hosts, cols)
			if t.Failed() {
				return
			}
			out := strings.Join(scr.lines(), "\n")
			for _, want := range []string{"level=WARN", "Operator actions:", "of 13 enrolled."} {
				if !strings.Contains(out, want) {
					t.Errorf("the final screen lacks %q:\n%s", want, out)
				}
			}
			// Logs come first, then the summary: none inside it.
			if strings.LastIndex(out, "level=") > strings.Index(out, "HOST ") {
				t.Errorf("a log line below the summary's header:\n%s", out)
			}
		})
	}
}
