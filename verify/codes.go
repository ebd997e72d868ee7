package verify

import "github.com/hostforge/hostforge"

// Phase is the workflow phase verification runs in: the inspection half.
const Phase = "ironic_inspection"

// Failure codes. Mismatches are environmental — a miscabled port, a dead
// optic, a failed DIMM, stale NetBox — so they are owned by the on-site team
// and never retried unchanged: the fix is in the rack or in NetBox.
var (
	CablingMismatch = hostforge.Declare(hostforge.Spec{
		Code:      "INSPECTION_CABLING_MISMATCH",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerDCOps,
		Retryable: false,
		Action:    "A frontend interface has no carrier or its LLDP neighbour is not the switch port NetBox records: go to each switch port the message names, fix the cable, optic or port (or fix the cable in NetBox if NetBox is stale), then rerun the enrollment.",
	})
	HardwareMismatch = hostforge.Declare(hostforge.Spec{
		Code:      "INSPECTION_HARDWARE_MISMATCH",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerDCOps,
		Retryable: false,
		Action:    "The host's inspected hardware differs from the device's inspection_validation in NetBox (CPU, NIC, disk, memory, BIOS or GPU; each mismatch in the message names the part and the slot): fix the hardware or BIOS on site, or fix inspection_validation in NetBox if the intent changed, then rerun the enrollment.",
	})
	ValidationInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "INSPECTION_VALIDATION_INVALID",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The device's config_context.inspection_validation in NetBox is malformed (the message names the key; the schema is in the verify package documentation): fix the config context, then rerun. Nothing was verified.",
	})
	InventoryInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "INSPECTION_INVENTORY_INVALID",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The inspection data Ironic holds for the node is not a readable inventory (the message says why): rerun with force_inspection=true so a fresh inspection replaces it; if it persists, check the inspection ramdisk's version and collectors.",
	})
)
