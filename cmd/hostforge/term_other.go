//go:build !unix

package main

import "os"

// terminalSize is unknown here: the live area assumes 80×24.
func terminalSize(*os.File) func() (cols, rows int) { return nil }

// resizes never fires here.
func resizes() <-chan struct{} { return nil }
