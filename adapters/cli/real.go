package cli

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

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

// configRefused makes a config the wiring refuses a usage error (exit 2);
// any other error, a system that refuses, keeps its own code.
func configRefused(err error) error {
	if ConfigInvalid.Is(err) {
		return usageErr(err)
	}
	return err
}

// loggerAndConfig reads --log-level, then loads the config file: the
// start of every command that runs on the systems a config names.
func (a *app) loggerAndConfig(cmd *cobra.Command, path string) (*slog.Logger, *wiring.Config, error) {
	log, err := a.logger(cmd)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := loadConfigFile(path)
	if err != nil {
		return nil, nil, err
	}
	return log, cfg, nil
}

// openWiring connects the systems a config file names through the one
// wiring every command and the worker share. A config the wiring refuses is
// a usage error; a system that refuses keeps its own code.
func (a *app) openWiring(ctx context.Context, cfg *wiring.Config, log *slog.Logger) (*wiring.Systems, error) {
	return a.openWiringWith(ctx, cfg, wiring.Options{Log: log})
}

// openWiringWith is openWiring with the caller's options (a submit-only
// opening); the environment and the secrets are always the app's.
func (a *app) openWiringWith(ctx context.Context, cfg *wiring.Config, o wiring.Options) (*wiring.Systems, error) {
	o.Getenv, o.Secrets = a.getenv, a.secrets
	ws, err := wiring.Open(ctx, cfg, o)
	if err != nil {
		return nil, configRefused(err)
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
