package fleetsim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hostforge/hostforge"
)

// Report is a simulation's figures: one document for the fresh run and the
// converged rerun of the same fleet.
type Report struct {
	Hosts  int     `json:"hosts"`
	Broken int     `json:"broken"`
	Seed   uint64  `json:"seed"`
	Share  float64 `json:"broken_share"`
	// Phases says which phase groups ran (a phase whose implementation is
	// not wired into the executor is gated off).
	Phases Phases `json:"phases"`
	// EndState is what a healthy host ends in: "available" when the Ironic
	// phases ran, else "enrolled" (every enabled phase done).
	EndState string    `json:"end_state"`
	Fresh    RunReport `json:"fresh"`
	// Rerun reruns the hosts the fresh run brought to the end state: a
	// converged host's rerun must write nothing.
	Rerun RunReport `json:"converged_rerun"`
	// RerunFailed reruns the hosts that failed: each must fail the same way.
	RerunFailed RunReport `json:"failed_rerun"`
	// Violations are broken promises: a panic, an UNCLASSIFIED failure, a
	// broken host that reached the end state. Empty on a good run.
	Violations []string `json:"violations"`
}

// Phases are the phase groups a run enabled.
type Phases struct {
	PlatformClass bool `json:"platform_class"`
	DHCP          bool `json:"dhcp"`
	BMC           bool `json:"bmc"`
	Ironic        bool `json:"ironic"`
}

// RunReport is one pass's figures.
type RunReport struct {
	WallSeconds    float64 `json:"wall_seconds"`
	HostsPerSecond float64 `json:"hosts_per_second"`
	PeakHeapMiB    float64 `json:"peak_heap_mib"`
	// Ended counts hosts that reached the end state.
	Ended  int `json:"ended"`
	Failed int `json:"failed"`
	// CallsPerHost are the mean reads and writes per host, per system.
	CallsPerHost map[string]PerHost `json:"calls_per_host"`
	// Writes is the pass's total number of writes across systems.
	Writes int `json:"writes"`
	// VirtualToEnd are percentiles of the virtual time from submission to
	// the end state, over the hosts that reached it.
	VirtualToEnd Percentiles `json:"virtual_time_to_end"`
	// FailuresByCode counts failed hosts per failure code.
	FailuresByCode map[string]int `json:"failures_by_code"`
	// BreakageCodes counts, per planted breakage, the codes its hosts ended
	// with ("" when a broken host ended in the end state).
	BreakageCodes map[string]map[string]int `json:"breakage_codes,omitempty"`
}

// PerHost is a mean per host.
type PerHost struct {
	Reads  float64 `json:"reads"`
	Writes float64 `json:"writes"`
}

// Percentiles of a duration, in seconds.
type Percentiles struct {
	P50 float64 `json:"p50_seconds"`
	P95 float64 `json:"p95_seconds"`
	P99 float64 `json:"p99_seconds"`
	Max float64 `json:"max_seconds"`
	N   int     `json:"n"`
}

// EndedOK reports whether a host's outcome is the end state of cfg.
func EndedOK(o HostOutcome, ironic bool) bool {
	if o.Failure != nil || o.Panic != nil || !o.Result.Enrolled {
		return false
	}
	return !ironic || o.Result.ProvisionState == "available"
}

// Simulate runs the fleet fresh, then reruns the hosts that reached the end
// state and, separately, the hosts that failed, and reports all three.
func (f *Fleet) Simulate(ctx context.Context, o Options) Report {
	o = f.Prepare(o)
	fresh := f.Run(ctx, o)
	ended, failed := []string{}, []string{}
	for _, h := range fresh.Outcomes {
		if EndedOK(h, fresh.Config.IronicEnrol) {
			ended = append(ended, h.Device)
		} else {
			failed = append(failed, h.Device)
		}
	}
	o.Hosts = ended
	rerun := f.Run(ctx, o)
	o.Hosts = failed
	again := f.Run(ctx, o)
	return f.Summarise(fresh, rerun, again)
}

// Summarise turns a fresh pass, the converged hosts' rerun and the failed
// hosts' rerun into the report.
func (f *Fleet) Summarise(fresh, rerun, failed RunStats) Report {
	cfg := fresh.Config
	r := Report{
		Hosts: len(f.Names), Broken: len(f.Broken), Seed: f.Config.Seed, Share: f.Config.Broken,
		Phases:   Phases{PlatformClass: fresh.PlatformClass, DHCP: cfg.ConfigureDHCP, BMC: cfg.ConfigureBMC, Ironic: cfg.IronicEnrol},
		EndState: "enrolled",
	}
	if cfg.IronicEnrol {
		r.EndState = "available"
	}
	r.Fresh = f.runReport(fresh)
	r.Rerun = f.runReport(rerun)
	r.RerunFailed = f.runReport(failed)
	r.Violations = append(f.Violations(fresh, "fresh"), f.Violations(rerun, "rerun")...)
	r.Violations = append(r.Violations, f.Violations(failed, "failed rerun")...)
	r.Violations = append(r.Violations, f.rerunDrift(fresh, failed)...)
	if r.Violations == nil {
		r.Violations = []string{}
	}
	return r
}

// Violations lists a pass's broken promises: panics, UNCLASSIFIED failures,
// and broken hosts in the end state when the phase that finds their
// breakage ran.
func (f *Fleet) Violations(st RunStats, pass string) []string {
	var out []string
	for _, o := range st.Outcomes {
		switch {
		case o.Panic != nil:
			out = append(out, fmt.Sprintf("%s %s: panic: %v", pass, o.Device, o.Panic))
		case o.Failure != nil && o.Failure.Code == hostforge.Unclassified.Code:
			out = append(out, fmt.Sprintf("%s %s: UNCLASSIFIED: %v", pass, o.Device, o.Failure))
		}
		b, broken := f.Broken[o.Device]
		if !broken || !EndedOK(o, st.Config.IronicEnrol) {
			continue
		}
		if (b.NetBoxBreakage() && st.PlatformClass) || st.Config.IronicEnrol {
			out = append(out, fmt.Sprintf("%s %s: broken (%s) but reached the end state", pass, o.Device, b))
		}
	}
	return out
}

// rerunDrift lists failed hosts whose rerun failed differently, or not at all.
func (f *Fleet) rerunDrift(fresh, failed RunStats) []string {
	first := map[string]string{}
	for _, o := range fresh.Outcomes {
		if o.Failure != nil {
			first[o.Device] = o.Failure.Code
		}
	}
	var out []string
	for _, o := range failed.Outcomes {
		code := ""
		if o.Failure != nil {
			code = o.Failure.Code
		}
		if want, ok := first[o.Device]; ok && code != want {
			out = append(out, fmt.Sprintf("failed rerun %s: failed first with %s, then with %q", o.Device, want, code))
		}
	}
	return out
}

func (f *Fleet) runReport(st RunStats) RunReport {
	n := len(st.Outcomes)
	rr := RunReport{
		WallSeconds:    st.Wall.Seconds(),
		PeakHeapMiB:    float64(st.PeakHeap) / (1 << 20),
		CallsPerHost:   map[string]PerHost{},
		Writes:         st.Calls.Writes(),
		FailuresByCode: map[string]int{},
	}
	if st.Wall > 0 {
		rr.HostsPerSecond = float64(n) / st.Wall.Seconds()
	}
	for sys, t := range st.Calls {
		if n > 0 {
			rr.CallsPerHost[sys] = PerHost{Reads: float64(t.Reads) / float64(n), Writes: float64(t.Writes) / float64(n)}
		}
	}
	var virt []time.Duration
	for _, o := range st.Outcomes {
		code := ""
		if EndedOK(o, st.Config.IronicEnrol) {
			rr.Ended++
			virt = append(virt, o.Virtual)
		} else {
			rr.Failed++
			code = "NOT_ENDED"
			if o.Failure != nil {
				code = o.Failure.Code
			} else if o.Panic != nil {
				code = "PANIC"
			}
			rr.FailuresByCode[code]++
		}
		if b, ok := f.Broken[o.Device]; ok {
			if rr.BreakageCodes == nil {
				rr.BreakageCodes = map[string]map[string]int{}
			}
			m := rr.BreakageCodes[string(b)]
			if m == nil {
				m = map[string]int{}
				rr.BreakageCodes[string(b)] = m
			}
			m[code]++
		}
	}
	rr.VirtualToEnd = percentiles(virt)
	return rr
}

// percentiles uses the nearest-rank method.
func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	slices.Sort(d)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(d)))) - 1
		i = max(0, min(i, len(d)-1))
		return d[i].Seconds()
	}
	return Percentiles{P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Max: d[len(d)-1].Seconds(), N: len(d)}
}

// WriteJSON writes the report as one indented JSON document.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a terminal.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	on := func(v bool) string {
		if v {
			return "on"
		}
		return "gated off"
	}
	fmt.Fprintf(&b, "fleet: %d hosts, %d broken (share %.2f), seed %d\n", r.Hosts, r.Broken, r.Share, r.Seed)
	fmt.Fprintf(&b, "phases: platform_class %s, dhcp %s, bmc %s, ironic %s; end state: %s\n\n",
		on(r.Phases.PlatformClass), on(r.Phases.DHCP), on(r.Phases.BMC), on(r.Phases.Ironic), r.EndState)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tfresh\tconverged rerun\tfailed rerun\t")
	passes := []RunReport{r.Fresh, r.Rerun, r.RerunFailed}
	row := func(label string, cell func(p RunReport) string) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", label, cell(passes[0]), cell(passes[1]), cell(passes[2]))
	}
	row("hosts", func(p RunReport) string { return fmt.Sprint(p.Ended + p.Failed) })
	row("wall time (s)", func(p RunReport) string { return fmt.Sprintf("%.3f", p.WallSeconds) })
	row("hosts/s", func(p RunReport) string { return fmt.Sprintf("%.0f", p.HostsPerSecond) })
	row("peak heap (MiB)", func(p RunReport) string { return fmt.Sprintf("%.1f", p.PeakHeapMiB) })
	row("hosts in "+r.EndState, func(p RunReport) string { return fmt.Sprint(p.Ended) })
	row("hosts failed", func(p RunReport) string { return fmt.Sprint(p.Failed) })
	row("virtual time to "+r.EndState+" p50", func(p RunReport) string { return secs(p.VirtualToEnd.P50) })
	row("                          p95", func(p RunReport) string { return secs(p.VirtualToEnd.P95) })
	row("                          p99", func(p RunReport) string { return secs(p.VirtualToEnd.P99) })
	row("writes (all systems)", func(p RunReport) string { return fmt.Sprint(p.Writes) })
	for _, sys := range systems(r.Fresh.CallsPerHost, r.Rerun.CallsPerHost, r.RerunFailed.CallsPerHost) {
		row("calls/host "+sys+" (r / w)", func(p RunReport) string {
			c := p.CallsPerHost[sys]
			return fmt.Sprintf("%.2f / %.2f", c.Reads, c.Writes)
		})
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nfailures by code (fresh | failed rerun):\n")
	codes := keys(r.Fresh.FailuresByCode, r.RerunFailed.FailuresByCode)
	if len(codes) == 0 {
		fmt.Fprintf(&b, "  none\n")
	}
	for _, c := range codes {
		fmt.Fprintf(&b, "  %-40s %6d | %d\n", c, r.Fresh.FailuresByCode[c], r.RerunFailed.FailuresByCode[c])
	}
	if len(r.Fresh.BreakageCodes) > 0 {
		fmt.Fprintf(&b, "\nbroken hosts, by breakage → code (fresh):\n")
		for _, k := range keys(r.Fresh.BreakageCodes) {
			m := r.Fresh.BreakageCodes[k]
			var parts []string
			for _, c := range keys(m) {
				label := c
				if label == "" {
					label = r.EndState
				}
				parts = append(parts, fmt.Sprintf("%s ×%d", label, m[c]))
			}
			fmt.Fprintf(&b, "  %-14s %s\n", k, strings.Join(parts, ", "))
		}
	}
	if len(r.Violations) == 0 {
		fmt.Fprintf(&b, "\nviolations: none\n")
	} else {
		fmt.Fprintf(&b, "\nVIOLATIONS (%d):\n", len(r.Violations))
		for _, v := range r.Violations {
			fmt.Fprintf(&b, "  %s\n", v)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func secs(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

func keys[V any](ms ...map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func systems(ms ...map[string]PerHost) []string { return keys(ms...) }
