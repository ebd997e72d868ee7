package cli

import (
	"context"
	"log/slog"

	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
)

// EnvNetBoxToken is the default environment variable holding the NetBox token.
const EnvNetBoxToken = wiring.EnvNetBoxToken

// loadConfigFile reads and validates a config file; a bad one, or one a
// stopped lab wrote, is a usage error (exit code 2).
func loadConfigFile(path string) (*wiring.Config, error) {
	cfg, err := wiring.Load(path)
	if err != nil {
		return nil, usageErr(err)
	}
	if err := checkLab(path); err != nil {
		return nil, err
	}
	return cfg, nil
}

// openWiring connects the systems a config file names through the one
// wiring every command and the worker share. A config the wiring refuses is
// a usage error; a system that refuses keeps its own code.
func (a *app) openWiring(ctx context.Context, cfg *wiring.Config, log *slog.Logger) (*wiring.Systems, error) {
	ws, err := wiring.Open(ctx, cfg, wiring.Options{Log: log, Getenv: a.getenv, Secrets: a.secrets})
	if err != nil {
		if ConfigInvalid.Is(err) {
			return nil, usageErr(err)
		}
		return nil, err
	}
	return ws, nil
}

// realSystems connects to the systems a config file names.
func (a *app) realSystems(ctx context.Context, cfg *wiring.Config, log *slog.Logger) (*systems, error) {
	ws, err := a.openWiring(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	return &systems{
		site:       ws.Site,
		netbox:     ws.NetBox,
		lister:     ws.NetBox,
		fleet:      ws.FleetManager,
		exec:       ws.Enrollment,
		clock:      clock.Real{},
		siteConfig: ws.SiteConfig,
		pcReady:    ws.PlatformClassReady,
		log:        log,
		wired:      ws,
		ledger:     newLedgerWiring(ws, log),
		closers:    []func(){func() { _ = ws.Close() }},
	}, nil
}
