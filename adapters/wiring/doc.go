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
// # Seams
//
// The fleet manager and its proof store are interfaces ([Systems.FleetManager],
// [Systems.Proofs]); they are nil until an adapter for them is configured.
// A store that needs closing registers itself with [Systems.OnClose].
//
// The config format is [ConfigHelp]; a bad file fails with CONFIG_INVALID
// naming the file, the key and its line.
package wiring
