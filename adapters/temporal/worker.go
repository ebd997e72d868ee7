package temporal

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/hostforge/hostforge/flow"
)

// Workflow is one workflow a worker runs: the steps its body calls, bound
// to the worker's systems, and its Temporal definitions. Enrollment is
// {Steps: the enrollment.Executor, Definitions: [Enrollment]}; firmware and
// extension workflows add their own, with step names prefixed so they stay
// unique across workflows.
type Workflow struct {
	// Name says which workflow this is, in logs and errors.
	Name        string
	Steps       flow.Steps
	Definitions []Definition
}

// RegisterWorkflows registers every workflow's steps as activities (one
// merged step set: a step name in two workflows is an error, returned
// before anything is registered) and every definition on w.
func RegisterWorkflows(w worker.Registry, a Activities, opts ActivityOptions, wfs ...Workflow) error {
	sets := make([]flow.Steps, 0, len(wfs))
	var defs []Definition
	for _, wf := range wfs {
		if wf.Steps != nil {
			sets = append(sets, wf.Steps)
		}
		defs = append(defs, wf.Definitions...)
	}
	table, err := flow.Merge(sets...)
	if err != nil {
		return err
	}
	a.Exec = table
	Register(w, &a, opts, defs...)
	return nil
}

// Dial connects a Temporal client to the frontend at address, under ctx
// (a frontend that does not answer fails when ctx ends, not later). The
// SDK's own log goes to log (nil discards it). The error is
// TEMPORAL_UNAVAILABLE.
func Dial(ctx context.Context, address, namespace string, log *slog.Logger) (client.Client, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: address, Namespace: namespace, Logger: sdklog.NewStructuredLogger(log)})
	if err != nil {
		return nil, TemporalUnavailable.At("connect").Wrap(err, "connecting to the Temporal frontend at %s (namespace %q)", address, namespaceOr(namespace))
	}
	return c, nil
}

func namespaceOr(ns string) string {
	if ns == "" {
		return client.DefaultNamespace
	}
	return ns
}
