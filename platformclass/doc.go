// Package platformclass resolves and records a device's platform class
// (phase 0b of enrollment): the key hardware descriptors and burn-in
// parameter resolution are scoped by, in the form
//
//	<GPUTYPE>_<DEVICETYPE>_<FABRICTYPE>_<NN>
//
// e.g. GB300_LENOVOHG635NV2_IB_01 or NOGPU_DELLPOWEREDGER7615_NORDMA_01.
//
// # Resolution
//
//   - GPUTYPE is the device type's custom field gpu_type. An empty value on a
//     GPU compute device is unresolvable; on a CPU baremetal or hypervisor
//     device it resolves to the literal NOGPU. An empty value on any other
//     device class is unresolvable too: nothing says the device has no GPU.
//   - DEVICETYPE is the manufacturer name and the model, each upper-cased with
//     every non-alphanumeric character stripped, then concatenated
//     (Lenovo + "HG635N V2" → LENOVOHG635NV2).
//   - FABRICTYPE is read from the config context's ztp block for GPU devices
//     only: no ztp block → NORDMA; a block with an infiniband section → IB; a
//     block that is present (even {}) without an infiniband section is
//     unresolvable, because a guessed fabric would select the wrong
//     descriptor. A NOGPU device never has its ztp block read and is always
//     NORDMA.
//   - NN is always 01; there is no collision handling.
//   - A key longer than 128 characters is unresolvable (NetBox would accept
//     it and the fleet manager would refuse it, splitting the two systems),
//     and so is a populated NetBox value longer than 128 characters that
//     would be kept.
//
// # Write policy
//
// The decision table [Record] applies, NetBox first, then the fleet manager:
//
//	NetBox platform_class | NetBox action        | effective value
//	----------------------+----------------------+----------------
//	empty                 | PATCH computed key   | computed key
//	equal to computed     | none                 | computed key
//	different             | none, log a warning  | NetBox value
//
//	fleet manager value   | action
//	----------------------+-----------------------------
//	equal to effective    | none
//	anything else         | set to the effective value
//
// A populated NetBox value is never overwritten: the field is read-only for
// people, and a divergent value is almost always one the fleet manager wrote
// from earlier inputs. A rerun on an unchanged host performs no writes. The
// correction path for a wrong key is to clear the NetBox field and run the
// backfill for the device.
package platformclass
