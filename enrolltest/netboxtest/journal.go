package netboxtest

import (
	"context"
	"errors"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// Journal is a device's journal as retirement reads and writes it
// (retirement.NetBox); the journal cases run when the client has it.
type Journal interface {
	JournalEntries(ctx context.Context, deviceID int) ([]intent.JournalEntry, error)
	AddJournalEntry(ctx context.Context, deviceID int, kind intent.JournalKind, comments string) (intent.JournalEntry, error)
}

func journalOf(t *testing.T, h Harness) Journal {
	t.Helper()
	j, ok := h.Client.(Journal)
	if !ok {
		t.Skipf("%T has no device journal", h.Client)
	}
	return j
}

func testJournal(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(gpuHost("h1"))
	site.AddHost(gpuHost("h2"))
	h := newHarness(t, site)
	j := journalOf(t, h)
	ctx := context.Background()
	id := deviceID(t, site, "h1")
	before := want(t, site, "h1")
	if got, err := j.JournalEntries(ctx, id); err != nil || len(got) != 0 {
		t.Fatalf("the journal of a new device: %+v, %v; want none", got, err)
	}
	first, err := j.AddJournalEntry(ctx, id, intent.JournalInfo, "hostforge retire: run r-1 retired this device")
	if err != nil {
		t.Fatal(err)
	}
	if first.ID <= 0 || first.Kind != intent.JournalInfo || first.Comments != "hostforge retire: run r-1 retired this device" || first.Created.IsZero() {
		t.Fatalf("the entry written reads %+v", first)
	}
	second, err := j.AddJournalEntry(ctx, id, intent.JournalSuccess, "second")
	if err != nil {
		t.Fatal(err)
	}
	got, err := j.JournalEntries(ctx, id)
	if err != nil || len(got) != 2 || got[0].ID != first.ID || got[1].ID != second.ID || got[1].Kind != intent.JournalSuccess || got[0].Comments != first.Comments {
		t.Fatalf("journal %+v, %v; want the two entries, oldest first", got, err)
	}
	// Another device's journal is its own; the device itself is unchanged.
	if other, err := j.JournalEntries(ctx, deviceID(t, site, "h2")); err != nil || len(other) != 0 {
		t.Fatalf("another device's journal: %+v, %v; want none", other, err)
	}
	onlyChanged(t, site, "h1", before, func(*intent.Device) {})
	if site.NetBox.Journal("h1")[1].Comments != "second" {
		t.Fatalf("the site holds %+v", site.NetBox.Journal("h1"))
	}
}

func testJournalRefused(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(gpuHost("h1"))
	h := newHarness(t, site)
	j := journalOf(t, h)
	ctx := context.Background()
	id := deviceID(t, site, "h1")
	for _, c := range []struct {
		name     string
		id       int
		kind     intent.JournalKind
		comments string
	}{
		{"unknown kind", id, "bogus", "x"},
		{"empty comments", id, intent.JournalInfo, "  "},
		{"no such device", id + 10000, intent.JournalInfo, "x"},
	} {
		if _, err := j.AddJournalEntry(ctx, c.id, c.kind, c.comments); !errors.Is(err, hostforge.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	if got := site.NetBox.Journal("h1"); len(got) != 0 {
		t.Fatalf("refused writes left %+v", got)
	}
	site.Inject(fakes.SysNetBox, "journal_entries", 100, hostforge.ErrUnavailable)
	if _, err := j.JournalEntries(ctx, id); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("an unavailable NetBox: %v, want ErrUnavailable", err)
	}
	site.ClearFaults()
	// A write whose answer is lost took effect once: the caller reads the
	// journal to see it, and nothing wrote it a second time.
	site.InjectLost(fakes.SysNetBox, "add_journal_entry", 1, hostforge.ErrUnavailable)
	if _, err := j.AddJournalEntry(ctx, id, intent.JournalInfo, "once"); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("a lost answer: %v, want ErrUnavailable", err)
	}
	if got := site.NetBox.Journal("h1"); len(got) != 1 || got[0].Comments != "once" {
		t.Fatalf("after a lost answer the journal holds %+v; want the one entry, written once", got)
	}
}
