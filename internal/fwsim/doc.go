// Package fwsim simulates managed-host firmware updates across a fleet:
// thousands of hosts of the four real vendor profiles (Dell R750, Lenovo
// SR670 V2, NVIDIA DGX H100, Supermicro SYS-821GE), a share drifted, some
// assigned to tenants, some in maintenance, a few faulty, on virtual time.
// The update manager's pass runs every machine_update_run_interval; each
// request's update workflow runs on the shared runtime, ended at every
// sleep and resumed from the store at its wake (so every sleep is a worker
// restart); on top, whole-worker restarts and crashes between a BMC action
// and its write happen at seeded ticks.
//
// The checker holds the specification's invariants on every tick: the
// updates plus the hosts in maintenance never exceed the ceiling;
// unassigned hosts are selected first; no host starts outside its explicit
// window; no assigned host starts without approval or the autoreboot
// period; at the end every host is compliant, failed with its budget spent
// (exactly the faulty ones), or flagged unmatched, and none is left in
// maintenance.
package fwsim
