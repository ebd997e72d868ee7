// Command fleetsim enrols a simulated fleet — N hosts of mixed vendors, GPU
// and CPU, bonded and not, a share of them broken the ways racks break
// (miscabled, dead optic, a missing DIMM, a blocked BIOS, no gpu_type, a bad
// ztp block) — concurrently through the whole enrollment workflow on
// in-memory fakes and virtual time, then reruns it on the converged fleet.
//
//	go run ./examples/fleetsim -hosts 1000 -broken 0.05 -seed 1
//	go run ./examples/fleetsim -hosts 10000 -o json
//
// It prints wall time, hosts/s, peak heap, calls per host by system split
// into reads and writes (fresh run and converged rerun), the virtual time to
// the end state (p50/p95/p99), and failures by code. It exits 1 when a
// promise was broken (a panic, an UNCLASSIFIED failure, a broken host that
// reached the end state).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/ironic"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fleetsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hosts := fs.Int("hosts", 1000, "number of hosts (1..10000)")
	broken := fs.Float64("broken", 0.05, "share of broken hosts, 0..1")
	seed := fs.Uint64("seed", 1, "seed of the fleet's mix and breakages")
	workers := fs.Int("workers", 0, "hosts enrolled at once (0: all of them)")
	out := fs.String("o", "text", "output: text or json (one JSON document)")
	noPC := fs.Bool("no-platform-class", false, "run with the platform_class_activity_ready gate off")
	noPace := fs.Bool("no-pace", false, "run the Ironic phases without a learned pace (the poll policy alone)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *hosts < 1 || *hosts > 10000 {
		fmt.Fprintf(stderr, "fleetsim: -hosts %d is outside 1..10000\n", *hosts)
		return 2
	}
	if *out != "text" && *out != "json" {
		fmt.Fprintf(stderr, "fleetsim: -o %q: want text or json\n", *out)
		return 2
	}
	fleet, err := fleetsim.Build(fleetsim.Config{Hosts: *hosts, Broken: *broken, Seed: *seed})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	o := fleetsim.Options{Wall: clock.Real{}, Workers: *workers, PlatformClassOff: *noPC}
	if *noPace {
		o.Exec = fleet.Executor(nil)
		for _, ph := range o.Exec.Ironic {
			if p, ok := ph.(*ironic.Phases); ok {
				p.Pace = nil
			}
		}
	}
	rep := fleet.Simulate(context.Background(), o)
	if *out == "json" {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if len(rep.Violations) > 0 {
		return 1
	}
	return 0
}
