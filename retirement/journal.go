package retirement

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hostforge/hostforge/intent"
)

// The device's NetBox journal is the retirement's own record in the source
// of truth: which run retired the device (written before the status goes
// offline) and that the run announced it (written once its events were
// delivered). A rerun reads it: an offline device whose journal names a
// retirement resumes that run, and one whose run announced itself fires
// nothing again. Anyone with write access to the journal can write such an
// entry; that is the same authority as setting the status.

// journalRE reads the first line of a retirement's entry.
var journalRE = regexp.MustCompile(`^hostforge retirement (\S+): (retired|announced)\b`)

// journalRetired is the entry a run writes before it sets the device offline.
func journalRetired(run string, lines []string) string {
	return fmt.Sprintf("hostforge retirement %s: retired\n%s", run, strings.Join(lines, "\n"))
}

// journalAnnounced is the entry a run writes once its events were delivered.
func journalAnnounced(run string, stages []string) string {
	return fmt.Sprintf("hostforge retirement %s: announced %s", run, strings.Join(stages, ", "))
}

// Journal is what a device's journal says of its retirements.
type Journal struct {
	// Retired lists the runs that retired the device, oldest first.
	Retired []string `json:"retired,omitempty"`
	// Announced lists the runs that announced themselves.
	Announced []string `json:"announced,omitempty"`
}

// ReadJournal reads the retirements' entries out of a device's journal.
func ReadJournal(entries []intent.JournalEntry) Journal {
	var j Journal
	for _, e := range entries {
		first, _, _ := strings.Cut(e.Comments, "\n")
		m := journalRE.FindStringSubmatch(first)
		if m == nil {
			continue
		}
		if m[2] == "retired" {
			j.Retired = append(j.Retired, m[1])
		} else {
			j.Announced = append(j.Announced, m[1])
		}
	}
	return j
}

// LastRetired is the run of the latest retirement entry, "" when none.
func (j Journal) LastRetired() string {
	if len(j.Retired) == 0 {
		return ""
	}
	return j.Retired[len(j.Retired)-1]
}

// HasRetired reports whether run wrote its retirement entry.
func (j Journal) HasRetired(run string) bool { return contains(j.Retired, run) }

// HasAnnounced reports whether run announced itself.
func (j Journal) HasAnnounced(run string) bool { return contains(j.Announced, run) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
