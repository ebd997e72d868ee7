package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/metrics"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/flow"
)

func (a *app) fwRunCmd() *cobra.Command {
	var metricsListen string
	cmd := &cobra.Command{
		Use:   "run --config FILE",
		Short: "Run the update manager and the update workflows in this process, without Temporal",
		Long: `Keep the managed hosts at their firmware catalog without a Temporal server: the
update manager's cycle (the inventories that got older than
firmware.explore_interval, the pass, its gauges) every
firmware.settings.machine_update_run_interval, and each reprovisioning
request's update workflow on the local runtime, in this process, with the
state in the database the ledger: section names (SQLite, a file, is the
embedded default). With firmware.scout it serves the on-host agent too;
--metrics-listen serves /metrics.

It can be stopped (Ctrl-C, SIGTERM) or killed at any point: every update's
state is in the database, a push and a reset are recorded before they are
sent, and a run started again resumes each update at its persisted step — a
push whose answer was lost is asked of the BMC before anything is sent again.
Run one 'firmware run' (or Temporal workers) per state database.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware run --config /etc/hostforge/site.yaml
  hostforge firmware run --config site.yaml --metrics-listen 127.0.0.1:9464 --log-level info`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&metricsListen, "metrics-listen", "", "serve Prometheus metrics on http://ADDRESS/metrics (host:port; empty: none)")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.run(cmd, func(o *fwOps) error {
			return runFirmwareLocally(cmd.Context(), o.fs, metricsListen, cmd.OutOrStdout(), o.out == formatJSON, o.log)
		})
	}
	return cmd
}

// localRunner runs the update workflows of a site in this process: one
// body per request on flow.Local, started on a tick, never two for one
// machine.
type localRunner struct {
	fw    *wiring.FirmwareSystems
	steps flow.Steps
	log   *slog.Logger

	mu      sync.Mutex
	running map[string]bool
	wg      sync.WaitGroup
}

// start starts the body of every request that has none running and has
// not spent its retry budget.
func (r *localRunner) start(ctx context.Context) {
	reqs, err := r.fw.Store.Requests(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("listing the reprovisioning requests", "err", err)
		}
		return
	}
	maxRetries := r.fw.Settings.WithDefaults().MaxRetries
	for _, req := range reqs {
		m := req.MachineID
		r.mu.Lock()
		busy := r.running[m]
		r.mu.Unlock()
		if busy {
			continue
		}
		if u, ok, err := r.fw.Store.Update(ctx, m); err != nil || (ok && u.Exhausted(maxRetries)) {
			continue
		}
		r.mu.Lock()
		r.running[m] = true
		r.mu.Unlock()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer func() { r.mu.Lock(); delete(r.running, m); r.mu.Unlock() }()
			rt := &flow.Local{Steps: r.steps, Clock: clock.Real{}, Subject: m, SubjectKey: "machine", Log: r.log}
			res, err := firmware.Update(ctx, rt, firmware.UpdateInput{MachineID: m})
			switch {
			case ctx.Err() != nil:
			case err == nil:
				r.log.Info("firmware update ended", "machine", m, "outcome", res.Outcome, "uploads", res.Uploads)
			default:
				r.log.Warn("firmware update ended", "machine", m, "outcome", res.Outcome, "code", hostforge.CodeOf(err), "err", err)
			}
		}()
		r.log.Info("firmware update workflow started", "machine", m)
	}
}

// runFirmwareLocally runs the cycle and the workflows until ctx ends. With
// asJSON, out gets one document (firmwareRunJSON) once the servers listen,
// and none of the text lines.
func runFirmwareLocally(ctx context.Context, fw *wiring.FirmwareSystems, metricsListen string, out io.Writer, asJSON bool, log *slog.Logger) error {
	doc := firmwareRunJSON{}
	stdout := out
	if asJSON {
		out = io.Discard
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	reg := metrics.NewRegistry()
	fm, err := metrics.NewFirmware(reg)
	if err != nil {
		return err
	}
	fw.Executor.Metrics = fm
	r := &localRunner{fw: fw, steps: fw.Executor.Steps(), log: log, running: map[string]bool{}}
	var servers []*http.Server
	errs := make(chan error, 2)
	serve := func(h http.Handler, addr string, tlsOn bool, what string) (string, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", inputErr("%s: listening on %s: %v", what, addr, err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
		servers = append(servers, srv)
		go func() {
			var err error
			if tlsOn {
				srv.TLSConfig = fw.ScoutTLS
				err = srv.ServeTLS(ln, "", "")
			} else {
				err = srv.Serve(ln)
			}
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("%s: %w", what, err)
			}
		}()
		return ln.Addr().String(), nil
	}
	defer func() {
		for _, s := range servers {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = s.Shutdown(sctx)
			cancel()
		}
	}()
	if metricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics.Handler(reg))
		addr, err := serve(mux, metricsListen, false, "metrics")
		if err != nil {
			return err
		}
		doc.MetricsURL = "http://" + addr + "/metrics"
		fmt.Fprintf(out, "metrics on %s\n", doc.MetricsURL)
	}
	if fw.Scout != nil {
		mux := http.NewServeMux()
		mux.Handle("/scout/", fw.Scout)
		addr, err := serve(mux, fw.ScoutListen, true, "agent server")
		if err != nil {
			return err
		}
		doc.AgentURL = "https://" + addr
		fmt.Fprintf(out, "agent server on %s\n", doc.AgentURL)
	}
	host, _ := os.Hostname()
	cycle := fw.Cycle(fm, log, fmt.Sprintf("%s/%d", host, os.Getpid()))
	interval := fw.Settings.WithDefaults().RunInterval
	startEvery := min(interval, 5*time.Second)
	fmt.Fprintf(out, "firmware run: the update manager every %s, the update workflows in this process; interrupt to stop\n", interval)
	if asJSON {
		doc.IntervalSeconds = interval.Seconds()
		if err := writeJSON(stdout, doc); err != nil {
			return err
		}
	}
	// The cycle (exploration and pass) runs on its own ticker, a run that
	// is still going when the next is due skipped; the workflows start on
	// theirs, so that a long exploration never delays them.
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if _, err := cycle.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("the firmware update manager's pass failed", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	tick := time.NewTicker(startEvery)
	defer tick.Stop()
	for {
		r.start(ctx)
		select {
		case <-ctx.Done():
			stop()
			r.wg.Wait()
			fmt.Fprintln(out, "firmware run stopped")
			return nil
		case err := <-errs:
			stop()
			r.wg.Wait()
			return err
		case <-tick.C:
		}
	}
}
