package flow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/flow"
)

var echoSpec = &hostforge.Spec{Code: "TEST_ECHO", Phase: "test", Owner: hostforge.OwnerSDK, Action: "none"}

// A step whose error carries a secret a remote system echoed leaves
// scrubbed when its set is flow.Scrubbed: the runtime's error, its log line
// and its event carry none of it, while the classification survives.
func TestScrubbedStepsKeepSecretsOutOfErrorsLogsAndEvents(t *testing.T) {
	table := flow.MustTable(
		flow.Bind("fails", time.Minute, func(context.Context, string) (string, error) {
			return "", echoSpec.Wrap(fmt.Errorf("remote said: bad value echoed-pw-1"), "device n1: echoed-pw-1 refused")
		}),
		flow.Bind("waits", time.Minute, func(context.Context, string) (string, error) {
			return "", hostforge.RetryAfter(time.Second, "busy", "busy with echoed-pw-1")
		}),
	)
	sec := hostforge.NewSecrets("echoed-pw-1")
	var logs strings.Builder
	var events []string
	rt := &flow.Local{Steps: flow.Scrubbed(table, sec), Clock: clock.NewFake(clock.Epoch), RoundTrip: true,
		Log: slogTo(&logs), OnEvent: func(e flow.Event) {
			b, _ := json.Marshal(e)
			events = append(events, string(b))
		}}
	var out string
	ferr := rt.Do(context.Background(), "fails", "in", &out)
	werr := rt.Do(context.Background(), "waits", "in", &out)
	if !echoSpec.Is(ferr) {
		t.Fatalf("classification lost: %v", ferr)
	}
	if w, ok := hostforge.AsWait(werr); !ok || w.Reason != "busy" {
		t.Fatalf("wait lost: %v", werr)
	}
	f, _ := hostforge.AsFailure(ferr)
	fj, _ := json.Marshal(f)
	for name, text := range map[string]string{"error": ferr.Error() + werr.Error(), "failure JSON": string(fj), "logs": logs.String(), "events": strings.Join(events, "\n")} {
		if strings.Contains(text, "echoed-pw-1") {
			t.Errorf("%s carries the secret: %s", name, text)
		}
	}
	if flow.Scrubbed(table, nil) != flow.Steps(table) {
		t.Fatal("a nil set must leave the steps as they are")
	}
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }
