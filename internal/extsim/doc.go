// Package extsim is the fault-schedule suite of extension dispatch, built
// like enrollment's (internal/fleetsim): a seeded Schedule (Generate; a
// seed is the whole schedule, so a failing one is replayed by its seed)
// draws one to three extensions of one to four tasks — webhooks, SSH
// commands, Ansible playbooks, failure policies fail and continue — bound
// to serverRegistered, the runtime the dispatch runs on, and the faults it
// runs under, in enrollment's format (fleetsim.Fault): once the dispatch
// has run AtStep steps, the next N calls of a system's operation fail as
// their kind.
//
// Faults come in the same three kinds:
//
//   - before the effect: the execution store (put, start — the
//     write-ahead —, query) answers as the SQL store does when its
//     database is unavailable; a target (the webhook receiver, the SSH
//     host, the playbook run) fails as the real runner reports it — a 5xx
//     or a refused connection, a 401, a 4xx — and nothing happened;
//   - after the effect (lost, lost_timeout; conflict, invalid and
//     not_found of a command or playbook, which ran and failed): the store
//     wrote, or the target ran the task, and then the answer was lost;
//   - a crash: the worker running a step attempt (extensions.begin, run,
//     record, or any) dies once N of the attempt's writes — store writes
//     and the target's effect — took effect; the answer of the last never
//     arrives. Under the Temporal runtime the lost call is started again
//     after WorkerLossDelay, unless its call policy says at most once (an
//     SSH or Ansible task's extensions.run): then the body hears
//     flow.AttemptLost. Under the local runtime the process died: the
//     event is fired again, as a restarted worker or an operator does.
//
// Check fires the event under the schedule's faults (again after each
// crash of a local process), then once the faults cleared, once more, and
// with a redelivery of one task when the schedule draws one.
//
// # Invariants
//
// Checked on every schedule, over every firing:
//
//   - each SSH and Ansible task runs at most once per delivery ID;
//   - every webhook delivery, and each of its retries, carries the same
//     webhook-id: the task's delivery ID, which only a redelivery changes;
//   - a task whose failurePolicy is fail that failed stops its
//     extension's later tasks in that firing: none of them runs;
//   - every failure is classified: each failed or not-run delivery and
//     each dispatch error carries a declared code, never UNCLASSIFIED, and
//     nothing panics; only SSH and Ansible tasks end
//     EXTENSION_TASK_INTERRUPTED;
//   - once the faults cleared, every task has succeeded, or is an SSH or
//     Ansible delivery whose outcome is unknown (interrupted, left to the
//     operator), or was not run because such a task stopped its extension;
//     firing the event once more contacts nothing and reports the same;
//   - a redelivery runs the named task once, under a delivery ID it never
//     had, and nothing that had succeeded;
//   - no execution record is left started or running.
//
// TestSuiteCatchesBrokenDispatch holds a deliberately broken part against
// each: a write-ahead any attempt wins, a webhook runner that changes the
// webhook-id on a retry, a store whose errors are unclassified, a plan that
// drops failurePolicy fail, a re-fire that runs every task again.
//
// # Commands
//
// The unit suite runs 500 schedules (go test ./internal/extsim;
// -extsim.schedules=N for more, -extsim.seed=S to replay one). The
// benchmark runs 10,000:
//
//	go test ./internal/extsim -run '^$' -bench 'FaultSchedules$' -benchtime=1x
package extsim
