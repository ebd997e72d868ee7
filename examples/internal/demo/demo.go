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
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// Site is the demo site's slug.
const Site = "lab1"

// NewSite builds the rack.
func NewSite() *fakes.Site {
	site := fakes.NewSite()
	site.AddIronic("ironic-gpu")
	site.AddIronic("ironic-cpu")
	ib := map[string]any{"infiniband": map[string]any{"rails": 8}}
	for _, h := range []fakes.HostSpec{
		{Name: "gpu-r1-u02", Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: ib, Vendor: "lenovo"},
		{Name: "gpu-r1-u06", Class: intent.ClassGPUCompute, Manufacturer: "NVIDIA", Model: "DGX H100", GPUType: "H100", Vendor: "ami"},
		{Name: "cpu-r1-u10", Class: intent.ClassCPUBaremetal, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell"},
		{Name: "cpu-r1-u11", Class: intent.ClassCPUBaremetal, Manufacturer: "Supermicro", Model: "SYS-821GE-TNHR", Vendor: "supermicro"},
		{Name: "hv-r1-u14", Class: intent.ClassHypervisor, Manufacturer: "Dell", Model: "PowerEdge R7615", Vendor: "dell", Status: intent.StatusActive},
		// Broken in NetBox, each in its own way.
		{Name: "bad-noclass-u16", NoClass: true},
		{Name: "bad-switch-u17", Class: intent.ClassSwitch},
		{Name: "bad-offline-u18", Status: intent.StatusOffline},
		{Name: "bad-nogputype-u20", Class: intent.ClassGPUCompute, Manufacturer: "Dell", Model: "PowerEdge XE9680"},
		{Name: "bad-ztp-u24", Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: map[string]any{}, Vendor: "lenovo"},
		{Name: "gpu-divergent-u28", Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: ib, PlatformClass: "GB200_LENOVOHG635N_IB_01", Vendor: "lenovo"},
	} {
		site.AddHost(h)
	}
	// Broken on site, while NetBox is right: a patch cable moved to another
	// switch port, and a host whose optics are all dead.
	moved := site.AddHost(fakes.HostSpec{Name: "bad-miscabled-u30", Class: intent.ClassCPUBaremetal, Vendor: "dell"})
	moved.NICs[1].Port = "swp60"
	dead := site.AddHost(fakes.HostSpec{Name: "bad-optics-u32", Class: intent.ClassCPUBaremetal, Vendor: "dell"})
	for i := range dead.NICs {
		dead.NICs[i].Link = "down"
	}
	return site
}

// SiteConfig is the demo site's configuration: every phase on.
func SiteConfig() enrollment.SiteConfig {
	return enrollment.SiteConfig{
		ConfigureDHCP: true,
		ConfigureBMC:  true,
		IronicEnrol:   true,
		IronicInstances: map[string]string{
			intent.ClassGPUCompute:   "ironic-gpu",
			intent.ClassCPUBaremetal: "ironic-cpu",
			intent.ClassHypervisor:   "ironic-cpu",
		},
		EnrolProject: "baremetal-enrol",
	}
}

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
		req, err := enrollment.Submit(ctx, nb, name, Site, cfg, true, enrollment.Params{})
		if err == nil {
			rt := &enrollment.Local{Exec: exec, Clock: site.Clock, Device: name}
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
