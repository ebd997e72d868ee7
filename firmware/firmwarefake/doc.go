// Package firmwarefake holds behavioural fakes of the firmware package's
// interfaces: an in-memory Store (MemStore), managed hosts (Hosts), a BMC
// adapter over the fake firmware BMC of package fakes (BMC), an on-host
// agent (Scout) and a local script runner (Scripts). Each behaves like the
// real system: the BMC's inventory changes only when staged firmware is
// activated by the reset its component needs, and MemStore passes the same
// contract suite (firmware/firmwaretest) as the SQL store.
package firmwarefake
