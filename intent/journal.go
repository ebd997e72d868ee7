package intent

import "time"

// JournalKind is the kind of a NetBox journal entry.
type JournalKind string

// NetBox's journal entry kinds.
const (
	JournalInfo    JournalKind = "info"
	JournalSuccess JournalKind = "success"
	JournalWarning JournalKind = "warning"
	JournalDanger  JournalKind = "danger"
)

// Known reports whether k is one of NetBox's journal entry kinds.
func (k JournalKind) Known() bool {
	switch k {
	case JournalInfo, JournalSuccess, JournalWarning, JournalDanger:
		return true
	}
	return false
}

// JournalEntry is one entry of a NetBox object's journal (extras /
// journal-entries): what happened to the object, written by people or by
// a tool, in time order. Retirement names its run in one, so the device's
// own record says which run retired it.
type JournalEntry struct {
	ID       int         `json:"id"`
	Kind     JournalKind `json:"kind"`
	Comments string      `json:"comments"`
	// Created is when NetBox recorded the entry (zero when unknown).
	Created time.Time `json:"created,omitzero"`
}
