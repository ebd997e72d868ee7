package metrics

import "time"

// SetNow replaces the time DeclareSchedule marks.
func SetNow(w *Workflows, now func() time.Time) { w.now = now }
