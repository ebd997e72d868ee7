package fakes

// Hardware is a host's physical hardware, from which the fake Ironic's
// inspection produces an inventory. The builder fills it from the HostSpec's
// model; tests may change it to break a host (remove a DIMM, swap a disk).
type Hardware struct {
	Arch                      string
	Sockets                   int
	CoresPerCPU               int
	ThreadsPer                int
	CPUModel                  string
	MemoryMB                  int
	DIMMs                     []DIMM
	Disks                     []Disk
	BIOSVersion               string
	SystemVendor, ProductName string
	// PCI holds PCI devices (GPUs among them) as vendor/device ids.
	PCI []PCIDevice
}

// DIMM is one memory module.
type DIMM struct {
	Slot   string
	SizeMB int
}

// Disk is one block device.
type Disk struct {
	Name       string
	Model      string
	SizeBytes  int64
	Rotational bool
	Serial     string
}

// PCIDevice is one PCI function.
type PCIDevice struct {
	VendorID, ProductID, Class, Address string
}
