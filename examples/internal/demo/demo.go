// Package demo is the fake rack the examples enrol: a mix of healthy GPU,
// CPU and hypervisor hosts, and hosts broken in the ways NetBox data breaks
// in real life, each failing with its own classified code.
package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
)

// Site is the demo site's slug.
const Site = enrolltest.DemoSite

// NewSite builds the rack (see enrolltest.DemoRack for what each host is).
func NewSite() *fakes.Site { return enrolltest.DemoRack() }

// SiteConfig is the demo site's configuration: every phase on.
func SiteConfig() enrollment.SiteConfig { return enrolltest.DemoSiteConfig() }

// Row is one host's outcome.
type Row struct {
	Host   string
	Result enrollment.Result
	// Failure is set when the host failed (at submission or in the workflow).
	Failure *hostforge.Failure
	// Calls are the calls this host's enrollment made.
	Calls fakes.Calls
}

// EnrollAll enrols every host of the site one after the other (so each
// row's call counts are its own), reading NetBox through nb.
func EnrollAll(ctx context.Context, site *fakes.Site, exec *enrollment.Executor, nb enrollment.NetBox, cfg enrollment.SiteConfig) []Row {
	var rows []Row
	for _, name := range site.HostNames() {
		before := site.Calls()
		row := Row{Host: name}
		req, err := enrollment.Submit(ctx, nb, name, enrollment.SubmitOptions{Site: Site, Config: cfg, PlatformClassReady: true})
		if err == nil {
			rt := exec.Local(site.Clock)
			rt.Subject = name
			row.Result, err = enrollment.Enroll(ctx, rt, req)
		}
		if err != nil {
			_, row.Failure, _ = hostforge.Classify(err)
		}
		row.Calls = site.Calls().Sub(before)
		rows = append(rows, row)
	}
	return rows
}

// PrintTable writes the rows as a table, then each failure's operator action.
func PrintTable(w io.Writer, title string, rows []Row) {
	fmt.Fprintf(w, "%s\n\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tRESULT\tOWNER\tPLATFORM CLASS\tREADS\tWRITES")
	reads, writes := 0, 0
	for _, r := range rows {
		result, owner := "enrolled", "-"
		if r.Result.ProvisionState != "" {
			result = r.Result.ProvisionState
		}
		if r.Failure != nil {
			result, owner = r.Failure.Code, string(r.Failure.Owner)
		}
		pc := r.Result.PlatformClass
		if pc == "" {
			pc = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", r.Host, result, owner, pc, r.Calls.Reads(), r.Calls.Writes())
		reads += r.Calls.Reads()
		writes += r.Calls.Writes()
	}
	fmt.Fprintf(tw, "TOTAL\t\t\t\t%d\t%d\n", reads, writes)
	tw.Flush()
	var actions []string
	for _, r := range rows {
		if r.Failure != nil {
			actions = append(actions, fmt.Sprintf("  %s — %s\n      %s\n      next: %s", r.Host, r.Failure.Code, r.Failure.Message, r.Failure.Action))
		}
	}
	if len(actions) > 0 {
		fmt.Fprintf(w, "\nOperator actions:\n%s\n", strings.Join(actions, "\n"))
	}
}

// Logger is a quiet logger for the demos: errors only (the table says the rest).
func Logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelError}))
}
