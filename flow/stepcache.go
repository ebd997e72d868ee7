package flow

import (
	"sync"
	"sync/atomic"

	"github.com/hostforge/hostforge"
)

// StepCache holds an executor's step table, built once on first use, and
// that table scrubbed of the executor's secrets (Scrubbed), built once per
// set rather than on every lookup. The set may be set after the first
// call: a different set is wrapped anew. The zero value is ready; an
// executor embeds one and must not be copied after first use.
type StepCache struct {
	once     sync.Once
	table    *Table
	scrubbed atomic.Pointer[scrubbedCache]
}

type scrubbedCache struct {
	secrets *hostforge.Secrets
	steps   Steps
}

// Table returns the table build makes, calling build on the first call only.
func (c *StepCache) Table(build func() *Table) *Table {
	c.once.Do(func() { c.table = build() })
	return c.table
}

// Step returns the step registered under name in the table build makes,
// its errors scrubbed of secrets (nil: as registered).
func (c *StepCache) Step(build func() *Table, secrets *hostforge.Secrets, name string) (Step, bool) {
	t := c.Table(build)
	if secrets == nil {
		return t.Step(name)
	}
	s := c.scrubbed.Load()
	if s == nil || s.secrets != secrets {
		s = &scrubbedCache{secrets: secrets, steps: Scrubbed(t, secrets)}
		c.scrubbed.Store(s)
	}
	return s.steps.Step(name)
}
