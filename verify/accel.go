package verify

// Accelerator is a GPU PCI function Ironic's accelerators hook recognises.
type Accelerator struct {
	VendorID, DeviceID, Name string
}

// KnownAccelerators are the GPU PCI ids Ironic's inspection accelerators hook
// ships with (its known_accelerators.yaml): a PCI device with one of these ids
// is a GPU even when inspection_validation does not list it.
var KnownAccelerators = []Accelerator{
	{"10de", "1eb8", "NVIDIA Corporation Tesla T4"},
	{"10de", "1df6", "NVIDIA Corporation GV100GL"},
	{"10de", "2236", "NVIDIA Corporation A10"},
	{"10de", "2235", "NVIDIA Corporation A40"},
	{"10de", "26b9", "NVIDIA Corporation L40S"},
	{"10de", "26ba", "NVIDIA Corporation L20"},
}

// acceleratorName names a PCI id from the table, "" when unknown.
func acceleratorName(vendor, device string) string {
	for _, a := range KnownAccelerators {
		if a.VendorID == vendor && a.DeviceID == device {
			return a.Name
		}
	}
	return ""
}
