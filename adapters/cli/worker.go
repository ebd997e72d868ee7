package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/worker"
)

// temporalFlags are the flags that reach a Temporal frontend.
type temporalFlags struct {
	address, namespace, queue string
}

func (t *temporalFlags) add(cmd *cobra.Command, addressUsage string) {
	f := cmd.Flags()
	f.StringVar(&t.address, "temporal", "", addressUsage)
	f.StringVar(&t.namespace, "namespace", "default", "Temporal namespace")
	f.StringVar(&t.queue, "task-queue", temporal.DefaultTaskQueue, "Temporal task queue the worker polls and enrollments are submitted to")
}

func (a *app) workerCmd() *cobra.Command {
	var config string
	var tf temporalFlags
	var stopTimeout time.Duration
	var maxSteps int
	var metricsListen string
	var heartbeat time.Duration
	cmd := &cobra.Command{
		Use:   "worker --config FILE --temporal ADDRESS",
		Short: "Run a Temporal worker that enrols devices on the real systems a config file names",
		Long: `Run a Temporal worker on the real systems the config file names (the same
wiring as 'hostforge enroll --config'): it runs the enrollment workflow's
steps as activities, extension dispatch (serverRegistered after each
enrollment; with extensions.netbox_events, the endpoint of NetBox's event
rules; serverInstanceUpdate from the Ironic projection), the completion
proof's settlement with a ledger, and with firmware: the update workflows
and the on-host agent's server. Submit work with 'hostforge enroll --config
FILE --temporal ADDRESS DEVICE...'.

Workflows survive the worker: waits are durable timers, and a step a dead
worker left is rerun after --heartbeat-timeout — except an extension's SSH
command or playbook, which ends EXTENSION_TASK_INTERRUPTED for the operator
to redeliver. Several workers may poll one queue. Periodic work (the Ironic
projection, the firmware inventories and the update manager's pass) runs as
Temporal schedules of the site (hostforge/SITE/...), once per interval
however many workers there are; every worker creates or updates them.

Ctrl-C (or SIGTERM) stops polling and gives running steps --stop-timeout to
finish, then cancels them; their workflows carry on with the next worker.
The config file's keys are in docs/config.md. With -o json, one document is
printed once the worker polls (docs/json.md).

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled),
		Example: `  hostforge worker --config /etc/hostforge/lab1.yaml --temporal temporal.example.net:7233
  hostforge worker --config lab/lab.yaml --temporal 127.0.0.1:7233 --task-queue lab1
  hostforge worker --config /etc/hostforge/site.yaml --temporal 127.0.0.1:7233 --metrics-listen 0.0.0.0:9464`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	configFlag(cmd, &config, "config file naming the real systems (docs/config.md)")
	tf.add(cmd, "Temporal frontend host:port, e.g. 127.0.0.1:7233")
	f.DurationVar(&stopTimeout, "stop-timeout", 30*time.Second, "on Ctrl-C, how long running steps may finish before they are cancelled")
	f.IntVar(&maxSteps, "max-concurrent-steps", 0, "steps run at once by this worker (0: the Temporal SDK's default)")
	f.StringVar(&metricsListen, "metrics-listen", "", "serve Prometheus metrics on http://ADDRESS/metrics (host:port; empty: none)")
	f.DurationVar(&heartbeat, "heartbeat-timeout", temporal.DefaultHeartbeat, "how long a running step may go without a heartbeat before Temporal gives it to another worker (the wait a dead worker's steps cost)")
	logLevelFlag(cmd)
	format := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		switch {
		case config == "":
			return inputErr("--config is required: the worker runs on the systems a config file names")
		case tf.address == "":
			return inputErr("--temporal is required: the Temporal frontend's host:port")
		case stopTimeout < 0:
			return inputErr("--stop-timeout %s: want 0 or more", stopTimeout)
		case maxSteps < 0:
			return inputErr("--max-concurrent-steps %d: want 0 or more", maxSteps)
		case heartbeat < 3*time.Second:
			return inputErr("--heartbeat-timeout %s: want 3s or more (steps heartbeat every third of it, at most every 10s)", heartbeat)
		}
		if err := tf.check(); err != nil {
			return err
		}
		// Interrupted, running steps get --stop-timeout to finish (the
		// worker's promise), and the worker a second more to stop.
		a.stopGrace.Store(int64(stopTimeout + time.Second))
		log, cfg, err := a.loggerAndConfig(cmd, config)
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		sys, err := a.openWiring(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer sys.Close()
		c, err := temporal.Dial(ctx, tf.address, tf.namespace, log)
		if err != nil {
			return err
		}
		defer c.Close()
		out := cmd.OutOrStdout()
		opts := worker.Options{TaskQueue: tf.queue, MetricsListen: metricsListen, StopTimeout: stopTimeout,
			MaxConcurrentSteps: maxSteps, Activity: temporal.ActivityOptions{Heartbeat: heartbeat}, Status: out, Log: log}
		if *format == formatJSON {
			// One document, once the worker polls: the services' status
			// lines are left out.
			opts.Status = io.Discard
			opts.Ready = func() {
				_ = writeJSON(out, workerJSON{Temporal: tf.address, Namespace: tf.namespace, TaskQueue: tf.queue, Site: sys.Site, MetricsListen: metricsListen})
			}
		}
		w, err := worker.New(sys, c, opts)
		if err != nil {
			return err
		}
		if *format != formatJSON {
			fmt.Fprintf(out, "connected to Temporal at %s (namespace %s); interrupt to stop\n", tf.address, tf.namespace)
		}
		return w.Run(ctx)
	}
	return cmd
}
