//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// terminalSize reads the size of the terminal f is, for the live progress
// area to fit its rows to.
func terminalSize(f *os.File) func() (cols, rows int) {
	return func() (int, int) {
		ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
		if err != nil {
			return 0, 0
		}
		return int(ws.Col), int(ws.Row)
	}
}

// resizes signals each SIGWINCH: the terminal changed size. A burst of
// them is one redraw.
func resizes() <-chan struct{} {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	out := make(chan struct{}, 1)
	go func() {
		for range sig {
			select {
			case out <- struct{}{}:
			default:
			}
		}
	}()
	return out
}
