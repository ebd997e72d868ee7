package worker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hostforge/hostforge/adapters/metrics"
)

// shutdownTimeout bounds the graceful shutdown of one HTTP service.
const shutdownTimeout = 5 * time.Second

// services are the HTTP services a worker runs beside its Temporal
// worker, stopped in the reverse of the order they started (the metrics
// listener, started first, answers until the end).
type services struct {
	status  io.Writer
	log     *slog.Logger
	running []*httpService
	errs    chan error
}

type httpService struct {
	what string
	srv  *http.Server
	done chan struct{}
}

// serveMetrics serves reg on /metrics at addr.
func (s *services) serveMetrics(reg *prometheus.Registry, addr string, before func(context.Context)) error {
	mux := http.NewServeMux()
	h := metrics.Handler(reg)
	if before != nil {
		// What is read from elsewhere (the store) is brought up to date
		// as the metrics are read.
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			before(r.Context())
			inner.ServeHTTP(w, r)
		})
	}
	mux.Handle("/metrics", h)
	a, err := s.serve("metrics", mux, addr, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.status, "metrics on http://%s/metrics\n", a)
	return nil
}

// serveScout serves the on-host agent's server (TLS only) at addr.
func (s *services) serveScout(h http.Handler, addr string, cfg *tls.Config) error {
	if cfg == nil {
		return WorkerFailed.New("agent server on %s: no TLS certificate (firmware.scout.cert_file)", addr)
	}
	mux := http.NewServeMux()
	mux.Handle("/scout/", h)
	a, err := s.serve("agent server", mux, addr, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.status, "agent server on https://%s\n", a)
	return nil
}

func (s *services) serve(what string, h http.Handler, addr string, cfg *tls.Config) (string, error) {
	if s.errs == nil {
		s.errs = make(chan error, 4)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", WorkerFailed.Wrap(err, "%s: listening on %s", what, addr)
	}
	srv := &http.Server{Handler: h, Addr: ln.Addr().String(), ReadHeaderTimeout: 30 * time.Second, TLSConfig: cfg}
	hs := &httpService{what: what, srv: srv, done: make(chan struct{})}
	s.running = append(s.running, hs)
	go func() {
		defer close(hs.done)
		var err error
		if cfg != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errs <- fmt.Errorf("%s: %w", what, err)
		}
	}()
	return srv.Addr, nil
}

// stop shuts the services down, the last started first, each within
// shutdownTimeout. It is safe to call more than once.
func (s *services) stop() {
	for i := len(s.running) - 1; i >= 0; i-- {
		hs := s.running[i]
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		if err := hs.srv.Shutdown(ctx); err != nil {
			s.log.Warn("a service did not stop in time", "phase", "worker", "service", hs.what, "error", err.Error())
			_ = hs.srv.Close()
		}
		cancel()
		<-hs.done
	}
	s.running = nil
}

// failed delivers the first service failure (nil channel: never).
func (s *services) failed() <-chan error { return s.errs }

// ServeMetrics serves reg on http://addr/metrics until stop is called, for
// a process that runs workflows in-process (a long local run of the
// command line) and is to be watched as a worker is. It writes the
// address it listens on to status.
func ServeMetrics(reg *prometheus.Registry, addr string, status io.Writer, log *slog.Logger) (stop func(), err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &services{status: status, log: log}
	if err := s.serveMetrics(reg, addr, nil); err != nil {
		return nil, err
	}
	return s.stop, nil
}
