// Package temporal runs the enrollment workflow on Temporal
// (go.temporal.io/sdk): the same workflow body that flow.Local runs,
// with each step an activity and each wait a durable sleep: carried by the
// step after it (its activity's first attempt defers it, delay.go) or a
// workflow timer.
//
//   - [Runtime] implements flow.Runtime over workflow.ExecuteActivity,
//     workflow.Sleep and workflow.Now, so there is no second copy of the
//     phase order: [EnrollWorkflow] calls enrollment.Enroll with it.
//   - [Activities] dispatches each step by its registered activity name to
//     the enrollment.Executor; it holds no logic. Activities heartbeat while
//     a step runs (the frontend-link watch can take minutes), and have one
//     attempt: the workflow body owns retries and waits.
//   - A *hostforge.Failure leaving an activity or the workflow is a Temporal
//     ApplicationError whose type is the failure code and whose details hold
//     the Failure; leaving the workflow, NonRetryable is !Retryable; leaving
//     an activity it is always non-retryable, since the body owns retries
//     (so no activity lists the codes as non-retryable types). A
//     *hostforge.Wait leaves an activity as an ApplicationError of type
//     [WaitErrorType] and becomes a durable sleep through the body's own
//     loop, never a sleep in an activity.
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
//     enrollment's close on durable sleeps and runs the completion-proof
//     body (enrollment.SettleProof) with the close time Temporal recorded:
//     one activity per ledger call, one sleep per pause. It survives the
//     submitter and worker restarts. Workers register [Settlement] beside
//     [Enrollment] and [SettleSteps] beside the enrollment's steps.
//     [Submitter.Settle] waits for that settlement's outcome.
//   - [Submitter.Follow] reports a run's steps, waits, failures and sleeps
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
//   - A site's periodic work — the Ironic projection ([Projection]), the
//     exploration of the firmware inventories ([Explore]) and the update
//     manager's pass ([Pass], which also starts the update workflows) — is
//     a short workflow each, started by a Temporal schedule of the site
//     (ID hostforge/<site>/<purpose>, overlap policy skip) that
//     [EnsureSchedules] creates or converges; adapters/worker calls it at
//     every worker's start, so the work runs once per interval however
//     many workers poll the site.
//
// # Bounded histories
//
// No run of a hostforge workflow records more than [HistoryLimit] (2,000)
// events: a long inspection polling for half an hour, a firmware update
// waiting hours on a task, a settlement probing its enrollment for a day
// continue as new before that. The bodies stay written once against
// flow.Runtime, with their place in local variables, so the adapter does
// not ask them for a state to carry. Instead each run journals every answer
// the runtime gave its body — each step's output, wait or failure, each
// sleep, each clock reading — and once its history reaches
// [DefaultContinueAsNewAt] events the runtime stops the body before its
// next command (the body runs in a coroutine of its own and is parked
// there, never unwound) and the run continues as new with its input and
// the journal ([Resume], gzipped). The new run starts the body from the top
// and answers it from the journal — scheduling no activity, starting no
// timer — until the journal is spent, and from there runs it live, at the
// very command the last run stopped before. Because the body is
// deterministic in the runtime's answers (Temporal's replay demands it
// already), the replay rebuilds its whole local state: attempt counts,
// every wait reason's spent budget (flow.Meter), deadlines it read from the
// clock, a poll loop's progress. So budgets carry across runs, nothing is
// sent twice (a replayed step is its recorded outcome, not a call), and
// the steps and sleeps of a workflow are those of one uninterrupted run.
// The prelude (the settlement child) runs in the first run only; a call
// that does not match its journal entry (a changed body deployed mid-run)
// fails with TEMPORAL_RESUME_DIVERGED. The settlement, [Submitter.Settle]
// and [Submitter.Follow] follow a run along its continue-as-new chain. See
// resume.go.
//
// A fault-free enrollment records about 110–140 events on a lab's timing
// and 190–280 on production timing ([EnrollmentHistoryBudget] is 300, held
// by a test on both): the engine's share is 6 events per step, the sleep
// before a step riding in its activity (delay.go), and 5 per timer, so its
// history is the number of polls its phases make. See BENCHMARKS.md for
// the real server's figures.
package temporal
