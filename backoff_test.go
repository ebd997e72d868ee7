package hostforge_test

import (
	"testing"
	"time"

	"github.com/hostforge/hostforge"
)

func TestBackoffAfter(t *testing.T) {
	s := time.Second
	cases := []struct {
		name string
		b    hostforge.Backoff
		n    int
		want time.Duration
	}{
		{"first retry", hostforge.Backoff{First: 10 * s, Max: 60 * s}, 1, 10 * s},
		{"doubles", hostforge.Backoff{First: 10 * s, Max: 60 * s}, 3, 40 * s},
		{"capped", hostforge.Backoff{First: 10 * s, Max: 60 * s}, 4, 60 * s},
		{"stays capped far out", hostforge.Backoff{First: 10 * s, Max: 60 * s}, 1000, 60 * s},
		{"n below one is the first", hostforge.Backoff{First: 5 * s, Max: 30 * s}, 0, 5 * s},
		{"zero first is no pause", hostforge.Backoff{Max: 30 * s}, 3, 0},
		{"max below first caps at first", hostforge.Backoff{First: 5 * s, Max: s}, 3, 5 * s},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.After(c.n); got != c.want {
				t.Fatalf("After(%d) = %s, want %s", c.n, got, c.want)
			}
		})
	}
}
