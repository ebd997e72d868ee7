// Package verify checks a host's inspection data against its NetBox intent —
// carrier, hardware, and LLDP against the cables — and decodes raw LLDP TLVs.
// It is pure: no I/O, no clock, no logging.
//
// It is the hard gate of phase 5: a host whose inspection data disagrees with
// NetBox does not enter the pool. Every mismatch is environmental (a miscabled
// port, a dead optic, a missing DIMM, stale NetBox), owned by the on-site team,
// and reported with the place to go.
//
// # Inputs
//
// [ParseInventory] reads what Ironic returns for GET /v1/nodes/{node}/inventory
// ({"inventory": {...}, "plugin_data": {...}}) and the legacy ironic-inspector
// introspection data (the inventory under "inventory", the plugin data flattened
// at the top level). It reads:
//
//   - inventory.cpu: count (logical CPUs), socket_count, architecture, model_name;
//     physical cores and sockets from the extra-hardware data when present.
//   - inventory.memory: physical_mb, total; DIMMs from the extra-hardware data
//     (extra.memory."bank:N" with size in bytes, slot, product, vendor, serial).
//   - inventory.disks: name, model, vendor, size (bytes), rotational, serial.
//   - inventory.interfaces: name, mac_address, has_carrier (absent or null means
//     "not reported"), vendor, product, speed_mbps, driver, and lldp: the raw
//     [type, "hex"] TLV pairs (null: LLDP was not collected; []: collected,
//     nothing heard). When an interface has no raw TLVs, plugin_data.lldp_raw,
//     then the processed switch_* keys (plugin_data.parsed_lldp.<iface> or the
//     legacy all_interfaces.<iface>.lldp_processed) are used instead.
//   - inventory.bmc_address, inventory.system_vendor (manufacturer, product_name,
//     serial_number, firmware.version = the BIOS version), and, failing the
//     latter, extra.firmware.bios.version.
//   - plugin_data.pci_devices: vendor_id, product_id, class, bus (IPA's
//     pci-devices collector) — the only place GPUs appear.
//   - the extra-hardware data: plugin_data.extra (Ironic's extra-hardware hook,
//     a nested object), or the legacy top-level "extra", or the raw "data" list
//     of [category, item, key, value] quadruples.
//
// # The inspection_validation config context
//
// [ExpectationsFrom] reads NetBox's config_context.inspection_validation block.
// Every key is optional; a check whose key is absent does not run. An unknown
// key, or a value of the wrong type or range, is the failure
// INSPECTION_VALIDATION_INVALID naming the key (a typo must not silently turn a
// check off). The accepted schema, with an example:
//
//	"inspection_validation": {
//	  "cpu": {
//	    "architecture": "x86_64", // inventory.cpu.architecture, exact
//	    "count": 32,              // logical CPUs as IPA counts them (inventory.cpu.count), exact
//	    "cores": 16,              // physical cores (extra-hardware cpu.physical_N.cores, summed), exact
//	    "sockets": 1              // inventory.cpu.socket_count, else extra-hardware cpu.physical.number
//	  },
//	  "nics": {
//	    "count": 6,                       // interfaces IPA reports, exact
//	    "vendors": ["0x14e4", "0x8086"],  // PCI vendor ids every reported NIC must be one of
//	    "min_speed_mbps": 25000           // every frontend NIC that reports a speed runs at least this fast
//	  },
//	  "disks": {
//	    "count": 1,                       // block devices, exact
//	    "models": ["PERC H755 Front"],    // every disk's model must be one of these (exact, case-insensitive)
//	    "min_size_gb": 400                // every disk is at least this big (GB = 10^9 bytes)
//	  },
//	  "memory": {
//	    "physical_mb": 98304,   // inventory.memory.physical_mb, exact
//	    "dimm_count": 12,       // populated DIMMs (extra-hardware), exact
//	    "dimm_size_mb": 8192    // every DIMM is this size (a uniform population)
//	  },
//	  "bios": {
//	    "allow": ["1.6.10", "1.7.*"],  // the BIOS version must match one (a trailing * is a prefix match)
//	    "block": ["1.5.2"]             // the BIOS version must match none
//	  },
//	  "gpus": [                        // GPU PCI functions by vendor/device id, exact counts
//	    {"vendor_id": "10de", "device_id": "26b9", "count": 2, "name": "L40S"}
//	  ]
//	}
//
// Whenever the memory check runs and the host reports both DIMMs and
// physical_mb, the DIMMs must also add up to physical_mb (DIMM consistency).
// A host's memory findings are one mismatch, naming the populated slots. With a "gpus" list, any known accelerator (the table of
// Ironic's known_accelerators plus every listed id) that the list does not
// name is reported too; "gpus": [] asserts the host has none.
//
// A fact the host does not report at all (no socket_count, no DIMM data, no
// BIOS version, no pci_devices) fails a check that needs it: the gate fails
// closed and the action says which collector to enable. Two exceptions follow
// the spec: an unreported has_carrier passes, and a BIOS block list alone
// passes an unreported version.
//
// The NetBox side of the cables is not in the config context: the caller
// passes one [Cable] per frontend interface (cabled or not), with the NetBox
// interface's MAC, and the cable peer's switch name and physical port name
// (never the LAG parent: LLDP speaks for the physical port).
//
// # Expectations file
//
// [LoadExpectations] reads the same thing from a file, JSON or YAML, for
// verifying a saved inventory offline (fleetctl verify --expect FILE):
//
//	device: host-a1
//	skip_cable_verification: false
//	cables:
//	  - {interface: eth0, mac: "d4:04:e6:4f:71:28", switch: leaf-3, port: swp12}
//	  - {interface: eth1, mac: "d4:04:e6:4f:71:29"}      # uncabled in NetBox
//	validation:                                          # the inspection_validation block
//	  cpu: {architecture: x86_64, count: 32}
//
// # The checks, in the spec's order
//
//  1. carrier: no frontend interface reports has_carrier false. Missing data
//     passes. It always runs, even with skip_cable_verification.
//  2. cpu, 3. nics, 4. disks, 5. memory, 6. bios, 7. gpu: the hardware checks
//     the inspection_validation block asks for.
//  8. lldp: every frontend interface's LLDP neighbour matches its NetBox cable.
//     Skipped entirely with skip_cable_verification.
//
// Every mismatch is reported, not just the first, each with the check, its
// subject (interface, disk, GPU id, ...), what NetBox says, what the host
// reported and the operator's action naming the place to go ("switch leaf-3
// port swp12: NetBox expects host h1 eth2 (…) here, but LLDP on eth2 saw …").
// [Report.Err] maps a failed report to INSPECTION_CABLING_MISMATCH when its
// first mismatch is a carrier or LLDP one, else INSPECTION_HARDWARE_MISMATCH;
// both are owned by DC_OPS and not retryable, and the message lists every
// mismatch. An interface already
// reported by the carrier check is not reported again by the LLDP check: with
// no carrier there is no neighbour to hear, and the carrier is the root cause.
//
// Frontend interfaces are matched to inventory interfaces by MAC address, and
// by name only when NetBox has no MAC for them.
//
// # Switch and port comparison
//
// The LLDP system name must name the NetBox switch and the NetBox port name
// must equal the LLDP port ID or the LLDP port description (Cumulus sends the
// port name as the port ID and the host as the description; others the other
// way round). Both must hold: a port never matches alone (a host cabled to
// three switches can hear Ethernet1/4 on every one of them).
//
// Names compare case-insensitively. A short name and an FQDN match when the
// short one is the leading DNS labels of the other: NetBox "leaf-3" matches
// LLDP "leaf-3.dc1.example.net" and the other way round, but "leaf-3" never
// matches "leaf-3f.dc1" (the prefix must end at a dot), and two different
// qualified names ("leaf-3.dc1" and "leaf-3.dc2") never match. Port names
// compare exactly apart from case; abbreviations ("Eth1/4" for "Ethernet1/4")
// do not match: NetBox must carry the name the switch advertises.
package verify
