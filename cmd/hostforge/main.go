// Command hostforge enrols NetBox-registered servers into OpenStack Ironic
// and carries the offline tools operators reach for: platform-class
// resolution and backfill, inventory verification, LLDP decoding, BMC vendor
// detection and the failure-code catalogue.
//
//	go run ./cmd/hostforge --help
//	go run ./cmd/hostforge enroll --demo
//
// The command tree lives in package adapters/cli; this is only its main.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/hostforge/hostforge/adapters/cli"
)

// main runs the command tree. SIGINT and SIGTERM interrupt the command
// through its context: it stops, reports and exits 7 (cli.ExitCancelled);
// one that does not stop within cli.DefaultStopGrace is abandoned and the
// process exits 7 all the same (cli.Run). The first signal also restores
// the signals' default action, so a second one ends the process at once:
// signal.NotifyContext alone would keep catching them for as long as the
// command runs, and a command that does not watch its context (a template
// render, before renders took one) could then not be stopped at all.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	streams := cli.Streams{
		In:       os.Stdin,
		Out:      os.Stdout,
		Err:      os.Stderr,
		Terminal: isTerminal(os.Stdout),
	}
	if streams.Terminal {
		streams.Size, streams.Resized = terminalSize(os.Stdout), resizes()
	}
	code := cli.Run(ctx, os.Args[1:], streams, os.LookupEnv)
	stop()
	os.Exit(code)
}

// isTerminal reports whether f is a character device (an interactive
// terminal) rather than a file or a pipe.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
