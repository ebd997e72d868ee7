// Package fwsim simulates managed-host firmware updates across a fleet,
// and holds the fault-schedule suite of the update workflow. The fleet:
// thousands of hosts of the four real vendor profiles (Dell R750, Lenovo
// SR670 V2, NVIDIA DGX H100, Supermicro SYS-821GE), a share drifted, some
// assigned to tenants, some in maintenance, a few faulty, on virtual time.
// The update manager's pass runs every machine_update_run_interval; each
// request's update workflow runs on the shared runtime, ended at every
// sleep and resumed from the store at its wake (so every sleep is a worker
// restart); on top, whole-worker restarts and crashes between a BMC action
// and its write happen at seeded ticks, an operator changes the catalog
// (a runtime override of the R750's bmc default: every R750 is updated
// again) and cancels a share of the running updates (their hosts are
// handed back and selected again). The DGX's BMC has no AC power cycle
// and no lockdown, as the real capture: its power drains are power-offs
// held for the drain wait.
//
// The checker holds the specification's invariants on every tick: the
// updates plus the hosts in maintenance never exceed the ceiling;
// unassigned hosts are selected first; no host starts outside its explicit
// window; no assigned host starts without approval or the autoreboot
// period; at the end every host is compliant, failed with its budget spent
// (exactly the faulty ones), or flagged unmatched, and none is left in
// maintenance; every update that ended handed its host back and is kept in
// the history, a cancelled one saying who cancelled it.
//
// # The fault-schedule suite
//
// CheckSchedule holds the update workflow's side-effect promises (package
// firmware, "Side effects happen once") under a seeded Schedule, in
// enrollment's schedule format (internal/fleetsim): Generate draws, from
// the seed alone, one to three drifted hosts of the four profiles (some
// assigned, some DGX without CX7 cards), the site's upload slots, and one
// to three faults — a call failing before its effect (a 5xx, a client
// timeout, a dropped connection, a 401, 400, 409 or 404; a state database
// only does the first three and loses compare-and-sets), a write applied
// and its answer lost (a dropped connection or a timeout after the
// commit), or the worker of a step attempt dying once N of its writes took
// effect (the runtime reruns the attempt with the same input after
// Temporal's heartbeat timeout). Call faults strike the BMC, the store or
// the managed hosts; half of them are scoped to one step, so that every
// step meets every kind. A failing schedule is replayed by its seed:
//
//	go test ./internal/fwsim -run TestFaultScheduleSuite -fwsim.seed=S -v
//
// The unit suite runs 500 schedules; the benchmark 10,000:
//
//	go test ./internal/fwsim -run '^$' -bench FaultSchedules -benchtime=1x
package fwsim
