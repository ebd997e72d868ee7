package fleetsim

import (
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
	Rerun    RunReport `json:"rerun"`
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

// Summarise turns a fresh pass and a rerun into the report.
func (f *Fleet) Summarise(fresh, rerun RunStats) Report {
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
	r.Violations = append(f.Violations(fresh, "fresh"), f.Violations(rerun, "rerun")...)
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
	fmt.Fprintln(tw, "\tfresh\tconverged rerun")
	row := func(label, format string, a, c any) { fmt.Fprintf(tw, "%s\t"+format+"\t"+format+"\n", label, a, c) }
	row("wall time (s)", "%.3f", r.Fresh.WallSeconds, r.Rerun.WallSeconds)
	row("hosts/s", "%.0f", r.Fresh.HostsPerSecond, r.Rerun.HostsPerSecond)
	row("peak heap (MiB)", "%.1f", r.Fresh.PeakHeapMiB, r.Rerun.PeakHeapMiB)
	row("hosts in "+r.EndState, "%d", r.Fresh.Ended, r.Rerun.Ended)
	row("hosts failed", "%d", r.Fresh.Failed, r.Rerun.Failed)
	row("virtual time to "+r.EndState+" p50", "%s", secs(r.Fresh.VirtualToEnd.P50), secs(r.Rerun.VirtualToEnd.P50))
	row("                          p95", "%s", secs(r.Fresh.VirtualToEnd.P95), secs(r.Rerun.VirtualToEnd.P95))
	row("                          p99", "%s", secs(r.Fresh.VirtualToEnd.P99), secs(r.Rerun.VirtualToEnd.P99))
	row("writes (all systems)", "%d", r.Fresh.Writes, r.Rerun.Writes)
	for _, sys := range systems(r.Fresh.CallsPerHost, r.Rerun.CallsPerHost) {
		a, c := r.Fresh.CallsPerHost[sys], r.Rerun.CallsPerHost[sys]
		row("calls/host "+sys+" (r / w)", "%s", fmt.Sprintf("%.2f / %.2f", a.Reads, a.Writes), fmt.Sprintf("%.2f / %.2f", c.Reads, c.Writes))
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nfailures by code (fresh | rerun):\n")
	codes := keys(r.Fresh.FailuresByCode, r.Rerun.FailuresByCode)
	if len(codes) == 0 {
		fmt.Fprintf(&b, "  none\n")
	}
	for _, c := range codes {
		fmt.Fprintf(&b, "  %-40s %6d | %d\n", c, r.Fresh.FailuresByCode[c], r.Rerun.FailuresByCode[c])
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

func secs(s float64) string { return (time.Duration(s * float64(time.Second))).Round(time.Second).String() }

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
