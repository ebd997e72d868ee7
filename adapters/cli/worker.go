package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/worker"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// workerWorkflow binds one workflow to the wired systems for the worker.
type workerWorkflow func(*wiring.Systems) (temporal.Workflow, error)

// workerWorkflows are the workflows 'hostforge worker' runs, each bound to
// the systems the config names. A new workflow adds one entry.
var workerWorkflows = []workerWorkflow{
	enrollmentWorkflow,
	settlementWorkflow,
	extensionsWorkflow,
	firmwareWorkflow,
	retirementWorkflow,
}

// enrollmentWorkflow is the enrollment on the wired systems.
func enrollmentWorkflow(s *wiring.Systems) (temporal.Workflow, error) {
	return temporal.Workflow{Name: "enrollment", Steps: s.Enrollment, Definitions: []temporal.Definition{temporal.Enrollment}}, nil
}

// extensionsWorkflow is extension dispatch on the wired systems: the
// serverRegistered events successful enrollments fire, and events
// dispatched with temporal.Extensions. Without an extensions: section the
// dispatcher has no definitions, so such events run no task.
func extensionsWorkflow(s *wiring.Systems) (temporal.Workflow, error) {
	d := s.Extensions
	if d == nil {
		empty, err := extensions.NewRegistry()
		if err != nil {
			return temporal.Workflow{}, err
		}
		d = extensions.NewDispatcher(empty, nil, extensionsfake.NewStore())
	}
	return temporal.Workflow{Name: "extensions", Steps: d, Definitions: []temporal.Definition{temporal.Extensions, temporal.ServerRegistered}}, nil
}

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
(extensions/serverRegistered/<device>/<node>) whose tasks — webhooks, SSH
commands, Ansible playbooks — run as activities on the workers. Submit work to it with
'hostforge enroll --config FILE --temporal ADDRESS DEVICE...'.

Workflows survive the worker: waits are durable timers, and a step a dead
worker left is rerun (every step is idempotent) when a worker polls again.
Several workers may poll one queue; the file vault is safe to share between
processes on one host.

With the ledger: section the worker also settles each enrollment's
completion proof (a settlement workflow the enrollment starts, which
outlives it and its submitter) and projects every Ironic instance's nodes
into the ledger every ledger.projection_interval (1m by default). Workers
sharing a queue should share the ledger (driver: postgres).

With the firmware: section the worker also keeps managed hosts at their
firmware catalog: every firmware.settings.machine_update_run_interval it
reads the inventories that got older than firmware.explore_interval, runs
the update manager's pass (one worker at a time on a shared database) and
starts the update workflow of each reprovisioning request, and it serves
the on-host agent ('hostforge scout') on firmware.scout.listen.
--metrics-listen serves Prometheus metrics on /metrics (hostforge_ names).

Ctrl-C (or SIGTERM) stops polling and lets running steps finish for up to
--stop-timeout, then cancels them; their workflows carry on with the next
worker.

` + wiring.ConfigHelp + `
` + exitCodeHelp,
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
		}
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
		reg, err := prepareMetrics(sys)
		if err != nil {
			return err
		}
		var wfs []temporal.Workflow
		var names []string
		for _, bind := range workerWorkflows {
			wf, err := bind(sys)
			if err != nil {
				return err
			}
			if len(wf.Definitions) == 0 {
				continue // not configured on these systems
			}
			wfs = append(wfs, wf)
			names = append(names, wf.Name)
		}
		c, err := temporal.Dial(ctx, tf.address, tf.namespace, log)
		if err != nil {
			return err
		}
		defer c.Close()
		w := worker.New(c, tf.queue, worker.Options{WorkerStopTimeout: stopTimeout, MaxConcurrentActivityExecutionSize: maxSteps})
		if err := temporal.RegisterWorkflows(w, temporal.Activities{Secrets: sys.Secrets}, temporal.ActivityOptions{}, wfs...); err != nil {
			return err
		}
		if err := w.Start(); err != nil {
			return temporal.TemporalUnavailable.At("worker").Wrap(err, "starting the worker on task queue %s at %s", tf.queue, tf.address)
		}
		out := cmd.OutOrStdout()
		svcCtx, stopSvc := context.WithCancel(ctx)
		svc, err := startWorkerServices(svcCtx, sys, reg, c, tf.queue, metricsListen, out, log)
		if err != nil {
			stopSvc()
			w.Stop()
			return err
		}
		defer func() { stopSvc(); svc.stop() }()
		fmt.Fprintf(out, "worker polling task queue %s at %s (namespace %s) for %s on site %s; interrupt to stop\n",
			tf.queue, tf.address, tf.namespace, strings.Join(names, ", "), sys.Site)
		projCtx, stopProj := context.WithCancel(ctx)
		defer stopProj()
		projecting := runProjection(projCtx, sys)
		select {
		case <-ctx.Done():
		case err := <-svc.errs:
			stopProj()
			w.Stop()
			projecting()
			return err
		}
		fmt.Fprintf(out, "stopping: running steps have %s to finish\n", stopTimeout)
		w.Stop()
		projecting()
		fmt.Fprintln(out, "worker stopped")
		return nil
	}
	return cmd
}
