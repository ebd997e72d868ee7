package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Side names.
const (
	SideLoop      = "loop"
	SideHostforge = "hostforge"
	// SidePolicy is hostforge without a Pace: the poll policy alone, for
	// comparison (not run by default).
	SidePolicy = "hostforge-policy"
	SideSDK    = "openstacksdk"
)

// Run is one side's run of the scenario.
type Run struct {
	Wall  time.Duration `json:"wall_ns"`
	Calls Calls         `json:"calls"`
}

// SideResult is a side over every round.
type SideResult struct {
	Side  string `json:"side"`
	Label string `json:"label"`
	// Poll is the side's poll interval (hostforge's shortest).
	Poll time.Duration `json:"poll_ns"`
	Runs []Run         `json:"runs"`
}

// Median is the median wall time.
func (s SideResult) Median() time.Duration {
	if len(s.Runs) == 0 {
		return 0
	}
	w := make([]time.Duration, len(s.Runs))
	for i, r := range s.Runs {
		w[i] = r.Wall
	}
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	if len(w)%2 == 1 {
		return w[len(w)/2]
	}
	return (w[len(w)/2-1] + w[len(w)/2]) / 2
}

func (s SideResult) span() (lo, hi time.Duration) {
	for i, r := range s.Runs {
		if i == 0 || r.Wall < lo {
			lo = r.Wall
		}
		if r.Wall > hi {
			hi = r.Wall
		}
	}
	return lo, hi
}

// ReadBytesPerNode is the mean bytes of read answers per node over the rounds.
func (s SideResult) ReadBytesPerNode(nodes int) float64 {
	if len(s.Runs) == 0 || nodes == 0 {
		return 0
	}
	var b int64
	for _, r := range s.Runs {
		b += r.Calls.ReadBytes
	}
	return float64(b) / float64(len(s.Runs)*nodes)
}

// PerNode is the mean calls per node over the rounds.
func (s SideResult) PerNode(nodes int) (reads, writes, conflicts float64) {
	if len(s.Runs) == 0 || nodes == 0 {
		return 0, 0, 0
	}
	for _, r := range s.Runs {
		reads += float64(r.Calls.Reads)
		writes += float64(r.Calls.Writes)
		conflicts += float64(r.Calls.Locked)
	}
	d := float64(len(s.Runs) * nodes)
	return reads / d, writes / d, conflicts / d
}

// Report is the whole benchmark.
type Report struct {
	Nodes  int    `json:"nodes"`
	Rounds int    `json:"rounds"`
	Ironic string `json:"ironic"`
	// FakeDelays are the [fake] delays the Ironic ran with ("power 3 s,
	// …"); empty: none.
	FakeDelays string `json:"fake_delays,omitempty"`
	// TimingScale is the factor hostforge's production ironic.Timing ran at.
	TimingScale float64      `json:"timing_scale,omitempty"`
	Sides       []SideResult `json:"sides"`
	// Verdict compares hostforge with the limit and openstacksdk.
	Verdict *Verdict `json:"verdict,omitempty"`
}

// Verdict holds the goals' figures: hostforge ≤ 1.05× the limit's wall time
// (WallMet) with ≤ 20 % of its reads (ReadsMet), and, when openstacksdk ran,
// no slower than it (SDKMet) with no more reads per node (SDKReadsMet). Met
// is all of them.
type Verdict struct {
	// WallVsLimit is hostforge's median wall time over the limit's (the
	// first loop); WallVsBestLoop over the fastest loop's.
	WallVsLimit    float64 `json:"wall_vs_limit"`
	WallVsBestLoop float64 `json:"wall_vs_best_loop"`
	ReadsVsLimit   float64 `json:"reads_vs_limit"`
	// WallVsSDK is hostforge's wall time over openstacksdk's and ReadsVsSDK
	// its reads per node over openstacksdk's (0 when not run).
	WallVsSDK   float64 `json:"wall_vs_sdk,omitempty"`
	ReadsVsSDK  float64 `json:"reads_vs_sdk,omitempty"`
	WallMet     bool    `json:"wall_met"`
	ReadsMet    bool    `json:"reads_met"`
	SDKMet      bool    `json:"sdk_met,omitempty"`
	SDKReadsMet bool    `json:"sdk_reads_met,omitempty"`
	Met         bool    `json:"met"`
}

// Goals of the verdict.
const (
	// GoalWallVsLimit is hostforge's wall time over the limit's at most.
	GoalWallVsLimit = 1.05
	// GoalReadsVsLimit is hostforge's reads over the limit's at most.
	GoalReadsVsLimit = 0.20
)

func (r *Report) side(name string) (SideResult, bool) {
	for _, s := range r.Sides {
		if s.Side == name {
			return s, true
		}
	}
	return SideResult{}, false
}

// judge fills the verdict when hostforge and the loop both ran.
func (r *Report) judge() {
	hf, ok1 := r.side(SideHostforge)
	lp, ok2 := r.side(SideLoop)
	if !ok1 || !ok2 || lp.Median() == 0 {
		return
	}
	hr, _, _ := hf.PerNode(r.Nodes)
	lr, _, _ := lp.PerNode(r.Nodes)
	v := &Verdict{WallVsLimit: hf.Median().Seconds() / lp.Median().Seconds()}
	best := lp.Median()
	for _, s := range r.Sides {
		if s.Side == SideLoop && s.Median() > 0 && s.Median() < best {
			best = s.Median()
		}
	}
	v.WallVsBestLoop = hf.Median().Seconds() / best.Seconds()
	if lr > 0 {
		v.ReadsVsLimit = hr / lr
	}
	v.WallMet, v.ReadsMet = v.WallVsLimit <= GoalWallVsLimit, v.ReadsVsLimit <= GoalReadsVsLimit
	v.Met = v.WallMet && v.ReadsMet
	if sdk, ok := r.side(SideSDK); ok && sdk.Median() > 0 {
		v.WallVsSDK = hf.Median().Seconds() / sdk.Median().Seconds()
		v.SDKMet = v.WallVsSDK <= 1
		if sr, _, _ := sdk.PerNode(r.Nodes); sr > 0 {
			v.ReadsVsSDK = hr / sr
		}
		v.SDKReadsMet = v.ReadsVsSDK <= 1
		v.Met = v.Met && v.SDKMet && v.SDKReadsMet
	}
	r.Verdict = v
}

// WriteText renders the table.
func (r *Report) WriteText(w io.Writer, detail bool) error {
	var b strings.Builder
	hw := "fake-hardware without delays"
	if r.FakeDelays != "" {
		hw = "fake-hardware with [fake] delays: " + r.FakeDelays
	}
	fmt.Fprintf(&b, "bench-ironic: %d nodes from nothing to available on %s (%s; no inspection), %d round(s)\n", r.Nodes, r.Ironic, hw, r.Rounds)
	if r.TimingScale > 0 {
		fmt.Fprintf(&b, "hostforge: production ironic.Timing x %s\n", ratio(r.TimingScale))
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "side\twall (median)\tmin\tmax\tvs limit\treads/node\twrites/node\t409s/node\tcalls/node\tKB read/node\t")
	var limit time.Duration
	if lp, ok := r.side(SideLoop); ok {
		limit = lp.Median()
	}
	for _, s := range r.Sides {
		lo, hi := s.span()
		rd, wr, cf := s.PerNode(r.Nodes)
		vs := "-"
		if limit > 0 {
			vs = fmt.Sprintf("%.2fx", s.Median().Seconds()/limit.Seconds())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%.2f\t%.1f\t%.1f\t\n", s.Label, secs(s.Median()), secs(lo), secs(hi), vs, rd, wr, cf, rd+wr, s.ReadBytesPerNode(r.Nodes)/1000)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if v := r.Verdict; v != nil {
		met := func(ok bool) string {
			if ok {
				return "met"
			}
			return "MISSED"
		}
		fmt.Fprintf(&b, "\ngoals for hostforge:\n")
		goal := func(what, got string, ok bool) { fmt.Fprintf(&b, "  %-34s %s -> %s\n", what+":", got, met(ok)) }
		goal(fmt.Sprintf("<= %.2fx the limit's wall time", GoalWallVsLimit), fmt.Sprintf("%.2fx (%.2fx the fastest loop's)", v.WallVsLimit, v.WallVsBestLoop), v.WallMet)
		goal(fmt.Sprintf("<= %.0f%% of the limit's reads", 100*GoalReadsVsLimit), fmt.Sprintf("%.1f%%", 100*v.ReadsVsLimit), v.ReadsMet)
		if v.WallVsSDK > 0 {
			goal("<= openstacksdk's wall time", fmt.Sprintf("%.2fx", v.WallVsSDK), v.SDKMet)
			goal("<= openstacksdk's reads per node", fmt.Sprintf("%.2fx", v.ReadsVsSDK), v.SDKReadsMet)
		}
	}
	if detail {
		for _, s := range r.Sides {
			fmt.Fprintf(&b, "\n%s: calls per route, all rounds\n", s.Label)
			all := Calls{ByRoute: map[string]int{}}
			for _, run := range s.Runs {
				for k, v := range run.Calls.ByRoute {
					all.ByRoute[k] += v
				}
			}
			for _, rt := range routes(all) {
				fmt.Fprintf(&b, "  %6d  %s\n", all.ByRoute[rt], rt)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ratio renders a scale as 1/N when it is one.
func ratio(f float64) string {
	if n := math.Round(1 / f); n >= 2 && math.Abs(1/f-n) < 1e-9 {
		return fmt.Sprintf("1/%d", int(n))
	}
	return fmt.Sprintf("%g", f)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
