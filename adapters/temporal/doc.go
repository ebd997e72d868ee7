// Package temporal runs the enrollment workflow on Temporal
// (go.temporal.io/sdk): the same workflow body that flow.Local runs,
// with each step an activity and each wait a durable workflow timer.
//
//   - [Runtime] implements flow.Runtime over workflow.ExecuteActivity,
//     workflow.Sleep and workflow.Now, so there is no second copy of the
//     phase order: [EnrollWorkflow] calls enrollment.Enroll with it.
//   - [Activities] dispatches each step by its registered activity name to
//     the enrollment.Executor; it holds no logic. Activities heartbeat while
//     a step runs (the frontend-link watch can take minutes), and have one
//     attempt: the workflow body owns retries and waits.
//   - A *hostforge.Failure leaving an activity or the workflow is a Temporal
//     ApplicationError whose type is the failure code, NonRetryable is
//     !Retryable and details hold the Failure; a *hostforge.Wait leaves an
//     activity as an ApplicationError of type [WaitErrorType] and becomes a
//     workflow timer through the body's own loop, never a sleep in an
//     activity.
//   - Routing (IRONIC_ROUTING_UNRESOLVED) is classified by the body before
//     any activity runs, so a bad device class fails the workflow with a code
//     instead of failing workflow tasks forever.
//   - [Submitter] snapshots the per-site gates and platform_class_activity_ready
//     into the request and the device's fleet-manager identity into the
//     input, and starts the workflow under the device's own workflow ID, so a
//     second concurrent enrollment of the same device is refused.
//   - Settlement is durable: an enrollment submitted for a device with a
//     fleet-manager identity starts, as its first command, a [Settlement]
//     child workflow (ParentClosePolicy ABANDON) that waits for the
//     enrollment's close on durable timers and runs the completion-proof
//     body (enrollment.SettleProof) with the close time Temporal recorded:
//     one activity per ledger call, one timer per pause. It survives the
//     submitter and worker restarts. Workers register [Settlement] beside
//     [Enrollment] and [SettleSteps] beside the enrollment's steps.
//     [Submitter.Settle] waits for that settlement's outcome.
//   - [Submitter.Follow] reports a run's steps, waits, failures and timers
//     from its history as flow.Events, so a submitter shows the progress an
//     inline run shows.
//   - With ActivityOptions.Observer set, the runtime reports each step's
//     attempt and hands the bodies the observer for their runs, phases and
//     deliveries (flow.Observer) — never while a workflow replays history,
//     so a run is counted once (adapters/metrics exports the counts).
//     [ScheduledStart] reads the time a Temporal Schedule meant a run to
//     start, for the run's lag.
//   - [RegisterWorkflows] registers several workflows (enrollment, firmware,
//     extensions) on one worker: their step sets merged, names unique.
package temporal
