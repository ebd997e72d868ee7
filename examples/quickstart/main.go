// Command quickstart enrols a fake rack — healthy GPU, CPU and hypervisor
// hosts and hosts broken the ways NetBox data breaks — through the whole
// enrollment workflow on in-memory fakes, prints what became of each host,
// then runs again to show that a rerun on converged hosts writes nothing.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/examples/internal/demo"
)

func main() {
	site := demo.NewSite()
	exec := enrolltest.Executor(site, demo.Logger(os.Stderr))
	cfg := demo.SiteConfig()
	ctx := context.Background()

	first := demo.EnrollAll(ctx, site, exec, site.NetBox, cfg)
	demo.PrintTable(os.Stdout, "First run: every host from staged (fresh site)", first)

	second := demo.EnrollAll(ctx, site, exec, site.NetBox, cfg)
	fmt.Println()
	demo.PrintTable(os.Stdout, "Second run: the same hosts again (a converged host makes no writes)", second)
}
