// Package cli is the hostforge command line: a cobra command tree built by
// [NewRoot] on injected streams and environment, run in-process by [Run],
// which returns the exit code. cmd/hostforge is its thin main.
//
// Commands:
//
//	enroll DEVICE...                 the workflow in-process (flow.Local), against
//	                                 the systems of --config or the fake rack of --demo;
//	                                 live progress, a summary table, -o json per host;
//	                                 with --temporal, submitted to workers and followed
//	retire --config DEVICE...        the retirement in-process: erase, out of Ironic, DHCP,
//	                                 the BMC's monitoring and the ledger, NetBox offline,
//	                                 serverDecommissioned and serverDeleteDNS; the same
//	                                 progress, summary and -o json; --temporal as enroll
//	worker --config --temporal       a Temporal worker on the systems of --config
//	                                 (adapters/worker), the site's periodic work as schedules
//	lab                              the demo rack on loopback (adapters/lab), lab.yaml
//	platform-class resolve           a key from explicit inputs (platformclass.Resolve)
//	platform-class backfill          the resolver and write policy over NetBox and the
//	                                 fleet manager (enrollment.Backfill); writes with --apply
//	verify --inventory --expect      a saved inventory against an expectations file (verify.Check)
//	lldp decode --inventory          what each interface heard, junk TLVs reported
//	bmc detect --url [--user]        vendor, model, firmware and strategy; GET requests only
//	failure-codes                    the catalogue of the codes linked into the binary
//	config example                   the commented sample config (wiring.ExampleConfig)
//	version, completion
//
// Every command that reaches real systems gets them from adapters/wiring,
// from the one config file; 'worker' is a thin command over adapters/worker,
// which runs every workflow, the site's schedules and the worker's services.
//
// Exit codes say who acts: 0 success, 2 bad usage or input, 3 on site
// (DC_OPS), 4 infrastructure (INFRA_ENG, NETWORK), 5 fleet manager, 6 a
// hostforge bug (UNCLASSIFIED or owner SDK), 7 cancelled, 8 the tenant team
// (TENANT: a host still running its workload is not retired). A run over
// several hosts exits with the most urgent, in the order 6, 4, 5, 3, 8, 7.
//
// One flag vocabulary (flags.go): a machine is --machine, definitions are
// --definition or arguments, writes need --apply, and every command that
// runs something takes --log-level, --log-file and -o. A former spelling
// stays one release as a hidden alias that prints one deprecation line on
// the error stream. Flags that exclude each other are refused in
// hostforge's words (exit 2). Every help is under 60 lines with 2 to 4
// examples; the config reference is docs/config.md. With -o json every
// command prints one JSON document (enroll: one per host, as each
// finishes), with snake_case names except the extension commands' rows,
// which keep MetalSoft's (docs/json.md).
//
// Errors are printed as one line ("error: CODE (phase): message") followed by
// the operator's action ("action: ..."). Secrets (the NetBox token, the BMC
// password) are read from environment variables or files, never from flags,
// and never printed.
package cli
