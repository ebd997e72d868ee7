package temporal

import (
	"context"
	"encoding/json"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/flow"
)

// WorkflowName is the registered workflow type of an enrollment.
const WorkflowName = "hostforge.enroll"

// DefaultTaskQueue is the task queue workers poll and submitters use when
// none is configured.
const DefaultTaskQueue = "hostforge-enrollment"

// Input is the enrollment workflow's input: the request with its snapshot,
// and the operated identity the completion proof is scoped to.
type Input struct {
	Request enrollment.Request `json:"request"`
	// Identity is the device's fleet-manager identity at submission.
	Identity string `json:"identity,omitempty"`
	// Revision is the device's projected Ironic reference revision at
	// submission: proof is refused across a reference that left and came
	// back since.
	Revision int64 `json:"revision,omitempty"`
	// Diagnostic marks a run that claims and withdraws no proof.
	Diagnostic bool `json:"diagnostic,omitempty"`
	// Settle makes the workflow start its settlement workflow before its
	// first step: a child that outlives it (ParentClosePolicy ABANDON),
	// waits for its close and settles completion proof, so proof does not
	// depend on the submitter staying alive.
	Settle bool `json:"settle,omitempty"`
	// ProofWindow and ProofInterval tune the settlement (zero: the
	// enrollment.ProofAgent defaults).
	ProofWindow   time.Duration `json:"proof_window,omitempty"`
	ProofInterval time.Duration `json:"proof_interval,omitempty"`
	// Events makes a successful enrollment start the serverRegistered
	// dispatch (ServerRegistered) as a child workflow that outlives it.
	// The workers must register ServerRegistered and the dispatch steps.
	Events bool `json:"events,omitempty"`
}

// Definition is a workflow body on flow.Runtime, named for Temporal. Every
// hostforge workflow (enrollment, firmware update, extension dispatch) is
// one; a worker registers all of them with Register.
type Definition struct {
	// Name is the registered workflow type.
	Name  string
	build func(opts ActivityOptions) any
}

// Define makes body a Temporal workflow named name. Inside it, the body's
// Runtime runs each step as the activity of that name and each sleep as a
// durable timer. On failure the workflow returns the Failure as an
// ApplicationError (type = code, NonRetryable = !Retryable, details = the
// Failure, then the body's output).
func Define[I, O any](name string, body func(ctx context.Context, rt flow.Runtime, in I) (O, error)) Definition {
	return define(name, body, nil, nil)
}

// define is Define with a prelude that runs in the workflow context before
// the body (the enrollment starts its settlement there), and then, which
// runs there after the body succeeded (the enrollment starts its event
// dispatch). The prelude runs in a workflow's first run only: a continued
// run resumes the body where the last one stopped (see resume.go).
func define[I, O any](name string, body func(ctx context.Context, rt flow.Runtime, in I) (O, error), prelude func(ctx workflow.Context, in I), then func(ctx workflow.Context, in I, out O)) Definition {
	return Definition{Name: name, build: func(opts ActivityOptions) any {
		return func(ctx workflow.Context, in I, resume *Resume) (O, error) {
			var out O
			j, err := newJournal(resume, opts.continueAt())
			if err != nil {
				return out, toApplicationError(err, out)
			}
			// The input as it arrived, for the next run: the body may
			// change what in shares (maps, slices) as it goes.
			input, err := json.Marshal(in)
			if err != nil {
				return out, toApplicationError(hostforge.Unclassified.Wrap(err, "encoding the input of %s", name), out)
			}
			if resume == nil && prelude != nil {
				prelude(ctx, in)
			}
			out, err = runBody(ctx, NewRuntime(ctx, opts), j, func(rt flow.Runtime) (O, error) {
				return body(context.Background(), rt, in)
			})
			switch {
			case j.diverged != nil:
				workflow.GetLogger(ctx).Error("workflow diverged from its journal", "workflow", name, "journal", j.String())
				return out, toApplicationError(j.diverged, out)
			case j.continuing:
				next, err := j.resume()
				if err != nil {
					return out, toApplicationError(err, out)
				}
				workflow.GetLogger(ctx).Info("continuing as new", "workflow", name, "history", workflow.GetInfo(ctx).GetCurrentHistoryLength(), "journal", j.String())
				return out, workflow.NewContinueAsNewError(ctx, name, json.RawMessage(input), next)
			case err != nil:
				workflow.GetLogger(ctx).Warn("workflow failed", "workflow", name, "code", hostforge.CodeOf(err))
				return out, toApplicationError(err, out)
			}
			if then != nil {
				then(ctx, in, out)
			}
			return out, nil
		}
	}}
}

// runBody runs the body in a coroutine of its own, on rt journaled by j,
// until it returns or the journal stops it (to continue as new, or on a
// divergence): a stopped body is parked, never unwound, and ends with the
// run.
func runBody[O any](ctx workflow.Context, rt *Runtime, j *journal, body func(flow.Runtime) (O, error)) (O, error) {
	var out O
	var err error
	done := false
	rt.j, rt.deferSleeps = j, true
	workflow.Go(ctx, func(bctx workflow.Context) {
		rt.ctx = bctx
		out, err = body(rt)
		// A sleep the body ended on is slept before the run closes.
		if ferr := rt.flush(); ferr != nil && err == nil {
			err = ferr
		}
		done = true
	})
	// Cancellation reaches the body through its own context (its timer or
	// activity returns CANCELLED); this wait lasts until the body has
	// returned or stopped.
	wait, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.Await(wait, func() bool { return done || j.stopped() })
	return out, err
}

// Func is the workflow function to register by hand (a replayer, a test
// environment); opts are the step activities' options.
func (d Definition) Func(opts ActivityOptions) any { return d.build(opts) }

// RegisterOptions registers the function under the definition's name.
func (d Definition) RegisterOptions() workflow.RegisterOptions {
	return workflow.RegisterOptions{Name: d.Name}
}

// Enrollment is the enrollment workflow: enrollment.Enroll on the Temporal
// runtime. When the input asks for it (Input.Settle), it first starts its
// own settlement workflow (see Settlement), which outlives it; when it asks
// for events (Input.Events), a successful enrollment then starts the
// serverRegistered dispatch (ServerRegistered), a child workflow that
// outlives it too. The enrollment's steps and their order are the body's
// alone.
var Enrollment = define(WorkflowName, func(ctx context.Context, rt flow.Runtime, in Input) (enrollment.Result, error) {
	return enrollment.Enroll(ctx, rt, in.Request)
}, startSettlement, func(ctx workflow.Context, in Input, out enrollment.Result) {
	if in.Events {
		startServerRegistered(ctx, out)
	}
})

// WorkflowRegisterOptions registers the enrollment workflow under WorkflowName.
func WorkflowRegisterOptions() workflow.RegisterOptions { return Enrollment.RegisterOptions() }
