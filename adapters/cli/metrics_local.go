package cli

import (
	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/metrics"
	"github.com/hostforge/hostforge/adapters/worker"
	"github.com/hostforge/hostforge/flow"
)

// metricsListenFlag adds --metrics-listen to a command that runs workflows
// in-process, for a long local run to be watched as a worker is.
func metricsListenFlag(cmd *cobra.Command) *string {
	return cmd.Flags().String("metrics-listen", "", "serve Prometheus metrics of this run on http://ADDRESS/metrics while it runs (host:port; empty: none)")
}

// serveLocalMetrics serves every hostforge metric on addr/metrics and
// returns the observer the run's runtimes report to, and stop, which
// shuts the listener down. An empty addr serves nothing: the observer is
// nil and stop does nothing.
func (a *app) serveLocalMetrics(addr string) (flow.Observer, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	reg := metrics.NewRegistry()
	ex, err := metrics.NewExporters(reg)
	if err != nil {
		return nil, nil, err
	}
	// The address goes to the error stream: standard output may be -o json.
	stop, err := worker.ServeMetrics(reg, addr, a.streams.Err, nil)
	if err != nil {
		return nil, nil, err
	}
	return ex.Workflows, stop, nil
}
