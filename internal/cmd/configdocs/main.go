// Command configdocs writes the config file's reference (docs/config.md)
// and its commented sample (examples/config/site.yaml) from the reference
// the config code owns (adapters/wiring.Reference). Run it through
// `go generate .`; CI fails when either file is stale.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/hostforge/hostforge/adapters/wiring"
)

func main() {
	doc := flag.String("doc", "docs/config.md", "reference to write")
	example := flag.String("example", "examples/config/site.yaml", "sample config to write")
	flag.Parse()
	for _, f := range []struct{ path, text string }{{*doc, wiring.ReferenceMarkdown()}, {*example, wiring.ExampleConfig()}} {
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "configdocs:", err)
			os.Exit(1)
		}
	}
}
