// Command fwsim simulates managed-host firmware updates across a fleet —
// N hosts of the four real vendor profiles, a share drifted, some assigned
// to tenants, some in maintenance, a few faulty — on virtual time: the
// update manager's pass every 5 minutes, every request's update workflow
// on the shared runtime, worker restarts and crashes between a BMC action
// and its write at seeded ticks, a catalog change (an operator's runtime
// override of the R750's bmc default, after which every R750 is updated
// again) and operator cancellations of running updates. Every invariant
// of the specification is checked on every tick.
//
//	go run ./examples/fwsim -hosts 1000 -seed 1
//	go run ./examples/fwsim -hosts 10000 -o json
//	go run ./examples/fwsim -hosts 500 -store sqlite:/tmp/fw.db
//
// It prints wall time, peak heap, virtual time, the end states (compliant,
// failed with the retry budget spent, flagged unmatched), failure codes and
// every broken invariant. It exits 1 when an invariant was broken.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/fwsim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := fwsim.DefaultConfig(1000, 1)
	hosts := fs.Int("hosts", 1000, "number of hosts (1..20000)")
	seed := fs.Uint64("seed", 1, "seed of the fleet, its faults and its restarts")
	drifted := fs.Float64("drifted", def.Drifted, "share of drifted hosts, 0..1")
	assigned := fs.Float64("assigned", def.Assigned, "share of hosts assigned to a tenant, 0..1")
	maint := fs.Float64("maintenance", def.Maintenance, "share of hosts in maintenance at the start, 0..1")
	faulty := fs.Float64("faulty", def.Faulty, "share of the drifted hosts with a fault, 0..1")
	ceiling := fs.Int("ceiling-percent", def.CeilingPercent, "max_concurrent_machine_updates_percent")
	restarts := fs.Int("restarts", def.Restarts, "worker restarts at random ticks")
	catalogAt := fs.Duration("catalog-change-at", def.CatalogChangeAt, "virtual time of the operator's catalog change (0: none)")
	cancels := fs.Float64("cancellations", def.Cancellations, "share of the drifted hosts whose running update an operator cancels, 0..1")
	store := fs.String("store", "memory", "state store: memory, or sqlite:PATH (a new file)")
	out := fs.String("o", "text", "output: text or json")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *hosts < 1 || *hosts > 20000 {
		fmt.Fprintf(stderr, "fwsim: -hosts %d is outside 1..20000\n", *hosts)
		return 2
	}
	for name, v := range map[string]float64{"drifted": *drifted, "assigned": *assigned, "maintenance": *maint, "faulty": *faulty, "cancellations": *cancels} {
		if v < 0 || v > 1 {
			fmt.Fprintf(stderr, "fwsim: -%s %v is outside 0..1\n", name, v)
			return 2
		}
	}
	if *out != "text" && *out != "json" {
		fmt.Fprintf(stderr, "fwsim: -o %q: want text or json\n", *out)
		return 2
	}
	c := fwsim.DefaultConfig(*hosts, *seed)
	c.Drifted, c.Assigned, c.Maintenance, c.Faulty, c.CeilingPercent, c.Restarts = *drifted, *assigned, *maint, *faulty, *ceiling, *restarts
	c.CatalogChangeAt, c.Cancellations = *catalogAt, *cancels
	ctx := context.Background()
	switch {
	case *store == "memory":
	case strings.HasPrefix(*store, "sqlite:"):
		path := strings.TrimPrefix(*store, "sqlite:")
		if _, err := os.Stat(path); err == nil {
			fmt.Fprintf(stderr, "fwsim: -store %s: the file exists; give a new path\n", *store)
			return 2
		}
		var db *sqlstore.DB
		open := func() (firmware.Store, error) {
			if db != nil {
				_ = db.Close()
			}
			var err error
			if db, err = sqlstore.Open(ctx, sqlstore.SQLite, path); err != nil {
				return nil, err
			}
			return sqlstore.NewFirmwareStore(db), db.Migrate(ctx, sqlstore.FirmwareComponent)
		}
		defer func() {
			if db != nil {
				_ = db.Close()
			}
		}()
		c.Store = func() (firmware.Store, func() (firmware.Store, error), error) {
			s, err := open()
			return s, open, err
		}
	default:
		fmt.Fprintf(stderr, "fwsim: -store %q: want memory or sqlite:PATH\n", *store)
		return 2
	}
	sim, err := fwsim.Build(c)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	rep := sim.Run(ctx)
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
