package firmware

import "strings"

// ComponentType is one updatable firmware component of a host model, named
// as the catalog names it (lower case).
type ComponentType string

// The component types a catalog may configure.
const (
	BMC             ComponentType = "bmc"             // the host BMC
	CEC             ComponentType = "cec"             // chassis/enclosure controller
	UEFI            ComponentType = "uefi"            // host UEFI/BIOS
	NIC             ComponentType = "nic"             // a host NIC
	CPLDMB          ComponentType = "cpldmb"          // motherboard CPLD
	CPLDPDB         ComponentType = "cpldpdb"         // power distribution board CPLD
	HGXBMC          ComponentType = "hgxbmc"          // the HGX baseboard's BMC
	CombinedBMCUEFI ComponentType = "combinedbmcuefi" // one image carrying BMC and UEFI
	GPU             ComponentType = "gpu"             // GPU firmware
	CX7             ComponentType = "cx7"             // ConnectX-7 cards
	Unknown         ComponentType = "unknown"         // a component the catalog cannot name otherwise
)

// ComponentTypes lists every component type in canonical order: the order
// in which components a model's ordering leaves out are considered.
var ComponentTypes = []ComponentType{BMC, CEC, UEFI, NIC, CPLDMB, CPLDPDB, HGXBMC, CombinedBMCUEFI, GPU, CX7, Unknown}

var componentRank = func() map[ComponentType]int {
	m := make(map[ComponentType]int, len(ComponentTypes))
	for i, c := range ComponentTypes {
		m[c] = i
	}
	return m
}()

// ParseComponentType returns the component type named s. Names are exact
// and lower case, as in the catalog format.
func ParseComponentType(s string) (ComponentType, bool) {
	c := ComponentType(s)
	_, ok := componentRank[c]
	return c, ok
}

// DefaultOrdering is the ordering of a model that configures none.
var DefaultOrdering = []ComponentType{BMC, UEFI}

// componentNames renders the known types for error messages.
func componentNames() string {
	parts := make([]string, len(ComponentTypes))
	for i, c := range ComponentTypes {
		parts[i] = string(c)
	}
	return strings.Join(parts, ", ")
}
