package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
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
wiring as 'hostforge enroll --config'): it polls the task queue for the
enrollment workflow and runs each of its steps as an activity, with NetBox,
the vault, the DHCP server, the BMCs (the link guard reads them too) and
every Ironic instance of the config. It also runs extension dispatch: with
an extensions: section, each enrollment submitted from a config that has
one fires serverRegistered once it succeeds, as a workflow of its own
(extensions/serverRegistered/<enrollment run ID>) whose tasks — webhooks, SSH
commands, Ansible playbooks — run as activities on the workers; the same
workflow fires serverCreateDNS for the host's BMC record set. With
extensions.netbox_events it serves the endpoint of NetBox's event rules
(POST /netbox/events over TLS, every request checked by its
X-Hook-Signature), whose device events fire serverDecommissioned and
serverDeleteDNS, switchRegistered and switchCreateDNS, switchDecommissioned
and switchDeleteDNS, each occurrence a workflow of its own
(extensions/netbox/<request ID>/dcim.device/<device ID>); and the Ironic
projection fires serverInstanceUpdate for each deploy transition it sees.
Submit work to it with 'hostforge enroll --config FILE --temporal ADDRESS DEVICE...'.

Workflows survive the worker: waits are durable timers, and a step a dead
worker left is rerun (every step is idempotent) when a worker polls again
(after --heartbeat-timeout) — except an extension's SSH command or playbook,
which is never run twice: it ends EXTENSION_TASK_INTERRUPTED, for the
operator to check and redeliver. Several workers may poll one queue; the
file vault is safe to share between processes on one host. Long workflows
(a slow inspection, a firmware update waiting hours, a settlement) continue
as new before 2,000 history events, resuming where they were. The command
is a thin shell over adapters/worker, which a Go service embeds the same
way.

With the ledger: section the worker also settles each enrollment's
completion proof (a settlement workflow the enrollment starts, which
outlives it and its submitter). Workers sharing a queue share the ledger
(driver: postgres).

Periodic work runs as Temporal schedules of the config's site, one per
purpose, each starting a short workflow with overlap policy skip, so it runs
once per interval however many workers there are: with a ledger, the
projection of every Ironic instance's nodes into the ledger
(hostforge/SITE/ironic-projection, every ledger.projection_interval, 1m by
default); with the firmware: section, the reading of the managed hosts'
firmware inventories that got older than firmware.explore_interval
(hostforge/SITE/firmware-explore) and the update manager's pass, which also
starts the update workflow of each reprovisioning request
(hostforge/SITE/firmware-pass), both every
firmware.settings.machine_update_run_interval. Every worker creates or
updates them at start; 'temporal schedule list' shows them. With firmware:
the worker also serves the on-host agent ('hostforge scout') on
firmware.scout.listen. --metrics-listen serves Prometheus metrics on
/metrics (hostforge_ names).

Ctrl-C (or SIGTERM) stops polling and lets running steps finish for up to
--stop-timeout, then cancels them; their workflows carry on with the next
worker.

` + wiring.ConfigHelp + `
` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled),
		Example: `  hostforge worker --config /etc/hostforge/lab1.yaml --temporal temporal.example.net:7233
  hostforge worker --config lab/lab.yaml --temporal 127.0.0.1:7233 --task-queue lab1
  hostforge worker --config /etc/hostforge/site.yaml --temporal 127.0.0.1:7233 --metrics-listen 0.0.0.0:9464`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&config, "config", "", "config file naming the real systems (format below)")
	tf.add(cmd, "Temporal frontend host:port, e.g. 127.0.0.1:7233")
	f.DurationVar(&stopTimeout, "stop-timeout", 30*time.Second, "on Ctrl-C, how long running steps may finish before they are cancelled")
	f.IntVar(&maxSteps, "max-concurrent-steps", 0, "steps run at once by this worker (0: the Temporal SDK's default)")
	f.StringVar(&metricsListen, "metrics-listen", "", "serve Prometheus metrics on http://ADDRESS/metrics (host:port; empty: none)")
	f.DurationVar(&heartbeat, "heartbeat-timeout", temporal.DefaultHeartbeat, "how long a running step may go without a heartbeat before Temporal gives it to another worker (the wait a dead worker's steps cost)")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	logLevelFlag(cmd)
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
		log, err := a.logger(cmd)
		if err != nil {
			return err
		}
		cfg, err := loadConfigFile(config)
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
		w, err := worker.New(sys, c, worker.Options{TaskQueue: tf.queue, MetricsListen: metricsListen, StopTimeout: stopTimeout,
			MaxConcurrentSteps: maxSteps, Activity: temporal.ActivityOptions{Heartbeat: heartbeat}, Status: out, Log: log})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "connected to Temporal at %s (namespace %s); interrupt to stop\n", tf.address, tf.namespace)
		return w.Run(ctx)
	}
	return cmd
}
