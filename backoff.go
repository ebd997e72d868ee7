package hostforge

import "time"

// Backoff is capped doubling: First, 2×First, 4×First, … never above Max.
// It is the one pause schedule of the SDK: retries of failed attempts, the
// node-lock meter, busy systems and poll intervals all use it.
type Backoff struct {
	First time.Duration
	Max   time.Duration
}

// After is the pause before retry n (1-based). n below 1 counts as 1; a
// zero First gives 0; a Max below First caps at First.
func (b Backoff) After(n int) time.Duration {
	d := b.First
	if d <= 0 {
		return 0
	}
	limit := b.Max
	if limit < d {
		limit = d
	}
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
