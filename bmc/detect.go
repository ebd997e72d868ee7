package bmc

import (
	"fmt"
	"strings"
)

// Vendor is a supported BMC family.
type Vendor string

// Supported vendors.
const (
	VendorDell       Vendor = "dell"       // Dell iDRAC
	VendorLenovo     Vendor = "lenovo"     // Lenovo XClarity Controller
	VendorAMI        Vendor = "ami"        // AMI MegaRAC
	VendorSupermicro Vendor = "supermicro" // Supermicro BMC
)

// Vendors lists the supported vendors.
var Vendors = []Vendor{VendorDell, VendorLenovo, VendorAMI, VendorSupermicro}

// oemVendors maps Oem keys (root or manager) to vendors. Keys are matched
// case-insensitively.
var oemVendors = map[string]Vendor{
	"dell":       VendorDell,
	"lenovo":     VendorLenovo,
	"ami":        VendorAMI,
	"supermicro": VendorSupermicro,
}

// knownUnsupportedOem are Oem keys of BMC families hostforge knows and does
// not configure; seeing one at the root refuses the BMC at once rather than
// letting a later, weaker tell claim it.
var knownUnsupportedOem = map[string]bool{"hpe": true, "hp": true, "openbmc": true, "nvidia": true}

// Detect names the vendor from what the BMC says about itself, in this
// order: the service root's Oem keys, its Vendor, its Product, the first
// manager's Model and Oem keys, the first system's Manufacturer. The first
// tell decides. A BMC of another family (HPE iLO, OpenBMC, a generic DMTF
// service) is refused with BMC_VENDOR_UNSUPPORTED: configuring it as the wrong
// vendor would write the wrong settings.
func Detect(id Identity) (Vendor, error) {
	for _, k := range id.RootOem {
		lk := strings.ToLower(k)
		if v, ok := oemVendors[lk]; ok {
			return v, nil
		}
		if knownUnsupportedOem[lk] {
			return "", unsupported(id, fmt.Sprintf("service root Oem.%s", k))
		}
	}
	if id.Vendor != "" {
		if v, ok := vendorName(id.Vendor); ok {
			return v, nil
		}
		return "", unsupported(id, fmt.Sprintf("service root Vendor %q", id.Vendor))
	}
	if id.Product != "" {
		if v, ok := productName(id.Product); ok {
			return v, nil
		}
	}
	if m := strings.ToLower(id.ManagerModel); strings.Contains(m, "xclarity") {
		return VendorLenovo, nil
	} else if strings.Contains(m, "idrac") {
		return VendorDell, nil
	}
	for _, k := range id.ManagerOem {
		if v, ok := oemVendors[strings.ToLower(k)]; ok {
			return v, nil
		}
	}
	if id.SystemManufacturer != "" {
		if v, ok := vendorName(id.SystemManufacturer); ok {
			return v, nil
		}
	}
	return "", unsupported(id, "no tell of a supported vendor")
}

func vendorName(s string) (Vendor, bool) {
	l := strings.ToLower(strings.TrimSpace(s))
	switch {
	case l == "dell" || strings.HasPrefix(l, "dell "):
		return VendorDell, true
	case l == "lenovo":
		return VendorLenovo, true
	case l == "ami" || strings.HasPrefix(l, "american megatrends"):
		return VendorAMI, true
	case l == "supermicro" || strings.HasPrefix(l, "super micro"):
		return VendorSupermicro, true
	}
	return "", false
}

func productName(s string) (Vendor, bool) {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "dell remote access controller") || strings.Contains(l, "idrac"):
		return VendorDell, true
	case strings.Contains(l, "xclarity"):
		return VendorLenovo, true
	case strings.Contains(l, "ami redfish server") || strings.Contains(l, "megarac"):
		return VendorAMI, true
	}
	return "", false
}

func unsupported(id Identity, why string) error {
	return VendorUnsupported.New("%s (vendor %q, product %q, manager model %q, system manufacturer %q); supported: Dell iDRAC, Lenovo XCC, AMI MegaRAC, Supermicro",
		why, id.Vendor, id.Product, id.ManagerModel, id.SystemManufacturer)
}
