package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/hostforge/hostforge/adapters/metrics"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
)

// firmwareWorkflow is the firmware update on the wired systems; the zero
// Workflow (nothing registered) without the config's firmware: section.
func firmwareWorkflow(s *wiring.Systems) (temporal.Workflow, error) {
	if s.Firmware == nil {
		return temporal.Workflow{}, nil
	}
	return temporal.Workflow{Name: "firmware", Steps: s.Firmware.Executor.Steps(), Definitions: []temporal.Definition{temporal.FirmwareUpdate}}, nil
}

// metricsSetup is the worker's registry and, with the firmware: section,
// the firmware metrics the update workflow's steps report to.
type metricsSetup struct {
	registry *prometheus.Registry
	firmware *metrics.Firmware
}

// prepareMetrics makes the registry and wires the firmware metrics into
// the update executor (before its steps are built).
func prepareMetrics(sys *wiring.Systems) (*metricsSetup, error) {
	m := &metricsSetup{registry: metrics.NewRegistry()}
	if sys.Firmware != nil {
		f, err := metrics.NewFirmware(m.registry)
		if err != nil {
			return nil, err
		}
		m.firmware = f
		sys.Firmware.Executor.Metrics = f
	}
	return m, nil
}

// workerServices are what 'hostforge worker' runs beside its Temporal
// worker: /metrics, and with the firmware: section the update manager's
// pass (which also starts the update workflows) and the agent server.
type workerServices struct {
	wg      sync.WaitGroup
	servers []*http.Server
	errs    chan error
}

// startWorkerServices starts them; stop them with stop. Metrics must be
// wired before the workflows' steps are built (see prepareMetrics).
func startWorkerServices(ctx context.Context, sys *wiring.Systems, reg *metricsSetup, c client.Client, queue, metricsListen string, out io.Writer, log *slog.Logger) (*workerServices, error) {
	ws := &workerServices{errs: make(chan error, 4)}
	if reg == nil {
		reg = &metricsSetup{registry: metrics.NewRegistry()}
	}
	if metricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics.Handler(reg.registry))
		if err := ws.serve(mux, metricsListen, nil, "metrics"); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "metrics on http://%s/metrics\n", ws.servers[len(ws.servers)-1].Addr)
	}
	fw := sys.Firmware
	if fw == nil {
		return ws, nil
	}
	if fw.Scout != nil {
		mux := http.NewServeMux()
		mux.Handle("/scout/", fw.Scout)
		if err := ws.serve(mux, fw.ScoutListen, fw.ScoutTLS, "agent server"); err != nil {
			ws.stop()
			return nil, err
		}
		fmt.Fprintf(out, "agent server on https://%s\n", ws.servers[len(ws.servers)-1].Addr)
	}
	host, _ := os.Hostname()
	m := &firmware.Manager{Store: fw.Store, Hosts: fw.Hosts, Catalog: fw.Catalog, Settings: fw.Settings, Clock: clock.Real{},
		Holder: fmt.Sprintf("%s/%d", host, os.Getpid())}
	ws.wg.Add(1)
	go func() {
		defer ws.wg.Done()
		interval := fw.Settings.WithDefaults().RunInterval
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			var fm firmware.Metrics
			if reg.firmware != nil {
				fm = reg.firmware
			}
			passOnce(ctx, m, fw, fm, c, queue, log)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return ws, nil
}

// passOnce runs one firmware cycle (under the pass lock: the
// inventories that got old, the update manager's pass, its figures stored;
// the gauges published either way) and starts the update workflow of
// every request that has none running.
func passOnce(ctx context.Context, m *firmware.Manager, fw *wiring.FirmwareSystems, fm firmware.Metrics, c client.Client, queue string, log *slog.Logger) {
	cycle := &firmware.Cycle{Manager: m, Explorer: fw.Explorer, Metrics: fm, Log: log}
	if _, err := cycle.Run(ctx); err != nil && ctx.Err() == nil {
		log.Error("the firmware update manager's pass failed", "err", err)
	}
	started, err := temporal.StartFirmwareUpdates(ctx, c, queue, fw.Store, fw.Settings)
	if err != nil && ctx.Err() == nil {
		log.Error("starting firmware update workflows", "err", err)
	}
	if len(started) > 0 {
		log.Info("firmware update workflows started", "machines", started)
	}
}

func (ws *workerServices) serve(h http.Handler, addr string, tlsCfg *tls.Config, what string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return inputErr("%s: listening on %s: %v", what, addr, err)
	}
	srv := &http.Server{Handler: h, Addr: ln.Addr().String(), ReadHeaderTimeout: 30 * time.Second}
	ws.servers = append(ws.servers, srv)
	ws.wg.Add(1)
	go func() {
		defer ws.wg.Done()
		var err error
		if tlsCfg != nil {
			srv.TLSConfig = tlsCfg
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			ws.errs <- fmt.Errorf("%s: %w", what, err)
		}
	}()
	return nil
}

// stop shuts the servers down and waits for the pass loop (whose context
// the caller cancelled).
func (ws *workerServices) stop() {
	for _, s := range ws.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.Shutdown(ctx)
		cancel()
	}
	ws.wg.Wait()
}
