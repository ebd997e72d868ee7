package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/extevents"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
)

func (a *app) extListenCmd() *cobra.Command {
	var config, listen string
	var stopTimeout time.Duration
	var queue int
	cmd := &cobra.Command{
		Use:   "listen --config FILE [--listen ADDRESS]",
		Short: "Serve NetBox's event rules and fire extensions in process, without Temporal",
		Long: `Serve the endpoint of NetBox's event rules and dispatch the events in this
process, on the state store — for a site without Temporal ('hostforge
worker' serves the same endpoint and dispatches on Temporal).

NetBox posts to https://ADDRESS/netbox/events (an event rule on devices,
its webhook's secret the vault item extensions.netbox_events.secret_item).
Every request proves itself by X-Hook-Signature, the hex HMAC-SHA512 of the
body under that secret: an unsigned or wrongly signed one is answered 401
and fires nothing. A server leaving service fires serverDecommissioned then
serverDeleteDNS; a switch (extensions.switch_roles) reaching active fires
switchRegistered then switchCreateDNS, and leaving service
switchDecommissioned then switchDeleteDNS. A request delivered again fires
nothing new. With a ledger and Ironic instances, the Ironic projection runs
here too and fires serverInstanceUpdate.

Events are dispatched one at a time, in order; the records go to the
ledger's database, where 'extensions history' reads them. Ctrl-C stops
taking events and gives the queued ones --stop-timeout; events still queued
then are lost (NetBox's job can be requeued). The config file's keys are in
docs/config.md.

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled),
		Example: `  hostforge extensions listen --config /etc/hostforge/lab1.yaml
  hostforge extensions listen --config /etc/hostforge/lab1.yaml --listen 0.0.0.0:8644`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	configFlag(cmd, &config, "config file naming the systems, the extensions: section and the state store")
	f.StringVar(&listen, "listen", "", "host:port of the endpoint (default: extensions.netbox_events.listen)")
	f.DurationVar(&stopTimeout, "stop-timeout", 30*time.Second, "on Ctrl-C, how long the queued events may still be dispatched")
	f.IntVar(&queue, "queue", extevents.DefaultQueue, "occurrences waiting for dispatch at most; more are answered 503")
	logLevelFlag(cmd)
	format := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		switch {
		case config == "":
			return inputErr("--config is required: the endpoint, the extensions and the state store are the config file's")
		case stopTimeout < 0:
			return inputErr("--stop-timeout %s: want 0 or more", stopTimeout)
		case queue <= 0:
			return inputErr("--queue %d: want 1 or more", queue)
		}
		log, cfg, err := a.loggerAndConfig(cmd, config)
		if err != nil {
			return err
		}
		switch {
		case cfg.Extensions == nil:
			return usageErr(wiring.ConfigInvalid.New("%s: extensions: missing: the definitions the events fire", config))
		case cfg.Extensions.NetBoxEvents == nil:
			return usageErr(wiring.ConfigInvalid.New("%s: extensions.netbox_events: missing: the endpoint's cert_file, key_file and secret_item (and listen, or --listen)", config))
		case cfg.Ledger == nil:
			return usageErr(wiring.ConfigInvalid.New("%s: ledger: missing: 'extensions listen' keeps its execution records in the state store", config))
		}
		ctx := cmdContext(cmd)
		sys, err := a.openWiring(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer sys.Close()
		local := extevents.NewLocal(sys.Extensions, clock.Real{}, sys.Log, queue)
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
			defer cancel()
			local.Close(sctx)
		}()
		out := cmd.OutOrStdout()
		status := out
		if *format == formatJSON {
			status = io.Discard
		}
		sources, err := extevents.Start(ctx, sys, local, listen, true, status)
		if err != nil {
			return usageErr(err)
		}
		defer sources.Stop()
		projCtx, stopProj := context.WithCancel(ctx)
		defer stopProj()
		projecting := runProjection(projCtx, sys)
		if *format == formatJSON {
			if err := writeJSON(out, listenJSON{Site: sys.Site, Endpoint: sources.Addr}); err != nil {
				return err
			}
		}
		fmt.Fprintf(status, "dispatching in process on site %s; interrupt to stop\n", sys.Site)
		select {
		case <-ctx.Done():
		case err = <-sources.Err():
		}
		stopProj()
		projecting()
		sources.Stop()
		fmt.Fprintf(status, "stopping: queued events have %s to be dispatched\n", stopTimeout)
		return err
	}
	return cmd
}

// runProjection runs the ledger's projection of Ironic in process (a pass
// at once, then one every ledger.projection_interval) until ctx ends, so
// that the Ironic deploy watcher sees deploy transitions without a
// worker's schedule; wait returns once it has stopped. Without a
// projector (no ledger, or no Ironic instance) it runs nothing.
func runProjection(ctx context.Context, s *wiring.Systems) (wait func()) {
	if s.Projector == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Projector.RunEvery(ctx, clock.Real{}, s.Config.Ledger.ProjectionInterval.D())
	}()
	return func() { <-done }
}
