// Package ironic is enrollment phases 4-7: the shared prelude, the inspection
// half, the optional Redfish→IPMI driver switch and the cleaning half, against
// a small Ironic client interface.
package ironic
