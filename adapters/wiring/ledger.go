package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/ironic"
)

// The fleet manager's ledger: the ledger: section of the config.
//
// With the section, Open wires a [Ledger] as the fleet manager
// (Systems.FleetManager: the platform-class phase records platform_class in
// it) and as the completion-proof store (Systems.Proofs), and a projector of
// every Ironic instance's nodes into it (Systems.Projector). Without it, the
// platform-class gate is refused.

// ledgerConnectTimeout bounds one attempt to open and migrate the ledger.
const ledgerConnectTimeout = 30 * time.Second

// validateLedger checks the ledger section while the config is read.
func (c *Config) validateLedger() error {
	if c.Ledger == nil {
		return nil
	}
	var ce *sqlstore.ConfigError
	if err := c.Ledger.Validate(); errors.As(err, &ce) {
		return c.keyError("ledger."+ce.Key, "%s", ce.Reason)
	}
	return nil
}

// OpenLedger opens the ledger the config's ledger: section names, with its
// schema migrated, for commands that read or project the ledger alone
// (hostforge ledger show|project). Close the database when done. Errors:
// CONFIG_INVALID when the config has no ledger: section or its DSN file is
// unusable, STATE_STORE_UNAVAILABLE when the database does not answer;
// neither carries the DSN.
func OpenLedger(ctx context.Context, cfg *Config) (*sqlstore.Ledger, *sqlstore.DB, error) {
	if cfg.Ledger == nil {
		return nil, nil, cfg.invalid("ledger", "missing: this command needs the fleet manager's ledger (driver: sqlite with path, or driver: postgres with dsn_file)")
	}
	l, db, err := sqlstore.OpenLedger(ctx, *cfg.Ledger)
	var ce *sqlstore.ConfigError
	switch {
	case errors.As(err, &ce):
		return nil, nil, cfg.invalid("ledger."+ce.Key, "%s", ce.Reason)
	case err != nil:
		return nil, nil, hostforge.Classified(err)
	}
	return l, db, nil
}

// openLedger is Open's part for the ledger: section. Without the section,
// the platform-class gate is refused (before any system is contacted). With
// it, the ledger is opened; a database that does not answer is logged and
// wired anyway, reconnecting on each call, so the platform-class phase and
// proof fail with their codes while it is down and work once it is back.
func openLedger(ctx context.Context, cfg *Config, s *Systems, log *slog.Logger) error {
	if cfg.Ledger == nil {
		if cfg.Gates.PlatformClassActivityReady {
			return cfg.invalid("gates.platform_class_activity_ready", "is on, but it needs the fleet manager's ledger: add the ledger: section (driver: sqlite with path, or driver: postgres with dsn_file), or turn the gate off")
		}
		return nil
	}
	l := &Ledger{cfg: *cfg.Ledger}
	if _, err := l.ledger(ctx); err != nil {
		var ce *sqlstore.ConfigError
		switch {
		case errors.As(err, &ce):
			return cfg.invalid("ledger."+ce.Key, "%s", ce.Reason)
		case ctx.Err() != nil:
			return hostforge.Cancelled.Wrap(ctx.Err(), "opening the ledger")
		}
		log.Error("the fleet manager's ledger does not answer; platform classes and completion proof fail until it does", "phase", "wiring", "driver", cfg.Ledger.Driver, "error", err.Error())
	}
	s.Ledger, s.FleetManager, s.Proofs = l, l, l
	s.OnClose(l.Close)
	if len(cfg.Ironic) > 0 {
		listers, err := NodeListers(cfg, log)
		if err != nil {
			return err
		}
		s.Projector = &enrollment.Projector{Instances: listers, Ledger: l, Log: log}
	}
	return nil
}

// Ledger is the ledger a config names, as Open wires it: the fleet manager
// (enrollment.FleetManager), the proof store (enrollment.ProofStore) and the
// projection's ledger (enrollment.ReferenceLedger). It opens the database on
// first use and again after an attempt failed, so a ledger that was down
// when a long-running worker started is used once it answers. While it does
// not answer, every call fails wrapping hostforge.ErrUnavailable.
type Ledger struct {
	cfg sqlstore.LedgerConfig
	mu  sync.Mutex
	l   *sqlstore.Ledger
	db  *sqlstore.DB
}

var (
	_ enrollment.FleetManager    = (*Ledger)(nil)
	_ enrollment.ProofStore      = (*Ledger)(nil)
	_ enrollment.ReferenceLedger = (*Ledger)(nil)
)

// ledger returns the open ledger, opening it if needed. A failure is the
// store's, unwrapped: a *sqlstore.ConfigError or STATE_STORE_UNAVAILABLE.
func (w *Ledger) ledger(ctx context.Context) (*sqlstore.Ledger, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.l != nil {
		return w.l, nil
	}
	cctx, cancel := context.WithTimeout(ctx, ledgerConnectTimeout)
	defer cancel()
	l, db, err := sqlstore.OpenLedger(cctx, w.cfg)
	if err != nil {
		return nil, err
	}
	w.l, w.db = l, db
	return l, nil
}

// get is ledger for the interface methods: an open failure wraps
// hostforge.ErrUnavailable, so each consumer raises its own code.
func (w *Ledger) get(ctx context.Context) (*sqlstore.Ledger, error) {
	l, err := w.ledger(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger (%s): %v: %w", w.cfg.Driver, err, hostforge.ErrUnavailable)
	}
	return l, nil
}

// Close closes the database if it was opened.
func (w *Ledger) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.db == nil {
		return nil
	}
	err := w.db.Close()
	w.l, w.db = nil, nil
	return err
}

// Register records the device with a new identity unless the ledger knows
// it, and returns its identity (sqlstore.Ledger.Register).
func (w *Ledger) Register(ctx context.Context, device string) (string, error) {
	l, err := w.get(ctx)
	if err != nil {
		return "", err
	}
	return l.Register(ctx, device)
}

// PlatformClass implements enrollment.FleetManager.
func (w *Ledger) PlatformClass(ctx context.Context, device string) (string, error) {
	l, err := w.get(ctx)
	if err != nil {
		return "", err
	}
	return l.PlatformClass(ctx, device)
}

// SetPlatformClass implements enrollment.FleetManager.
func (w *Ledger) SetPlatformClass(ctx context.Context, device, value string) error {
	l, err := w.get(ctx)
	if err != nil {
		return err
	}
	return l.SetPlatformClass(ctx, device, value)
}

// Snapshot implements enrollment.ProofStore.
func (w *Ledger) Snapshot(ctx context.Context, device string) (string, int64, error) {
	l, err := w.get(ctx)
	if err != nil {
		return "", 0, err
	}
	return l.Snapshot(ctx, device)
}

// ProveEnrollment implements enrollment.ProofStore.
func (w *Ledger) ProveEnrollment(ctx context.Context, device, identity, reference string, since int64, run string, deadline time.Time) (string, error) {
	l, err := w.get(ctx)
	if err != nil {
		return "", err
	}
	return l.ProveEnrollment(ctx, device, identity, reference, since, run, deadline)
}

// FailEnrollment implements enrollment.ProofStore.
func (w *Ledger) FailEnrollment(ctx context.Context, device, identity, run string) (bool, error) {
	l, err := w.get(ctx)
	if err != nil {
		return false, err
	}
	return l.FailEnrollment(ctx, device, identity, run)
}

// ProjectedReferences implements enrollment.ReferenceLedger.
func (w *Ledger) ProjectedReferences(ctx context.Context) (map[string]string, error) {
	l, err := w.get(ctx)
	if err != nil {
		return nil, err
	}
	return l.ProjectedReferences(ctx)
}

// ProjectReference implements enrollment.ReferenceLedger.
func (w *Ledger) ProjectReference(ctx context.Context, device, reference string) (bool, error) {
	l, err := w.get(ctx)
	if err != nil {
		return false, err
	}
	return l.ProjectReference(ctx, device, reference)
}

// NodeListers returns a node lister per Ironic instance of the config, by
// instance name: what the projector lists. Each connects on its first
// listing, so an instance that is down fails only its own part of a pass
// (its devices keep their references). A CA file that does not read is
// CONFIG_INVALID.
func NodeListers(cfg *Config, log *slog.Logger) (map[string]enrollment.NodeLister, error) {
	out := make(map[string]enrollment.NodeLister, len(cfg.Ironic))
	for i, ic := range cfg.Ironic {
		icfg, err := ironicClientConfig(cfg, i, log)
		if err != nil {
			return nil, err
		}
		out[ic.Name] = &lazyIronic{cfg: icfg}
	}
	return out, nil
}

// lazyIronic is an Ironic API client that connects when first used.
type lazyIronic struct {
	cfg ironicapi.Config
	mu  sync.Mutex
	c   *ironicapi.Client
}

// ironicListConnectTimeout bounds the microversion negotiation of a lister.
const ironicListConnectTimeout = 60 * time.Second

// ListNodes connects if needed and lists the instance's nodes.
func (l *lazyIronic) ListNodes(ctx context.Context) ([]ironic.Node, error) {
	l.mu.Lock()
	if l.c == nil {
		cctx, cancel := context.WithTimeout(ctx, ironicListConnectTimeout)
		c, err := ironicapi.New(cctx, l.cfg)
		cancel()
		if err != nil {
			l.mu.Unlock()
			return nil, err
		}
		l.c = c
	}
	c := l.c
	l.mu.Unlock()
	return c.ListNodes(ctx)
}
