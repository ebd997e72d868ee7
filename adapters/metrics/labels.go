package metrics

import (
	"sync"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions"
)

// Other stands for a label value past a label's bound, or outside its
// enumeration.
const Other = "other"

// maxValues bounds the distinct values of a label whose values are code
// constants (workflow, phase, step, reason, schedule): far above what the
// code declares, so only a caller that passes data where a constant
// belongs reaches it — and then its values fold into Other instead of a
// series per device.
const maxValues = 200

// bounded admits at most max distinct values for one label.
type bounded struct {
	mu   sync.RWMutex
	seen map[string]struct{}
	max  int
}

func newBounded(max int) *bounded { return &bounded{seen: map[string]struct{}{}, max: max} }

// value returns v while the label has room for it, Other after.
func (b *bounded) value(v string) string {
	b.mu.RLock()
	_, ok := b.seen[v]
	b.mu.RUnlock()
	if ok {
		return v
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max {
		return Other
	}
	b.seen[v] = struct{}{}
	return v
}

// codeOwner are the code and owner labels of a failure: a code the
// registry declares (hostforge.Declare) and the owner it declares for it,
// so both are bounded by the code catalogue. A failure whose code is not
// declared is counted as UNCLASSIFIED, the catalogue's code for an error
// that escaped classification. No failure gives empty labels.
func codeOwner(f *hostforge.Failure) (code, owner string) {
	if f == nil {
		return "", ""
	}
	spec, ok := hostforge.Lookup(f.Code)
	if !ok {
		spec = *hostforge.Unclassified
	}
	return spec.Code, string(spec.Owner)
}

// stageLabel is a stage the extensions know, or Other.
func stageLabel(s extensions.Stage) string {
	if s.Known() {
		return string(s)
	}
	return Other
}

// taskTypeLabel is one of the three task types, or Other.
func taskTypeLabel(t extensions.TaskType) string {
	switch t {
	case extensions.TaskWebhook, extensions.TaskSSH, extensions.TaskAnsible:
		return string(t)
	}
	return Other
}

// statusLabel is an execution status, or Other.
func statusLabel(s extensions.ExecStatus) string {
	switch s {
	case extensions.StatusSucceeded, extensions.StatusFailed, extensions.StatusSkipped, extensions.StatusRunning:
		return string(s)
	}
	return Other
}

// outcomeLabel is a step's outcome: done, wait or failed.
func outcomeLabel(o hostforge.Outcome) string { return o.String() }
