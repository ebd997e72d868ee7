package fakes

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/intent"
)

// NBJournalEntry is a NetBox journal entry (extras.JournalEntry): a note
// assigned to an object, in time order.
type NBJournalEntry struct {
	ID int
	// ObjectType and ObjectID name the object, e.g. "dcim.device" and its id.
	ObjectType string
	ObjectID   int
	Kind       string
	Comments   string
	Created    time.Time
}

// ObjectTypeDevice is a device's assigned_object_type.
const ObjectTypeDevice = "dcim.device"

// MaxJournalComments caps a fake journal entry's comments (NetBox's field is
// unbounded text; the cap keeps a runaway writer visible in tests).
const MaxJournalComments = 64 << 10

// AddJournalEntry records a journal entry against a device, as NetBox does:
// a known kind, non-empty comments, an existing device; a new id and the
// creation time each time, so a repeated call makes a second entry.
func (s *NetBoxState) AddJournalEntry(objectType string, objectID int, kind, comments string, now time.Time) (*NBJournalEntry, error) {
	switch {
	case objectType != ObjectTypeDevice:
		return nil, fmt.Errorf("netbox: assigned_object_type %q is not supported here: %w", objectType, hostforge.ErrInvalid)
	case s.Devices[objectID] == nil:
		return nil, fmt.Errorf("netbox: the assigned object %s %d does not exist: %w", objectType, objectID, hostforge.ErrInvalid)
	case !intent.JournalKind(kind).Known():
		return nil, fmt.Errorf("netbox: kind %q is not a valid choice: %w", kind, hostforge.ErrInvalid)
	case strings.TrimSpace(comments) == "":
		return nil, fmt.Errorf("netbox: comments: this field may not be blank: %w", hostforge.ErrInvalid)
	case len(comments) > MaxJournalComments:
		return nil, fmt.Errorf("netbox: comments longer than %d bytes: %w", MaxJournalComments, hostforge.ErrInvalid)
	}
	e := &NBJournalEntry{ID: s.id(), ObjectType: objectType, ObjectID: objectID, Kind: kind, Comments: comments, Created: now.UTC()}
	s.Journal[objectID] = append(s.Journal[objectID], e)
	return e, nil
}

// JournalOf lists an object's journal entries, oldest first.
func (s *NetBoxState) JournalOf(objectType string, objectID int) []*NBJournalEntry {
	if objectType != ObjectTypeDevice {
		return nil
	}
	return s.Journal[objectID]
}

// JournalEntries lists every journal entry, by id.
func (s *NetBoxState) JournalEntries() []*NBJournalEntry {
	var out []*NBJournalEntry
	for _, js := range s.Journal {
		out = append(out, js...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Intent is the entry as the workflow reads it.
func (e *NBJournalEntry) Intent() intent.JournalEntry {
	return intent.JournalEntry{ID: e.ID, Kind: intent.JournalKind(e.Kind), Comments: e.Comments, Created: e.Created}
}

// JournalEntries lists a device's journal entries, oldest first.
func (n *NetBox) JournalEntries(ctx context.Context, deviceID int) ([]intent.JournalEntry, error) {
	if err := n.enter(ctx, "journal_entries", false); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	// NetBox filters the journal by the object: an unknown one has none.
	var out []intent.JournalEntry
	for _, e := range n.state.JournalOf(ObjectTypeDevice, deviceID) {
		out = append(out, e.Intent())
	}
	return out, nil
}

// AddJournalEntry writes a journal entry on a device.
func (n *NetBox) AddJournalEntry(ctx context.Context, deviceID int, kind intent.JournalKind, comments string) (_ intent.JournalEntry, err error) {
	if err := n.enter(ctx, "add_journal_entry", true); err != nil {
		return intent.JournalEntry{}, err
	}
	defer n.site.answer(ctx, SysNetBox, "add_journal_entry", &err)
	n.mu.Lock()
	defer n.mu.Unlock()
	e, err := n.state.AddJournalEntry(ObjectTypeDevice, deviceID, string(kind), comments, n.site.Clock.Now())
	if err != nil {
		return intent.JournalEntry{}, err
	}
	return e.Intent(), nil
}

// Journal lists a device's journal entries by device name without counting
// a call (test control); nil for an unknown device.
func (n *NetBox) Journal(device string) []intent.JournalEntry {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.state.DeviceByName(device)
	if d == nil {
		return nil
	}
	var out []intent.JournalEntry
	for _, e := range n.state.JournalOf(ObjectTypeDevice, d.ID) {
		out = append(out, e.Intent())
	}
	return out
}

// Now is the site's time, which NetBox stamps journal entries with (the
// REST emulator uses it too).
func (n *NetBox) Now() time.Time { return n.site.Clock.Now() }
