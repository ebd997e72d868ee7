package fwsim

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Report is what a simulation did and found.
type Report struct {
	Config Config `json:"config"`
	// Wall is the real time of the run; PeakHeap the largest live heap
	// sampled (bytes); Virtual the simulated time to the end.
	Wall     time.Duration `json:"wall_ns"`
	PeakHeap uint64        `json:"peak_heap_bytes"`
	Virtual  time.Duration `json:"virtual_ns"`
	// Ticks are events handled; Passes manager passes; Started requests
	// created by them; Steps step calls; Restarts worker restarts; Crashes
	// worker deaths between an action and its write.
	Ticks    int `json:"ticks"`
	Passes   int `json:"passes"`
	Started  int `json:"started"`
	Steps    int `json:"steps"`
	Restarts int `json:"restarts"`
	Crashes  int `json:"crashes"`
	// CatalogChanges counts the operator's runtime overrides; Cancelled
	// the updates an operator cancelled while they ran (each handed its
	// host back, which a later pass selected again).
	CatalogChanges int `json:"catalog_changes"`
	Cancelled      int `json:"cancelled"`
	// End states.
	Compliant int `json:"compliant"`
	Exhausted int `json:"exhausted"`
	Unmatched int `json:"unmatched"`
	// Failures counts recorded failure codes of exhausted updates (and
	// any body error).
	Failures map[string]int `json:"failures"`
	// Violations are the broken invariants (none on success).
	Violations []string `json:"violations"`
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "fleet: %d hosts, seed %d (drifted %.0f%%, assigned %.0f%%, maintenance %.0f%%, faulty %.0f%% of drifted, ceiling %d%%)\n",
		c.Hosts, c.Seed, 100*c.Drifted, 100*c.Assigned, 100*c.Maintenance, 100*c.Faulty, c.CeilingPercent)
	fmt.Fprintf(&b, "wall %s, peak heap %.1f MiB, virtual %s\n", r.Wall.Round(time.Millisecond), float64(r.PeakHeap)/(1<<20), r.Virtual.Round(time.Minute))
	fmt.Fprintf(&b, "ticks %d, passes %d, requests started %d, step calls %d, restarts %d, crashes %d\n", r.Ticks, r.Passes, r.Started, r.Steps, r.Restarts, r.Crashes)
	fmt.Fprintf(&b, "catalog changes %d, updates cancelled while they ran %d\n", r.CatalogChanges, r.Cancelled)
	fmt.Fprintf(&b, "end: %d compliant, %d failed with their budget spent, %d flagged unmatched\n", r.Compliant, r.Exhausted, r.Unmatched)
	codes := make([]string, 0, len(r.Failures))
	for k := range r.Failures {
		codes = append(codes, k)
	}
	sort.Strings(codes)
	for _, k := range codes {
		fmt.Fprintf(&b, "  %s: %d\n", k, r.Failures[k])
	}
	if len(r.Violations) == 0 {
		b.WriteString("invariants: all held\n")
	} else {
		fmt.Fprintf(&b, "invariants: %d broken\n", len(r.Violations))
		for _, v := range r.Violations {
			b.WriteString("  " + v + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
