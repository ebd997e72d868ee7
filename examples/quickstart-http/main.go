// Command quickstart-http enrols the quickstart's fake rack with NetBox read
// and written over HTTP: the REST emulator serves the rack's NetBox state on
// a loopback port and the real NetBox adapter talks to it. It then enrols
// the same rack again on the in-memory fake and shows, host by host, that
// both paths end the same way.
//
//	go run ./examples/quickstart-http
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/examples/internal/demo"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
)

// token is the emulator's API token; a real deployment reads it from a vault.
const token = "quickstart-token-0000000000000000000000000"

func main() {
	if err := run(context.Background(), os.Stdout, demo.Logger(os.Stderr)); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart-http:", err)
		os.Exit(1)
	}
}

// outcome is what became of one host, whichever NetBox path it took.
type outcome struct {
	result, platformClass string
	netboxTags, status    string
}

func run(ctx context.Context, w io.Writer, log *slog.Logger) error {
	overHTTP, requests, err := enrollOverHTTP(ctx, log)
	if err != nil {
		return err
	}
	inMemory := enrollInMemory(ctx, log)

	fmt.Fprintf(w, "NetBox over HTTP (%d requests) vs in memory\n\n", requests)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tRESULT\tSAME")
	hosts := make([]string, 0, len(overHTTP))
	for h := range overHTTP {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	diffs := 0
	for _, h := range hosts {
		same := "yes"
		if overHTTP[h] != inMemory[h] {
			same = fmt.Sprintf("NO: http %+v, memory %+v", overHTTP[h], inMemory[h])
			diffs++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", h, overHTTP[h].result, same)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if diffs > 0 {
		return fmt.Errorf("%d hosts ended differently over HTTP", diffs)
	}
	return nil
}

// enrollOverHTTP serves the rack through the emulator and enrols it through
// the adapter.
func enrollOverHTTP(ctx context.Context, log *slog.Logger) (map[string]outcome, int, error) {
	site := demo.NewSite()
	emu := netboxhttp.New(site.NetBox, netboxhttp.Options{Token: token})
	srv := httptest.NewServer(emu)
	defer srv.Close()
	nb, err := netbox.New(netbox.Config{URL: srv.URL, Token: token, Log: log})
	if err != nil {
		return nil, 0, err
	}
	exec := enrolltest.Executor(site, log)
	exec.NetBox = nb
	rows := demo.EnrollAll(ctx, site, exec, nb, demo.SiteConfig())
	return outcomes(site, rows), len(emu.Requests()), nil
}

func enrollInMemory(ctx context.Context, log *slog.Logger) map[string]outcome {
	site := demo.NewSite()
	exec := enrolltest.Executor(site, log)
	return outcomes(site, demo.EnrollAll(ctx, site, exec, site.NetBox, demo.SiteConfig()))
}

// outcomes reads each row's result and the host's final NetBox record.
func outcomes(site *fakes.Site, rows []demo.Row) map[string]outcome {
	out := map[string]outcome{}
	for _, r := range rows {
		o := outcome{result: "enrolled", platformClass: r.Result.PlatformClass}
		if r.Result.ProvisionState != "" {
			o.result = r.Result.ProvisionState
		}
		if r.Failure != nil {
			o.result = r.Failure.Code
		}
		site.NetBox.View(func(st *fakes.NetBoxState) {
			if d := st.DeviceByName(r.Host); d != nil {
				if rec, err := st.Intent(d); err == nil {
					o.status = string(rec.Status)
					o.netboxTags = strings.Join(rec.Tags, ",")
					o.platformClass += " / netbox:" + rec.PlatformClass
				}
			}
		})
		out[r.Host] = o
	}
	return out
}
