// Package worker is hostforge's Temporal worker as a library: everything
// 'hostforge worker' runs, for a Go service that embeds hostforge to run
// the same.
//
//	sys, _ := wiring.Open(ctx, cfg, wiring.Options{})   // the config's systems
//	c, _ := temporal.Dial(ctx, "temporal:7233", "default", nil)
//	w, _ := worker.New(sys, c, worker.Options{TaskQueue: "site1", MetricsListen: ":9464"})
//	err := w.Run(ctx)                                    // until ctx ends
//
// [New] binds every workflow to the systems the config names — the
// enrollment, its durable settlement (with a ledger), extension dispatch,
// the firmware update (with a firmware: section) — and the site's periodic
// work: the Ironic projection (with a ledger and Ironic), the exploration
// of the managed hosts' firmware inventories and the update manager's pass
// (with a firmware: section). [Worker.Run] registers them all on one
// Temporal worker, starts the services the config names — the metrics
// listener (Options.MetricsListen), the on-host agent's server
// (firmware.scout) — converges the site's schedules, polls the task queue
// until its context ends, and stops in order: the Temporal worker first
// (running steps get Options.StopTimeout to finish; their workflows carry
// on with the next worker), then the agent server, then the metrics
// listener, which answers to the end.
//
// # Periodic work: one schedule per site and purpose
//
// The projection, the exploration and the pass are Temporal schedules
// named after the config's site (hostforge/<site>/<purpose>, see
// temporal.ScheduleID), with overlap policy skip. Every worker creates or
// updates them at start with the spec its config gives; the same spec
// converges (an equal schedule is left alone), so a site runs each once
// per interval however many workers poll it, and restarting every worker
// leaves one schedule per purpose. The intervals are
// ledger.projection_interval (projection) and
// firmware.settings.machine_update_run_interval (exploration and pass;
// the exploration reads the hosts whose reading is older than
// firmware.explore_interval). 'temporal schedule list' shows them. A
// purpose dropped from the config keeps its schedule until an operator
// deletes it (its runs time out after temporal.PeriodicRunTimeout on
// workers that no longer register the workflow). Without Temporal, one
// process runs the same work on flow.Every.
//
// # Metrics
//
// The worker's metrics live on a Prometheus registry (Options.Registry, or
// a new one with the Go and process collectors): the firmware metrics
// today. An embedding service hands in its own registry to add collectors
// or to serve them itself; collectors of its own are registered on it
// before Run. With Options.MetricsListen the worker serves the registry on
// /metrics.
package worker
