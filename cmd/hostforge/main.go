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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Streams{
		In:       os.Stdin,
		Out:      os.Stdout,
		Err:      os.Stderr,
		Terminal: isTerminal(os.Stdout),
	}, os.LookupEnv)
	stop()
	os.Exit(code)
}

// isTerminal reports whether f is a character device (an interactive
// terminal) rather than a file or a pipe.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
