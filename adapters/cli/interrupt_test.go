package cli

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestRunAbandonsACommandThatIgnoresTheInterrupt: a command stuck where it
// cannot see its context (here reading a payload from a standard input
// that never ends) is abandoned DefaultStopGrace after the interrupt, and
// Run returns ExitCancelled: the process can exit.
func TestRunAbandonsACommandThatIgnoresTheInterrupt(t *testing.T) {
	def, _ := writeTemplateDef(t, t.TempDir(), "quiet", `{}`)
	stdin, feed := io.Pipe()
	var out, errb lockedBuffer // the abandoned command may still write
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	code := Run(ctx, []string{"extensions", "render", "--definition", def, "--stage", "serverRegistered", "--payload", "-"},
		Streams{In: stdin, Out: &out, Err: &errb}, nil)
	errText := errb.String()
	_ = feed.Close() // let the abandoned command finish, for the leak check
	if code != ExitCancelled {
		t.Fatalf("exit code %d, want %d\n%s", code, ExitCancelled, errText)
	}
	if !strings.Contains(errText, "CANCELLED") || !strings.Contains(errText, "did not stop within 750ms") {
		t.Fatalf("stderr %q: want the interrupt reported", errText)
	}
}
