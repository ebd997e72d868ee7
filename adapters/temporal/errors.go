package temporal

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/hostforge/hostforge"
)

// WaitErrorType is the ApplicationError type of a step's wait: "run this
// same attempt again after After". It is never a failure of the workflow.
const WaitErrorType = "HOSTFORGE_WAIT"

// Failure codes the adapter itself raises.
var (
	// StepTimedOut: an activity did not finish or heartbeat in time — a
	// worker died or lost its connection mid-step. The body reruns the step
	// within its attempt budget; every step is idempotent.
	StepTimedOut = hostforge.Declare(hostforge.Spec{
		Code:      "TEMPORAL_STEP_TIMED_OUT",
		Phase:     "any",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "A step stopped heartbeating or ran past its timeout (a worker died or lost its connection); the workflow reruns it within its attempt budget. If it keeps happening, check the workers' logs and the step timeout, then rerun.",
	})
	// AlreadyRunning: the device already has an enrollment running.
	AlreadyRunning = hostforge.Declare(hostforge.Spec{
		Code:      "ENROLLMENT_ALREADY_RUNNING",
		Phase:     "submit",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "An enrollment of this device is already running (the message names its workflow ID): let it finish or cancel it, then submit again. Nothing was started.",
	})
	// TemporalUnavailable: the Temporal frontend refused or did not answer.
	TemporalUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "TEMPORAL_UNAVAILABLE",
		Phase:     "submit",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The Temporal frontend did not accept the call (the message has its answer): check the Temporal service and the client's address and namespace, then retry.",
	})
)

// toApplicationError turns what a step or the workflow returned into what
// crosses Temporal's boundary. nil stays nil.
func toApplicationError(err error, details ...any) error {
	if err == nil {
		return nil
	}
	o, f, w := hostforge.Classify(err)
	if o == hostforge.Waiting {
		return temporal.NewApplicationErrorWithOptions(w.Error(), WaitErrorType, temporal.ApplicationErrorOptions{
			NonRetryable: true,
			Details:      []any{*w},
		})
	}
	return temporal.NewApplicationErrorWithOptions(f.Error(), f.Code, temporal.ApplicationErrorOptions{
		NonRetryable: !f.Retryable,
		Details:      append([]any{*f}, details...),
	})
}

// activityError is what a step's classified outcome leaves its activity as:
// toApplicationError's error, non-retryable whatever the Failure's
// Retryable (the details carry that to the body, which owns the retries).
// Temporal so retries only what never reached the classification, without
// each scheduled activity listing every failure code as a non-retryable
// type: that list (128 codes) was two fifths of an enrollment's history.
func activityError(err error) error {
	if err == nil {
		return nil
	}
	o, f, w := hostforge.Classify(err)
	if o == hostforge.Waiting {
		return toApplicationError(w)
	}
	return temporal.NewApplicationErrorWithOptions(f.Error(), f.Code, temporal.ApplicationErrorOptions{
		NonRetryable: true,
		Details:      []any{*f},
	})
}

// fromActivityError turns an activity's error, as the workflow sees it, back
// into a *hostforge.Wait or a *hostforge.Failure. Every error maps to one of
// the two: nothing unclassified reaches the workflow body.
func fromActivityError(step string, err error) error {
	if err == nil {
		return nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if app.Type() == WaitErrorType {
			var w hostforge.Wait
			if derr := detailsOf(app, &w); derr != nil {
				return hostforge.Unclassified.Wrap(derr, "step %s: a wait arrived without its details", step)
			}
			return &w
		}
		return failureOf(step, app)
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) {
		return hostforge.Cancelled.Wrap(err, "step %s was cancelled", step)
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return StepTimedOut.Wrap(err, "step %s timed out (%s)", step, timeout.TimeoutType())
	}
	var panicErr *temporal.PanicError
	if errors.As(err, &panicErr) {
		return hostforge.Unclassified.Wrap(err, "step %s panicked", step)
	}
	return hostforge.Unclassified.Wrap(err, "step %s failed outside hostforge's classification", step)
}

// failureOf rebuilds the Failure an ApplicationError carries. When the
// details are missing (an error from a worker that is not hostforge's),
// the declared code is looked up; an unknown type is UNCLASSIFIED.
func failureOf(step string, app *temporal.ApplicationError) *hostforge.Failure {
	var f hostforge.Failure
	if app.HasDetails() && detailsOf(app, &f) == nil && f.Code != "" {
		return &f
	}
	if spec, ok := hostforge.Lookup(app.Type()); ok {
		return &hostforge.Failure{Spec: spec, Message: app.Message()}
	}
	return hostforge.Unclassified.New("step %s: %s (error type %q)", step, app.Message(), app.Type())
}

// FailureOf returns the Failure a workflow error carries (as
// client.WorkflowRun.Get returns it), or nil when err is nil.
func FailureOf(err error) *hostforge.Failure {
	if err == nil {
		return nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return failureOf("workflow", app)
	}
	_, f, _ := hostforge.Classify(fromActivityError("workflow", err))
	if f == nil {
		f = hostforge.Unclassified.New("%s", fmt.Sprint(err))
	}
	return f
}

// detailsOf decodes an ApplicationError's details. The SDK panics when an
// error built in this process holds details of another type; that is an
// error here, never a panic in workflow code.
func detailsOf(app *temporal.ApplicationError, ptrs ...any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding the details of %s: %v", app.Type(), r)
		}
	}()
	return app.Details(ptrs...)
}
