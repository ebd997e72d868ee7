package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// helpMaxLines is the longest help a person reads on one screen: every
// --help is shorter.
const helpMaxLines = 60

// countExamples counts the command lines of an Example: a line ending in
// a backslash continues on the next.
func countExamples(example string) int {
	n, cont := 0, false
	for _, l := range strings.Split(example, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if !cont {
			n++
		}
		cont = strings.HasSuffix(l, `\`)
	}
	return n
}

// Every command of the tree — cobra's help and completion too, and any
// command added later — prints a help under 60 lines with 2 to 4 examples.
func TestEveryHelpIsShortWithExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		seen++
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		r := run(t, "", nil, args...)
		if r.code != ExitOK {
			t.Errorf("%s --help exits %d:\n%s", c.CommandPath(), r.code, r.err)
		}
		if n := strings.Count(r.out, "\n"); n >= helpMaxLines {
			t.Errorf("%s --help is %d lines, want fewer than %d", c.CommandPath(), n, helpMaxLines)
		}
		if n := countExamples(c.Example); n < 2 || n > 4 {
			t.Errorf("%s --help has %d examples, want 2 to 4:\n%s", c.CommandPath(), n, c.Example)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(Streams{}, nil))
	if seen < 50 {
		t.Fatalf("walked %d commands: the tree is not what the test expects", seen)
	}
}

func TestCountExamples(t *testing.T) {
	for _, tc := range []struct {
		example string
		want    int
	}{
		{"", 0},
		{"  hostforge version", 1},
		{"  hostforge a \\\n      --b c\n  hostforge d", 2},
		{"  hostforge lab &\n  hostforge enroll x\n\n  hostforge worker &\n  hostforge enroll y", 4},
	} {
		if got := countExamples(tc.example); got != tc.want {
			t.Errorf("countExamples(%q) = %d, want %d", tc.example, got, tc.want)
		}
	}
}
