package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
)

// A StepCache builds the table once, hands its steps out as registered
// without secrets, and scrubbed of whichever set it is given, a set given
// after the first call included.
func TestStepCacheBuildsOnceAndScrubsWithTheSetGiven(t *testing.T) {
	builds := 0
	build := func() *flow.Table {
		builds++
		return flow.MustTable(flow.Bind("echo", time.Minute, func(_ context.Context, in string) (string, error) {
			return "", errors.New("remote said: " + in)
		}))
	}
	var c flow.StepCache
	call := func(sec *hostforge.Secrets) string {
		t.Helper()
		st, ok := c.Step(build, sec, "echo")
		if !ok {
			t.Fatal("no step echo")
		}
		var out string
		return st.Call(context.Background(), "pw-1 pw-2", &out, false).Error()
	}
	if got := call(nil); !strings.Contains(got, "pw-1 pw-2") {
		t.Fatalf("without secrets: %q", got)
	}
	if got := call(hostforge.NewSecrets("pw-1")); strings.Contains(got, "pw-1") || !strings.Contains(got, "pw-2") {
		t.Fatalf("scrubbed of pw-1: %q", got)
	}
	if got := call(hostforge.NewSecrets("pw-2")); strings.Contains(got, "pw-2") || !strings.Contains(got, "pw-1") {
		t.Fatalf("scrubbed of a later set, pw-2: %q", got)
	}
	if _, ok := c.Step(build, nil, "nope"); ok {
		t.Fatal("found a step that is not registered")
	}
	if names := c.Table(build).StepNames(); len(names) != 1 || builds != 1 {
		t.Fatalf("steps %v, built %d times; want [echo], once", names, builds)
	}
}
