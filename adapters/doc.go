// Package adapters groups the thin adapters that connect hostforge to real
// systems (NetBox, Ironic, Redfish BMCs, a DHCP server over SSH, a vault,
// the firmware routes: artifacts, local scripts, the on-host agent; a
// Prometheus registry) and to orchestrators (Temporal, a CLI). The core
// packages import none of them.
package adapters
