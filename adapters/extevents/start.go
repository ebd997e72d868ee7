package extevents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/extensions"
)

// Sources are the event sources Start runs.
type Sources struct {
	// Addr is the endpoint's address ("" without the endpoint).
	Addr string

	srv  *http.Server
	wg   sync.WaitGroup
	errs chan error
}

// errNoSection: the config has no endpoint to serve and one is required.
var errNoSection = errors.New("the config has no extensions.netbox_events section (listen, cert_file, key_file, secret_item)")

// Start runs the event sources of a long-lived process on the wired
// systems: the Ironic deploy watcher submits through sub, and with
// extensions.netbox_events the endpoint of NetBox's event rules listens
// (on listen when it is not empty, else the section's address) and
// submits through sub; its certificate and the webhook's secret are read
// here (wiring.OpenNetBoxEvents), so only a process that serves the
// endpoint needs them. It returns once the endpoint listens; Stop shuts
// it down. Without extensions it starts nothing. With requireEndpoint set
// and no extensions.netbox_events section, it refuses (CONFIG_INVALID).
func Start(ctx context.Context, sys *wiring.Systems, sub extensions.Submitter, listen string, requireEndpoint bool, out io.Writer) (*Sources, error) {
	s := &Sources{errs: make(chan error, 1)}
	if sys == nil || sys.Extensions == nil {
		if requireEndpoint {
			return nil, wiring.ConfigInvalid.New("extensions: the config has no extensions: section; there is nothing to dispatch")
		}
		return s, nil
	}
	if sys.DeployWatcher != nil {
		sys.DeployWatcher.Submitter = sub
	}
	ev, err := wiring.OpenNetBoxEvents(ctx, sys.Config, sys)
	if err != nil {
		return nil, err
	}
	if ev == nil {
		if requireEndpoint {
			return nil, wiring.ConfigInvalid.New("extensions.netbox_events: %v", errNoSection)
		}
		return s, nil
	}
	if listen == "" {
		listen = ev.Listen
	}
	log := sys.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{Secret: ev.Secret, Rules: ev.Rules, Dispatcher: sys.Extensions, Submitter: sub, Log: log}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, wiring.ConfigInvalid.New("extensions.netbox_events.listen: listening on %s: %v", listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	s.srv = &http.Server{Handler: mux, Addr: ln.Addr().String(), TLSConfig: ev.TLS.Clone(),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	s.Addr = s.srv.Addr
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("the NetBox events endpoint stopped", "phase", extensions.Phase, "error", err.Error())
			s.errs <- fmt.Errorf("NetBox events endpoint: %w", err)
		}
	}()
	if out != nil {
		fmt.Fprintf(out, "NetBox events endpoint on https://%s%s\n", s.Addr, Path)
	}
	return s, nil
}

// Err reports the endpoint failing after it started.
func (s *Sources) Err() <-chan error { return s.errs }

// Stop shuts the endpoint down (requests in flight get 5 s).
func (s *Sources) Stop() {
	if s == nil || s.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	s.wg.Wait()
}
