// Package bmc is enrollment phase 2: it detects the BMC's vendor from the
// Redfish service root and runs that vendor's configuration strategy.
package bmc
