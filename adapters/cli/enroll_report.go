package cli

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
)

// enrollReport is how a run over several hosts reports: with text output,
// the progress and then a summary; with -o json, one JSON object per host
// written the moment that host finishes (NDJSON), so a script reads each
// host's outcome while the others still run.
type enrollReport struct {
	a       *app
	w       io.Writer
	format  string
	devices []string
	virtual bool
	prog    *progress
	// cols is the terminal's width, 0 when the output is not a terminal:
	// the summary is then fitted to it.
	cols int
	// quietSteps: the progress shows each step's outcome, and the log is
	// at its default level on the same screen, so the runtime's line per
	// step is left out.
	quietSteps bool

	mu  sync.Mutex
	err error
}

// startReport starts the report of a run over devices on the command's
// output. clk is the run's clock; virtual says it is a fake one (--demo).
func (a *app) startReport(cmd *cobra.Command, format string, devices []string, clk clock.Clock, virtual bool) *enrollReport {
	r := &enrollReport{a: a, w: cmd.OutOrStdout(), format: format, devices: devices, virtual: virtual}
	if format != formatText {
		return r
	}
	var now func() time.Time
	if !virtual {
		now = clk.Now
	}
	r.prog = a.runProgress(r.w, devices, now)
	lvl, on, _ := logLevel(cmd)
	r.quietSteps = !on || lvl >= slog.LevelWarn && !logsToFile(cmd)
	return r
}

// runProgress is the progress of a run over devices on w: a live area on a
// terminal (the logger writes above it), plain lines elsewhere. now is the
// run's real clock; nil for virtual time. Close it with endProgress.
func (a *app) runProgress(w io.Writer, devices []string, now func() time.Time) *progress {
	o := progressOptions{now: now}
	if a.streams.Terminal {
		o.live = newLiveArea(w, a.streams.Size)
		o.resized, o.tick = a.streams.Resized, time.Second
		a.live.Store(o.live)
	}
	return newProgress(w, devices, o)
}

// endProgress closes a run's progress and hands the terminal back to the
// logger; it returns the live area's width (0 without one).
func (a *app) endProgress(p *progress) (cols int) {
	if p == nil {
		return 0
	}
	p.close()
	if live := a.live.Load(); live != nil {
		cols = live.cols
		a.live.Store(nil)
	}
	return cols
}

// host reports one host's outcome as it finishes: its JSON line.
func (r *enrollReport) host(res hostResult) {
	if r.format != formatJSON {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := writeJSONLine(r.w, enrollLine(res)); err != nil && r.err == nil {
		r.err = err
	}
}

// end closes the progress, prints the summary (text) and returns the exit
// status of the run.
func (r *enrollReport) end(results []hostResult) error {
	if r.prog != nil {
		r.cols = r.a.endProgress(r.prog)
	}
	failures := make([]*hostforge.Failure, 0, len(results))
	for _, res := range results {
		if res.Failure != nil {
			failures = append(failures, res.Failure)
		}
	}
	code := worst(failures)
	if r.format == formatJSON {
		if r.err != nil {
			return r.err
		}
		return exitWith(code)
	}
	if err := printSummary(r.w, r.devices, results, r.virtual, r.cols); err != nil {
		return err
	}
	return exitWith(code)
}

// enrollLine is one host's JSON object.
func enrollLine(r hostResult) enrollJSON {
	j := enrollJSON{Device: r.Result.Device, Enrolled: r.Result.Enrolled && r.Result.Failure == nil, Instance: r.Result.Instance,
		Node: r.Result.Node, ProvisionState: r.Result.ProvisionState, PlatformClass: r.Result.PlatformClass,
		ElapsedSeconds: r.Elapsed.Seconds(), Phases: r.Result.Phases, Failure: failureOut(r.Failure), Proof: r.Proof, ExitCode: exitCodeOf(r.Failure),
		WorkflowID: r.WorkflowID, Extensions: r.Extensions}
	j.Phases = jsonList(j.Phases)
	return j
}

// summaryColumns are the summary table's columns. A narrow terminal
// drops the columns of highest drop first (0: never dropped).
var summaryColumns = []struct {
	name string
	drop int
	cell func(r hostResult) string
}{
	{"HOST", 0, func(r hostResult) string { return r.Result.Device }},
	{"RESULT", 0, func(r hostResult) string {
		if r.Failure != nil {
			return r.Failure.Code
		}
		return "enrolled"
	}},
	{"OWNER", 1, func(r hostResult) string {
		if r.Failure != nil {
			return string(r.Failure.Owner)
		}
		return "-"
	}},
	{"INSTANCE", 4, func(r hostResult) string { return dash(r.Result.Instance) }},
	{"STATE", 2, func(r hostResult) string { return dash(r.Result.ProvisionState) }},
	{"PLATFORM CLASS", 3, func(r hostResult) string { return dash(r.Result.PlatformClass) }},
	{"ELAPSED", 0, func(r hostResult) string { return fmtElapsed(r.Elapsed) }},
}

// summaryTable renders the table with the columns whose drop is below
// limit.
func summaryTable(results []hostResult, limit int, virtual bool) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	var head []string
	for _, c := range summaryColumns {
		if c.drop >= limit {
			continue
		}
		name := c.name
		if name == "ELAPSED" && virtual {
			name = "ELAPSED (VIRTUAL)"
		}
		head = append(head, name)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range results {
		var row []string
		for _, c := range summaryColumns {
			if c.drop < limit {
				row = append(row, c.cell(r))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	return b.String()
}

// printSummary writes the summary table, the count and each failure's
// operator action. On a terminal (cols > 0) nothing is wider than it:
// the table drops the columns that do not fit, and prose is wrapped.
func printSummary(w io.Writer, devices []string, results []hostResult, virtual bool, cols int) error {
	const all = 5
	table := summaryTable(results, all, virtual)
	if cols > 0 {
		for limit := all - 1; limit > 0 && widest(table) > cols-1; limit-- {
			table = summaryTable(results, limit, virtual)
		}
		var b strings.Builder
		for _, l := range strings.Split(strings.TrimSuffix(table, "\n"), "\n") {
			b.WriteString(cut(strings.TrimRight(l, " "), cols-1) + "\n")
		}
		table = b.String()
	}
	var b strings.Builder
	b.WriteString("\n" + table)
	enrolled := 0
	for _, r := range results {
		if r.Failure == nil {
			enrolled++
		}
	}
	fmt.Fprintf(&b, "\n%d of %d enrolled.\n", enrolled, len(devices))
	first := true
	for _, r := range results {
		if r.Failure == nil {
			continue
		}
		if first {
			b.WriteString("\nOperator actions:\n")
			first = false
		}
		b.WriteString(wrap(fmt.Sprintf("%s — %s (owner %s, %s)", r.Result.Device, r.Failure.Code, r.Failure.Owner, retryWord(r.Failure.Retryable)), "  ", "    ", cols))
		b.WriteString(wrap(oneLine(failureOut(r.Failure).Message), "      ", "      ", cols))
		b.WriteString(wrap("next: "+r.Failure.Action, "      ", "      ", cols))
	}
	first = true
	for _, r := range results {
		for _, e := range r.Extensions {
			if first {
				b.WriteString("\nserverRegistered extensions (they do not change the enrollment's result):\n")
				first = false
			}
			b.WriteString(wrap(fmt.Sprintf("%s — %s %s (delivery %s)", r.Result.Device, e.Task, e.Status, dash(e.DeliveryID)), "  ", "    ", cols))
			if e.Status != string(extensions.StatusSucceeded) && e.Message != "" {
				b.WriteString(wrap(oneLine(e.Message), "      ", "      ", cols))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// widest is the width of the longest line of s.
func widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, width(strings.TrimRight(l, " ")))
	}
	return n
}

// wrap fills text into lines of at most cols-1 columns (no limit when
// cols is 0), the first indented by first and the others by rest. A word
// longer than a line is cut.
func wrap(text, first, rest string, cols int) string {
	if cols <= 0 {
		return first + text + "\n"
	}
	limit := cols - 1
	var b strings.Builder
	line, indent := "", first
	emit := func() {
		b.WriteString(cut(indent+line, limit) + "\n")
		line, indent = "", rest
	}
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case width(indent+line+" "+word) <= limit:
			line += " " + word
		default:
			emit()
			line = word
		}
	}
	if line != "" || b.Len() == 0 {
		emit()
	}
	return b.String()
}
