// Package flow is the runtime every hostforge workflow shares: enrollment,
// the firmware update of one managed host, and extension dispatch are each a
// body written once against [Runtime], and run inline with [Local] or
// durably under Temporal (adapters/temporal).
//
// A body calls steps by name through the runtime. A step is one idempotent
// attempt: it reads live state, acts at most once, and returns done, a
// *hostforge.Wait ("run me again after D, for this reason") or a
// *hostforge.Failure. A step never sleeps for a reset, a job or a busy
// system: it returns the wait and the runtime sleeps — on the injected
// clock under Local, on a durable timer under Temporal.
//
// [Runner] is the one step runner of every body:
//
//	call the step ──► done ───────────────────────────────► return
//	     ▲    │
//	     │    ├─────► wait(reason, after) ── budget left? ── yes: sleep, call again
//	     │    │                                  └────────── no:  the reason's exhaustion failure
//	     │    └─────► failure ── retryable and attempts left (Run only)?
//	     │                          ├── yes: sleep Policy.RetryAfter(n), call again
//	     └──────────────────────────┘   no:  return the failure
//
// Each wait reason has its own budget ([WaitPolicy]); a [Meter] carries one
// reason's budget across several calls (an Ironic attempt's node-lock budget
// spans every poll of that attempt). [hostforge.Backoff] is the single pause
// schedule.
//
// Steps are registered with [Bind] into a [Table]. Every step declares the
// longest one attempt can take ([Step.Attempt]), derived from the deadlines
// of the calls it makes; a remote runtime uses it as the step's timeout, so
// a step is never killed mid-attempt by a timeout shorter than the work the
// step is allowed to do.
//
// What a run does is reported to an [Observer], for metrics: the runtime
// reports each step attempt ([StepAttempt]), the Runner each wait it sleeps
// for and each wait budget spent ([Waited], [WaitExhausted]), and the
// bodies their runs, phases and scheduled runs ([RunStarted], [RunEnded],
// [PhaseEnded], [ScheduleRun]) through [ObserverOf]. Local reports to its
// Observer; the Temporal runtime to its own, never while a workflow
// replays, so a run is counted once whichever runtime ran it.
package flow
