// Package wiring turns the config file into real systems: NetBox, the file
// vault, the DHCP phase over SSH, the Redfish BMC connector, one Ironic API
// per instance with its phases, the frontend-link guard and the inspection
// verifier. Every command of the hostforge CLI, the Temporal worker and an
// embedding service get their systems from [Open], so they behave the same:
// no command wires its own subset, and nothing in the wiring is switched off
// because it is inconvenient.
//
//	cfg, err := wiring.Load("/etc/hostforge/lab1.yaml")
//	sys, err := wiring.Open(ctx, cfg, wiring.Options{Log: log})
//	defer sys.Close()
//	rt := sys.Enrollment.Local(clock.Real{})   // or register sys.Enrollment with a worker
//
// # The link guard
//
// The Ironic phases' frontend-link guard reads link state from the host's
// BMC over Redfish ([bmc.LinkReader]), logging in with the per-host admin
// credential from the vault item the node spec names — the item the BMC
// phase maintains (enrollment.AdminItem). A host with dead optics then fails
// with IRONIC_FRONTEND_LINK_DOWN within the instance's timing.link_budget,
// naming its ports, instead of Ironic's opaque inspection timeout.
//
// # The fleet manager's ledger
//
// The ledger: section names the fleet manager's ledger, on
// SQLite or PostgreSQL (adapters/sqlstore). Open wires it ([Ledger]) as the
// fleet manager the platform-class phase records in ([Systems.FleetManager]),
// as the completion-proof store ([Systems.Proofs]) and as the ledger a
// [Systems.Projector] projects every Ironic instance's nodes into. A ledger
// that does not answer at Open is logged and reconnected on each call:
// platform classes fail PLATFORM_CLASS_RECORD_FAILED and proof
// FLEET_MANAGER_UNAVAILABLE until it answers. Without the section those
// fields are nil and the platform-class gate is refused. [OpenLedger] opens
// the ledger alone, for commands that read or project it.
//
// # Extensions
//
// The extensions: section ([ExtensionsConfig]) wires extension dispatch
// ([Systems.Extensions]): the definitions directory loaded into a registry
// (files that do not validate are logged and left out), the webhook, SSH
// and Ansible runners ([ExtensionRunners]; the vault holds the items tasks
// name, known_hosts verifies SSH tasks' hosts, ca_file is trusted for
// webhooks and bundle URLs, container_runtime enables Ansible's ee), and the
// source of the serverRegistered event that a successful enrollment fires
// (the device from NetBox, the node's inventory from its Ironic instance).
// Execution records and outputs are kept in the ledger's database when the
// config has a ledger: section (the extensions schema is migrated there),
// in memory otherwise. Without the section, nothing fires.
//
// # Seams
//
// A store that needs closing registers itself with [Systems.OnClose].
//
// The config format is [Reference], generated into docs/config.md and the
// sample examples/config/site.yaml ([ExampleConfig], 'hostforge config
// example'); a bad file fails with CONFIG_INVALID naming the file, the key
// and its line.
package wiring
