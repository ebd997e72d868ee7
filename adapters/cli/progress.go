package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/flow"
)

// progress shows a run over several hosts as it happens. On a terminal it
// is a live area of one row per host and a summary row, redrawn in place
// (see liveArea); otherwise (a log file, a CI job, a pipe) it prints plain
// lines, one per event, with no cursor movement. It is fed by
// flow.Local.OnEvent (or a Temporal history) from any number of workers.
//
// A step's line is held until the host's next event: a step that returned
// a wait, a retryable failure or a poll's "not yet" is followed by the
// runtime's sleep, and the two become one line with the real time until
// the next attempt.
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	live *liveArea
	// virtual says the times come from a fake clock (--demo).
	virtual bool
	// now is the run's clock, for a live row's elapsed time and the
	// countdown to its next attempt; nil shows the times of the events.
	now   func() time.Time
	first time.Time
	order []string
	hosts map[string]*hostLine

	stop    chan struct{}
	stopped chan struct{}
	closed  bool
}

// hostLine is what the progress shows of one host.
type hostLine struct {
	start             time.Time
	started, finished bool
	failed            bool
	step              string
	// state is what the host is doing now, for its row, and detail what
	// it waits for (shown after the countdown, which a cut must not hide).
	state, detail string
	// next is when the next attempt is due (zero: none), nextIn the
	// sleep as the runtime planned it, nextWhat "next attempt" or "next
	// check".
	next     time.Time
	nextIn   time.Duration
	nextWhat string
	elapsed  time.Duration
	// pending is the last step's event, not printed yet (plain lines).
	pending *flow.Event
	// polled is the last poll line printed for the step, so a poll that
	// says the same again prints nothing.
	polled string
}

// progressOptions configure a progress view.
type progressOptions struct {
	// live is the terminal's live area; nil prints plain lines.
	live *liveArea
	// resized receives a value when the terminal's size changes.
	resized <-chan struct{}
	// now is the run's real clock; nil for virtual time (--demo).
	now func() time.Time
	// tick is how often a live area redraws between events (elapsed
	// times and countdowns move); 0: only on events.
	tick time.Duration
}

func newProgress(w io.Writer, devices []string, o progressOptions) *progress {
	p := &progress{w: w, live: o.live, now: o.now, virtual: o.now == nil, order: devices, hosts: map[string]*hostLine{}}
	for _, d := range devices {
		p.hosts[d] = &hostLine{state: "queued"}
	}
	if p.live == nil {
		if p.virtual {
			fmt.Fprintln(w, "Times are virtual: the demo rack runs on a fake clock.")
		}
		return p
	}
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	go p.loop(o.resized, o.tick)
	p.mu.Lock()
	p.redraw()
	p.mu.Unlock()
	return p
}

// loop redraws the live area when the terminal is resized and, with a
// real clock, every tick, until close.
func (p *progress) loop(resized <-chan struct{}, tick time.Duration) {
	defer close(p.stopped)
	var tc <-chan time.Time
	if tick > 0 && p.now != nil {
		t := time.NewTicker(tick)
		defer t.Stop()
		tc = t.C
	}
	for {
		select {
		case <-p.stop:
			return
		case <-resized:
			p.live.resized()
		case <-tc:
		}
		p.mu.Lock()
		if !p.closed {
			p.redraw()
		}
		p.mu.Unlock()
	}
}

// close ends the view: a live area is erased, for the summary to take its
// place.
func (p *progress) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	if p.live != nil {
		close(p.stop)
		<-p.stopped
		p.live.close()
	}
}

// phaseOf names the workflow phase a step belongs to, for people.
func phaseOf(step string) string {
	switch step {
	case enrollment.StepReadIntent:
		return "netbox"
	case enrollment.StepRecordPlatformClass:
		return "platform_class"
	case enrollment.StepConfigureDHCP:
		return "dhcp"
	case enrollment.StepConfigureBMC:
		return "bmc"
	case enrollment.StepActivateDevice, enrollment.StepTagDevice:
		return "netbox"
	case enrollment.StepIronicInspection:
		return "inspection"
	case enrollment.StepIronicSwitchIPMI:
		return "ipmi_switch"
	case enrollment.StepIronicCleaning, enrollment.StepIronicFinalize:
		return "cleaning"
	}
	if p, ok := retirePhases[step]; ok {
		return p
	}
	return "workflow"
}

func where(step string) string {
	if step == "" {
		return "submit"
	}
	return phaseOf(step) + "/" + step
}

// begin marks a host as started at the runtime's time now.
func (p *progress) begin(device string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.line(device)
	h.start, h.started, h.state = now, true, "starting"
	if p.first.IsZero() || now.Before(p.first) {
		p.first = now
	}
	p.print(device, h, "started")
	p.redraw()
}

// event records one workflow event.
func (p *progress) event(ev flow.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.line(ev.Subject)
	if h.started {
		h.elapsed = ev.At.Sub(h.start)
	}
	if ev.Kind == "sleep" {
		p.sleep(ev, h)
		p.redraw()
		return
	}
	p.flush(ev.Subject, h)
	h.next, h.nextIn, h.detail = time.Time{}, 0, ""
	if ev.Step != h.step {
		h.polled = ""
	}
	h.step = ev.Step
	switch ev.Outcome {
	case hostforge.Done:
		h.state = "done in " + fmtDuration(ev.Took)
	case hostforge.Waiting:
		h.state = "waiting: " + ev.Wait.Detail
	default:
		h.state = "failed " + ev.Failure.Code
	}
	e := ev
	h.pending = &e
	p.redraw()
}

// sleep joins the runtime's sleep to the step event before it: one line
// with the real time until the next attempt.
func (p *progress) sleep(ev flow.Event, h *hostLine) {
	h.next, h.nextIn = ev.At.Add(ev.Took), ev.Took
	pe := h.pending
	h.pending = nil
	if pe == nil {
		h.state, h.nextWhat = "waiting", "next attempt"
		p.print(ev.Subject, h, fmt.Sprintf("%s: waiting %s", where(h.step), fmtDuration(ev.Took)))
		return
	}
	in := fmtDuration(ev.Took)
	switch pe.Outcome {
	case hostforge.Done:
		// A step that polls (inspection, cleaning) is done with this
		// attempt but not with its work: it is in progress.
		h.state, h.nextWhat = "in progress", "next check"
		if h.polled != pe.Step {
			h.polled = pe.Step
			p.printAt(ev.Subject, h, pe, fmt.Sprintf("%s: in progress, next check in %s", where(pe.Step), in))
		}
	case hostforge.Waiting:
		h.state, h.detail, h.nextWhat = "waiting", fmt.Sprintf("%s (%s)", pe.Wait.Detail, pe.Wait.Reason), "next attempt"
		h.polled = ""
		p.printAt(ev.Subject, h, pe, fmt.Sprintf("%s: waiting: %s (%s), next attempt in %s", where(pe.Step), pe.Wait.Detail, pe.Wait.Reason, in))
	default:
		h.state, h.nextWhat = fmt.Sprintf("retrying after %s", pe.Failure.Code), "next attempt"
		h.polled = ""
		p.printAt(ev.Subject, h, pe, fmt.Sprintf("%s: failed %s (retryable), next attempt in %s", where(pe.Step), pe.Failure.Code, in))
	}
}

// flush prints a held step event on its own: no sleep followed it.
func (p *progress) flush(device string, h *hostLine) {
	pe := h.pending
	if pe == nil {
		return
	}
	h.pending = nil
	switch pe.Outcome {
	case hostforge.Done:
		if h.polled == pe.Step {
			// The last poll of a step that was in progress: it is done now.
			p.printAt(device, h, pe, fmt.Sprintf("%s: done", where(pe.Step)))
			return
		}
		p.printAt(device, h, pe, fmt.Sprintf("%s: done in %s", where(pe.Step), fmtDuration(pe.Took)))
	case hostforge.Waiting:
		p.printAt(device, h, pe, fmt.Sprintf("%s: waiting: %s (%s)", where(pe.Step), pe.Wait.Detail, pe.Wait.Reason))
	default:
		p.printAt(device, h, pe, fmt.Sprintf("%s: failed %s", where(pe.Step), pe.Failure.Code))
	}
}

// finish records a host's outcome.
func (p *progress) finish(device string, r hostResult) {
	msg := "enrolled"
	if r.Result.ProvisionState != "" {
		msg += " (" + r.Result.ProvisionState + ")"
	}
	p.done(device, r.Elapsed, msg, r.Failure)
}

// done records how a host's run ended: msg, or the failure.
func (p *progress) done(device string, elapsed time.Duration, msg string, f *hostforge.Failure) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.line(device)
	if pe := h.pending; pe != nil && f != nil && pe.Outcome == hostforge.Failed && pe.Failure.Code == f.Code {
		// The step's failure is the host's: one line says both.
		h.pending = nil
	}
	p.flush(device, h)
	h.elapsed, h.finished, h.next, h.detail = elapsed, true, time.Time{}, ""
	if f != nil {
		msg = fmt.Sprintf("failed %s (owner %s)", f.Code, f.Owner)
		h.failed = true
	}
	h.state = msg
	if f != nil && h.step != "" {
		msg = where(h.step) + ": " + msg
	}
	p.print(device, h, msg)
	p.redraw()
}

func (p *progress) line(device string) *hostLine {
	h, ok := p.hosts[device]
	if !ok {
		h = &hostLine{}
		p.hosts[device] = h
		p.order = append(p.order, device)
	}
	return h
}

// print writes one plain line for the host at its current elapsed time.
func (p *progress) print(device string, h *hostLine, msg string) {
	if p.live != nil {
		return
	}
	fmt.Fprintf(p.w, "%8s  %s  %s\n", "+"+fmtDuration(h.elapsed), device, msg)
}

// printAt writes one plain line for the host at the time of ev.
func (p *progress) printAt(device string, h *hostLine, ev *flow.Event, msg string) {
	if p.live != nil {
		return
	}
	at := h.elapsed
	if h.started {
		at = ev.At.Sub(h.start)
	}
	fmt.Fprintf(p.w, "%8s  %s  %s\n", "+"+fmtDuration(at), device, msg)
}

// redraw draws the live area: one row per host (as many as fit, the
// hosts at work first) and the summary row.
func (p *progress) redraw() {
	if p.live == nil || p.closed {
		return
	}
	shown := p.order
	if room := p.live.height() - 1; len(shown) > room {
		shown = p.pick(max(0, room-1))
	}
	hostW, stepW := 4, 4
	for _, d := range shown {
		hostW = max(hostW, width(d))
		stepW = max(stepW, width(where(p.hosts[d].step)))
	}
	hostW, stepW = min(hostW, 24), min(stepW, 34)
	now := p.clock()
	rows := make([]string, 0, len(shown)+2)
	for _, d := range shown {
		h := p.hosts[d]
		step := "-"
		if h.step != "" || h.finished {
			step = where(h.step)
		}
		el := "-"
		if h.started {
			el = fmtDuration(h.elapsed)
			if !h.finished && !now.IsZero() {
				el = fmtDuration(now.Sub(h.start))
			}
		}
		state := h.state
		if !h.finished && h.nextIn > 0 {
			in := h.nextIn
			if !now.IsZero() {
				in = max(0, h.next.Sub(now))
			}
			state += " (" + h.nextWhat + " in " + fmtDuration(in) + ")"
		}
		if h.detail != "" {
			state += ": " + h.detail
		}
		rows = append(rows, fmt.Sprintf("%-*s  %-*s  %6s  %s", hostW, cut(d, hostW), stepW, cut(step, stepW), el, state))
	}
	if hidden := len(p.order) - len(shown); hidden > 0 {
		rows = append(rows, fmt.Sprintf("… %d more hosts", hidden))
	}
	rows = append(rows, p.summary(now))
	p.live.draw(rows)
}

// clock is the time now, zero for virtual time.
func (p *progress) clock() time.Time {
	if p.now == nil {
		return time.Time{}
	}
	return p.now()
}

// pick chooses n hosts to show when not all fit: those at work, then the
// failed, then the queued, then the enrolled; shown in their order.
func (p *progress) pick(n int) []string {
	rank := func(h *hostLine) int {
		switch {
		case h.started && !h.finished:
			return 0
		case h.failed:
			return 1
		case !h.started:
			return 2
		}
		return 3
	}
	idx := make([]int, len(p.order))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rank(p.hosts[p.order[idx[a]]]) < rank(p.hosts[p.order[idx[b]]]) })
	idx = idx[:n]
	sort.Ints(idx)
	out := make([]string, 0, n)
	for _, i := range idx {
		out = append(out, p.order[i])
	}
	return out
}

// summary is the live area's last row: counts and the run's time.
func (p *progress) summary(now time.Time) string {
	var enrolled, failed, running, queued int
	var longest time.Duration
	for _, d := range p.order {
		h := p.hosts[d]
		switch {
		case h.finished && h.failed:
			failed++
		case h.finished:
			enrolled++
		case h.started:
			running++
		default:
			queued++
		}
		longest = max(longest, h.elapsed)
	}
	parts := []string{fmt.Sprintf("%d hosts: %d enrolled, %d failed, %d running, %d queued", len(p.order), enrolled, failed, running, queued)}
	switch {
	case p.virtual:
		parts = append(parts, fmtDuration(longest)+" (virtual time)")
	case !p.first.IsZero():
		parts = append(parts, fmtDuration(now.Sub(p.first)))
	}
	return strings.Join(parts, " · ")
}

// fmtElapsed renders a host's elapsed time in the summary table.
func fmtElapsed(d time.Duration) string {
	return fmtDuration(d)
}
