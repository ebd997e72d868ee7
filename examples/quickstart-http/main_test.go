package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The rack ends the same way over HTTP as in memory: same result, platform
// class, NetBox status and tags for every host.
func TestSameResultsOverHTTP(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "NO:") || !strings.Contains(out.String(), "gpu-r1-u02") {
		t.Errorf("unexpected comparison:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}
