package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/flow"
)

// progress shows a run over several hosts as it happens: a line per host,
// redrawn in place on a terminal, or a line per event otherwise (a log file,
// a CI job, a pipe). It is fed by flow.Local.OnEvent from any number
// of workers.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	order    []string
	hosts    map[string]*hostLine
	drawn    int
}

// hostLine is what the progress shows of one host.
type hostLine struct {
	start   time.Time
	started bool
	step    string
	state   string // what the host is doing now, for the terminal view
	wait    string // the detail of the wait being served, "" when none
	last    hostforge.Outcome
	polling bool // the last event was a sleep between calls of h.step
	elapsed time.Duration
}

func newProgress(w io.Writer, terminal bool, devices []string) *progress {
	p := &progress{w: w, terminal: terminal, order: devices, hosts: map[string]*hostLine{}}
	for _, d := range devices {
		p.hosts[d] = &hostLine{state: "queued"}
	}
	return p
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
	p.emit(device, h, "started")
}

// event records one workflow event.
func (p *progress) event(ev flow.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.line(ev.Subject)
	if h.started {
		h.elapsed = ev.At.Sub(h.start)
	}
	var msg string
	if ev.Kind == "sleep" {
		switch {
		case h.wait != "":
			h.state = fmt.Sprintf("waiting: %s, retry in %s", h.wait, ev.Took)
		case h.last == hostforge.Failed:
			h.state = fmt.Sprintf("retry in %s after a retryable failure", ev.Took)
		default:
			h.state = fmt.Sprintf("in progress, next check in %s", ev.Took)
		}
		h.polling = true
		p.emit(ev.Subject, h, where(h.step)+": "+h.state)
		return
	}
	repeat := h.polling && ev.Step == h.step
	h.step, h.wait, h.last, h.polling = ev.Step, "", ev.Outcome, false
	switch ev.Outcome {
	case hostforge.Done:
		h.state = "running " + ev.Step
		if repeat {
			return // a poll of a running step: its sleep line says enough
		}
		msg = fmt.Sprintf("%s: done in %s", where(ev.Step), ev.Took)
	case hostforge.Waiting:
		msg = fmt.Sprintf("%s: wait %s (%s): %s", where(ev.Step), ev.Wait.After, ev.Wait.Reason, ev.Wait.Detail)
		h.wait = ev.Wait.Detail
		h.state = "waiting: " + ev.Wait.Detail
	default:
		msg = fmt.Sprintf("%s: failed %s", where(ev.Step), ev.Failure.Code)
		if ev.Failure.Retryable {
			msg += " (retryable)"
		}
		h.state = "failed " + ev.Failure.Code
	}
	p.emit(ev.Subject, h, msg)
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
	h.elapsed = elapsed
	if f != nil {
		msg = fmt.Sprintf("failed %s (owner %s)", f.Code, f.Owner)
	}
	h.state = msg
	p.emit(device, h, msg)
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

// emit prints one event line, or redraws the host lines on a terminal.
func (p *progress) emit(device string, h *hostLine, msg string) {
	if !p.terminal {
		fmt.Fprintf(p.w, "%8s  %s  %s\n", "+"+fmtElapsed(h.elapsed), device, msg)
		return
	}
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	}
	width := 0
	for _, d := range p.order {
		width = max(width, len(d))
	}
	for _, d := range p.order {
		l := p.hosts[d]
		step := "-"
		if l.step != "" {
			step = where(l.step)
		}
		fmt.Fprintf(&b, "\x1b[2K%-*s  %-32s  %8s  %s\n", width, d, step, fmtElapsed(l.elapsed), l.state)
	}
	p.drawn = len(p.order)
	io.WriteString(p.w, b.String())
}

// fmtElapsed renders a duration to the second.
func fmtElapsed(d time.Duration) string {
	return d.Truncate(time.Second).String()
}
