// Command failuredocs writes docs/failure-codes.md from the failure codes
// declared in the module's source. Run it through `go generate ./...`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/hostforge/hostforge/internal/failurecat"
)

func main() {
	root := flag.String("root", ".", "module root")
	out := flag.String("out", "docs/failure-codes.md", "catalogue to write")
	flag.Parse()
	if err := failurecat.Generate(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "failuredocs:", err)
		os.Exit(1)
	}
}
