// Package retirement is the other end of a host's lifecycle: it erases a
// host NetBox has as decommissioning, takes it out of Ironic, DHCP, the
// BMC's monitoring and the fleet manager's ledger, sets it offline in
// NetBox with a journal entry naming the run, and fires the
// serverDecommissioned and serverDeleteDNS extension stages.
//
// The body ([Workflow.Run]; [Retire] without extensions) is written once
// against flow.Runtime, like enrollment: [Executor] holds the clients and
// is the steps' flow.Steps, flow.Local runs it inline, the Temporal adapter
// runs it as a workflow. Each step is one idempotent attempt that reads
// live state and writes only what is left to do; every wait is a wait the
// runtime sleeps; every failure is a classified *hostforge.Failure.
//
// # Where it lives
//
// Retirement is a workflow of layer 2, beside enrollment, and like every
// layer-2 package it imports only layers 0 and 1: the Ironic, DHCP and BMC
// phases it runs are in packages ironic (RetireGate, Erase, RemoveNode),
// dhcp (Phase.Remove) and bmc (Retirer). The one rule it shares with
// enrollment — the per-host credential's vault item — moved down to
// bmc.AdminItem. Extension dispatch is a layer-2 package too, so the body
// fires its events through an [Announcer] the composition hands it
// (adapters/wiring passes extensions.Fire), on the same runtime: the
// dispatch's steps are steps of the same run.
//
// # Steps
//
//	phase             step                    reads / writes                                     skipped when
//	retire_gate       retire.read_device      NetBox device + journal (read only)                —
//	                  retire.ironic_gate      Ironic node (+ its inventory for the events)       enrollment_ironic_enrol off
//	retire_erase      retire.erase            manage → manual clean (erase steps) → manageable   --no-erase, no node, node kept earlier
//	retire_ironic     retire.remove_node      ports, portgroups, node deleted (or kept:          no node
//	                                          manageable, maintenance "retired")
//	retire_dhcp       retire.dhcp             the host's reservation removed, service restarted  enrollment_configure_dhcp off
//	retire_bmc        retire.bmc              monitoring user deleted; credential archived       enrollment_configure_bmc off
//	retire_ledger     retire.ledger           proof and platform class cleared (CAS, identity)   no ledger
//	retire_netbox     retire.netbox_offline   journal entry naming the run, then status offline  —
//	retire_extensions (extension dispatch)    serverDecommissioned, then serverDeleteDNS         no extensions
//	                  retire.announced        journal entry: the run announced itself
//
// The gate: the device must be decommissioning in NetBox, or offline with
// a journal entry of a retirement (that run is resumed), or offline with
// Params.Force; and its node, when it has one, must not be a tenant's
// (RETIRE_NODE_IN_USE, owner TENANT: an instance_uuid, or a deployed node).
// Nothing is written before the gate passed.
//
// The erase runs the site's erase (retire.erase: metadata → the agent's
// erase_devices_metadata, full → erase_devices) as a manual clean from
// MANAGEABLE, with the cleaning half's budgets: polled on the clean
// backoff, bounded by the site's cleaning deadline, clean failed rerunning
// the attempt (which recovers the node: maintenance cleared, manage)
// within the attempt budget, a locked node waited out on the node-lock
// budget. A clean whose answer is lost is sent again once the node rests:
// erasing twice is safe, erasing never is not.
//
// # Run IDs, reruns and events
//
// A run has an ID (Request.Run). Its journal entry is written before the
// status goes offline, so an offline device's journal always names the
// run that set it so; a rerun of an offline device resumes that run (its
// ID, its archive, its events). Each event's ID is the run's ID and the
// stage ("<run>/serverDecommissioned", "<run>/serverDeleteDNS"), so every
// re-fire delivers the same delivery IDs. Once every delivery succeeded the
// run writes a second journal entry, "announced", and a rerun fires
// nothing; a failed delivery fails the run (RETIRE_EVENTS_UNDELIVERED) and
// the rerun fires the same events again. A retired host's rerun therefore
// reads and writes nothing: no node, no reservation, no monitoring user, an
// archive, a cleared ledger record, offline and announced.
//
// # Never
//
//   - Never touch a node a tenant holds (instance_uuid set, or deployed):
//     every Ironic step refuses it, not only the gate.
//   - Never write anything before the gate passed.
//   - Never delete a node Ironic would refuse to delete (a failed state is
//     managed back to MANAGEABLE first), nor delete it in maintenance to
//     get around that.
//   - Never drop the per-host BMC credential: it is archived (written
//     first) before the live item goes, and the archive is deleted only
//     after its retention, by a later run.
//   - Never remove the account the BMC session logs in with, nor the
//     reservation of another host (the DHCP removal rolls back to the
//     host's file when the service refuses the configuration).
//   - Never clear a ledger record of another identity (a replacement).
//   - Never write a journal entry twice for one run, nor send it blindly
//     again: the journal is read first, and the adapter's POST is not
//     retried.
//   - Never fire the run's events under another run's IDs.
package retirement
