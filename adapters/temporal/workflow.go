package temporal

import (
	"context"
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
	return define(name, body, nil)
}

// define is Define with a prelude that runs in the workflow context before
// the body (the enrollment starts its settlement there).
func define[I, O any](name string, body func(ctx context.Context, rt flow.Runtime, in I) (O, error), prelude func(ctx workflow.Context, in I)) Definition {
	return Definition{Name: name, build: func(opts ActivityOptions) any {
		return func(ctx workflow.Context, in I) (O, error) {
			if prelude != nil {
				prelude(ctx, in)
			}
			out, err := body(context.Background(), NewRuntime(ctx, opts), in)
			if err != nil {
				workflow.GetLogger(ctx).Warn("workflow failed", "workflow", name, "code", hostforge.CodeOf(err))
				return out, toApplicationError(err, out)
			}
			return out, nil
		}
	}}
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
// own settlement workflow (see Settlement), which outlives it.
var Enrollment = define(WorkflowName, func(ctx context.Context, rt flow.Runtime, in Input) (enrollment.Result, error) {
	return enrollment.Enroll(ctx, rt, in.Request)
}, startSettlement)

// WorkflowRegisterOptions registers the enrollment workflow under WorkflowName.
func WorkflowRegisterOptions() workflow.RegisterOptions { return Enrollment.RegisterOptions() }
