// Package intent is the plain-data model of what the source of truth (NetBox)
// records for one host: the device, its type, role, site, interfaces, cables,
// tags, custom fields and rendered config context.
//
// It is data only: no I/O and no rules. The enrollment package reads a
// [Device] once per attempt through its NetBox interface, validates it and
// maps it into each phase's input. Keeping the model in this low layer lets
// the in-memory fakes, the NetBox REST emulator and the go-netbox adapter all
// produce the same type without importing the workflow.
//
// Every type here is JSON-serialisable, because the workflow passes it between
// steps that may run as Temporal activities.
package intent
