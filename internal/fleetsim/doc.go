// Package fleetsim simulates a fleet: it builds a fake site of many hosts —
// mixed vendors, GPU and CPU, bonded and not, a share of them broken the ways
// racks break — enrols every host concurrently through flow.Local on
// the site's virtual clock, and reports wall time, throughput, peak heap,
// calls per host by system (reads and writes), virtual time to the end
// state and failures by code, for a fresh run and a converged rerun.
//
// It also holds the fault-schedule property suite's machinery: a seeded
// Schedule says which call of which system fails how; Check runs a small
// fleet under it, clears the faults, reruns, and reports every invariant of
// the enrollment specification that did not hold.
//
// The simulator gates off any phase whose implementation the executor from
// enrolltest does not wire yet, and says so in its report.
package fleetsim
