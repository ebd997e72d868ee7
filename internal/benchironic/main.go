// Command benchironic measures how close hostforge's Ironic phases come to
// the limit on a real Ironic: M hosts (default 20) taken from nothing to an
// available fake-hardware node, concurrently, by
//
//   - the limit: a tight loop issuing the same writes and polling every 20 ms;
//   - hostforge: the enrollment workflow (flow.Local, real clock) with
//     only the Ironic phases on, NetBox and the vault from a fake site, on
//     its production ironic.Timing scaled by -timing-scale;
//   - openstacksdk: Debian's python3-openstacksdk issuing the same writes and
//     waiting with its own wait_for_* helpers.
//
// Every side talks to Ironic through one counting reverse proxy on loopback,
// so their API calls, and the bytes of their read answers, are counted
// alike. Nodes are deleted between sides
// (outside the counts). The order of the sides rotates every round.
//
// Two modes. Without delays, fake-hardware ends most transitions while their
// write is still in flight: there is almost nothing to poll for. With
// -delays, the Ironic runs fake-hardware with [fake] delays (3 s per fake
// interface call: verification and power on take about 6 s, cleaning about
// 3 s), standing for real hardware's minutes, and hostforge's waits are
// scaled by 1/10 instead of 1/40; there the tight loop shows what polling
// costs.
//
// Run it with `make bench-ironic` (scripts/bench-ironic starts the Ironic
// with the delays -ironic-conf prints), or against a running Ironic:
//
//	go run ./internal/benchironic -ironic http://127.0.0.1:6385 -nodes 20 -rounds 3
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/ironic"
)

type options struct {
	ironic        string
	nodes, rounds int
	loopPolls     []time.Duration
	timingScale   float64
	// delays are the [fake] delays the Ironic runs with (-delays); nil:
	// none, transitions end while their write is in flight.
	delays     []fakeDelay
	ironicConf bool
	python     string
	sides      []string
	output     string
	detail     bool
	verbose    bool
	// trace is the file every call goes to as a JSON line (-trace).
	trace string
}

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("benchironic", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var sides, loopPolls, fakeDelays string
	var delays bool
	fs.StringVar(&o.ironic, "ironic", os.Getenv("HOSTFORGE_IRONIC_URL"), "Ironic API root (default $HOSTFORGE_IRONIC_URL)")
	fs.IntVar(&o.nodes, "nodes", 20, "nodes per side and round")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds; the report gives the median wall time")
	fs.StringVar(&loopPolls, "loop-polls", "", "poll (and NodeLocked retry) intervals of the loop; the first is the limit, the others show what a slower loop costs (default 20ms,100ms,250ms; with -delays 20ms,250ms,1s)")
	fs.BoolVar(&delays, "delays", false, "realistic transition times: the Ironic runs fake-hardware with [fake] delays ("+defaultFakeDelays+"); scripts/bench-ironic starts it so")
	fs.StringVar(&fakeDelays, "fake-delays", "", "the [fake] delays in seconds, e.g. power=3,bios=2-5 (A-B: triangular random); implies -delays")
	fs.Float64Var(&o.timingScale, "timing-scale", 0, "hostforge runs its production ironic.Timing (StatePoll 10 s, CleanPollMin 15 s, …) times this (default 1/40: StatePoll 250 ms; with -delays 1/10: StatePoll 1 s)")
	fs.BoolVar(&o.ironicConf, "ironic-conf", false, "print the INI text these flags need appended to ironic.conf (empty without delays) and exit")
	fs.StringVar(&o.python, "python", "/usr/bin/python3", "the Python with python3-openstacksdk")
	fs.StringVar(&sides, "sides", strings.Join([]string{SideLoop, SideHostforge, SideSDK}, ","), "sides to run, comma-separated (also "+SidePolicy+": hostforge without a learned Pace)")
	fs.StringVar(&o.output, "o", "text", "output: text or json")
	fs.BoolVar(&o.detail, "detail", false, "also print the calls per route of each side")
	fs.BoolVar(&o.verbose, "v", false, "log hostforge's phases to stderr")
	fs.StringVar(&o.trace, "trace", "", "write every call (side, round, start and duration from the side's start, route, node, status) to this file as JSON lines")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fakeDelays != "" {
		delays = true
	} else if delays {
		fakeDelays = defaultFakeDelays
	}
	if delays {
		d, err := parseFakeDelays(fakeDelays)
		if err != nil {
			return o, fmt.Errorf("-fake-delays: %w", err)
		}
		if len(d) == 0 {
			return o, errors.New("-fake-delays: no delay given")
		}
		o.delays = d
	}
	if o.ironicConf {
		return o, nil
	}
	if o.ironic == "" {
		return o, errors.New("-ironic is required (or HOSTFORGE_IRONIC_URL)")
	}
	switch {
	case o.timingScale < 0:
		return o, fmt.Errorf("-timing-scale %v: want a positive factor", o.timingScale)
	case o.timingScale == 0 && delays:
		o.timingScale = 1.0 / 10
	case o.timingScale == 0:
		o.timingScale = 1.0 / 40
	}
	if loopPolls == "" {
		loopPolls = "20ms,100ms,250ms"
		if delays {
			loopPolls = "20ms,250ms,1s"
		}
	}
	if o.nodes < 1 || o.rounds < 1 {
		return o, errors.New("-nodes and -rounds must be at least 1")
	}
	if o.output != "text" && o.output != "json" {
		return o, fmt.Errorf("-o %q: want text or json", o.output)
	}
	for _, p := range strings.Split(loopPolls, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d <= 0 {
			return o, fmt.Errorf("-loop-polls: %q is not a positive duration", p)
		}
		o.loopPolls = append(o.loopPolls, d)
	}
	for _, s := range strings.Split(sides, ",") {
		switch s = strings.TrimSpace(s); s {
		case SideLoop, SideHostforge, SidePolicy, SideSDK:
			o.sides = append(o.sides, s)
		default:
			return o, fmt.Errorf("-sides: unknown side %q", s)
		}
	}
	return o, nil
}

func main() {
	o, err := parse(os.Args[1:], os.Stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "benchironic:", err)
		}
		os.Exit(2)
	}
	if o.ironicConf {
		fmt.Print(ironicConf(o.delays))
		return
	}
	if err := run(context.Background(), o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "benchironic:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	log := slog.New(slog.DiscardHandler)
	if o.verbose {
		log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	direct, err := adapter.New(ctx, adapter.Config{Endpoint: o.ironic})
	if err != nil {
		return err
	}
	var trace *tracer
	if o.trace != "" {
		f, err := os.Create(o.trace)
		if err != nil {
			return err
		}
		defer f.Close()
		trace = newTracer(f)
		defer trace.flush()
	}
	px, err := startProxy(o.ironic, trace)
	if err != nil {
		return err
	}
	defer px.Close()
	timing := scaledTiming(o.timingScale)
	rep := &Report{Nodes: o.nodes, Rounds: o.rounds, Ironic: o.ironic, FakeDelays: describeDelays(o.delays), TimingScale: o.timingScale}
	for _, s := range o.sides {
		switch s {
		case SideLoop:
			for k, p := range o.loopPolls {
				label := fmt.Sprintf("loop, poll %s", p)
				if k == 0 {
					label = fmt.Sprintf("limit: loop, poll %s", p)
				}
				rep.Sides = append(rep.Sides, SideResult{Side: SideLoop, Label: label, Poll: p})
			}
		case SideHostforge:
			rep.Sides = append(rep.Sides, SideResult{Side: s, Label: fmt.Sprintf("hostforge, polls from %s, paced", timing.StatePoll), Poll: timing.StatePoll})
		case SidePolicy:
			rep.Sides = append(rep.Sides, SideResult{Side: s, Label: fmt.Sprintf("hostforge, polls from %s, no Pace", timing.StatePoll), Poll: timing.StatePoll})
		case SideSDK:
			rep.Sides = append(rep.Sides, SideResult{Side: s, Label: "openstacksdk, wait_for 2s", Poll: 2 * time.Second})
		}
	}
	// One Pace for the run, as a worker keeps one per Ironic for its life:
	// the first round starts it empty.
	pace := ironic.NewPace()
	for round := 0; round < o.rounds; round++ {
		for k := range rep.Sides {
			i := (k + round) % len(rep.Sides)
			side, poll := rep.Sides[i].Side, rep.Sides[i].Poll
			prefix := fmt.Sprintf("bench-%s-r%d", short(side), round)
			site := newSite(prefix, o.nodes)
			nodes, err := benchNodes(ctx, site)
			if err != nil {
				return err
			}
			px.k.take()
			px.trace.begin(rep.Sides[i].Label, round+1)
			var wall time.Duration
			switch side {
			case SideLoop:
				wall, err = runLoop(ctx, px.URL, nodes, poll)
			case SideHostforge:
				wall, err = runHostforge(ctx, px.URL, site, timing, pace, log)
			case SidePolicy:
				wall, err = runHostforge(ctx, px.URL, site, timing, nil, log)
			case SideSDK:
				wall, err = runSDK(ctx, o.python, px.URL, nodes)
			}
			calls := px.k.take()
			if cerr := cleanup(ctx, direct, site.HostNames()); cerr != nil && err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, side, err)
			}
			rep.Sides[i].Runs = append(rep.Sides[i].Runs, Run{Wall: wall, Calls: calls})
			fmt.Fprintf(stderr, "round %d: %-28s %s, %d reads, %d writes, %d conflicts\n", round+1, rep.Sides[i].Label, secs(wall), calls.Reads, calls.Writes, calls.Locked)
		}
	}
	rep.judge()
	if o.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteText(stdout, o.detail)
}

func short(side string) string {
	switch side {
	case SideLoop:
		return "loop"
	case SideHostforge:
		return "hf"
	case SidePolicy:
		return "hfp"
	case SideSDK:
		return "sdk"
	}
	return side
}

// clientTimeout bounds one API call of the Go sides: a saturated Ironic
// answers late rather than never, and the benchmark measures that.
const clientTimeout = 10 * time.Minute
