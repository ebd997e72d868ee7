package firmware

import (
	"context"
	"time"
)

// HistoryStore keeps finished updates (Complete writes them) for the
// operator: a host's updates, their substates, the components they
// changed and their failure, until the retention removes them.
type HistoryStore interface {
	// History lists the machine's finished updates, oldest first.
	History(ctx context.Context, machine string) ([]UpdateHistory, error)
	// PruneHistory removes the finished updates that finished before
	// before, and says how many.
	PruneHistory(ctx context.Context, before time.Time) (int, error)
}

// PassStore keeps the figures of the update manager's last pass, so that
// a worker that did not run it publishes them (not zeros).
type PassStore interface {
	// PutPassFigures replaces the stored figures.
	PutPassFigures(ctx context.Context, f PassFigures) error
	// PassFigures returns the stored figures; ok is false before the
	// first pass.
	PassFigures(ctx context.Context) (f PassFigures, ok bool, err error)
}

// Outcomes of a finished update beside OutcomeDone.
const (
	// OutcomeCancelled: an operator cancelled the update; the host was
	// handed back as it was.
	OutcomeCancelled = "cancelled"
)

// DefaultHistoryRetention is how long finished updates are kept when the
// site sets no retention.
const DefaultHistoryRetention = 90 * 24 * time.Hour

// UpdateHistory is one finished update of a machine, as kept: its
// request, how and when it ended, its final record (the substates it went
// through, the components it changed, its last failure) and its results.
type UpdateHistory struct {
	MachineID string `json:"machine_id"`
	// Generation is the update's (see HostUpdate.Generation): with the
	// machine, it names the update.
	Generation int64     `json:"generation"`
	Initiator  string    `json:"initiator"`
	Message    string    `json:"update_message,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at"`
	// Outcome is OutcomeDone or OutcomeCancelled.
	Outcome string `json:"outcome"`
	// CancelledBy is who cancelled the update.
	CancelledBy string     `json:"cancelled_by,omitempty"`
	Record      HostUpdate `json:"record"`
	// Results are the machine's upload, script and agent results as they
	// were when the update ended (the store fills them in).
	Results []Result `json:"results,omitempty"`
}

// PassFigures are what one pass of the update manager counted.
type PassFigures struct {
	At time.Time `json:"at"`
	// Holder is the worker that ran the pass.
	Holder        string         `json:"holder"`
	Total         int            `json:"total"`
	Unhealthy     int            `json:"unhealthy"`
	InMaintenance int            `json:"in_maintenance"`
	Ceiling       int            `json:"ceiling"`
	Available     int            `json:"available"`
	Pending       int            `json:"pending"`
	Started       int            `json:"started"`
	Unmatched     int            `json:"unmatched"`
	Skipped       map[string]int `json:"skipped,omitempty"`
}

// FiguresOf reduces a pass report to its figures.
func FiguresOf(rep PassReport, holder string) PassFigures {
	f := PassFigures{At: rep.At, Holder: holder, Total: rep.Total, Unhealthy: rep.Unhealthy, InMaintenance: rep.InMaintenance,
		Ceiling: rep.Ceiling, Available: rep.Available, Pending: rep.Pending, Started: len(rep.Started), Unmatched: len(rep.Unmatched)}
	if len(rep.Skipped) > 0 {
		f.Skipped = make(map[string]int, len(rep.Skipped))
		for k, v := range rep.Skipped {
			f.Skipped[k] = v
		}
	}
	return f
}
