package fleetsim

import (
	"context"
	"log/slog"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/ironic"
)

// Options tune one simulation run.
type Options struct {
	// Exec runs the steps (default enrolltest.Executor on the fleet's site).
	Exec *enrollment.Executor
	// SiteConfig is the site's configuration (default Gate(SiteConfig(), Exec)).
	SiteConfig *enrollment.SiteConfig
	// PlatformClassOff turns the platform_class_activity_ready gate off.
	PlatformClassOff bool
	// Workers bounds how many hosts run at once (0: every host at once).
	Workers int
	// Wall measures the run's wall time (nil: not measured). Engine time is
	// the fleet's virtual clock; this is the machine's.
	Wall clock.Clock
	// RoundTrip passes every step's input and output through JSON, as a
	// remote orchestrator would.
	RoundTrip bool
	// Log receives the executor's logs when Exec is nil (default: discarded).
	Log *slog.Logger
	// Hosts restricts the pass to these hosts (default: every host).
	Hosts []string
	// OnEvent, when set, sees every event of every host, after the
	// simulator's own accounting. It is called from the hosts' goroutines.
	OnEvent func(flow.Event)

	// wrap and done let Record see each host's runtime.
	wrap func(host string, rt flow.Runtime) flow.Runtime
	done func(host string, rt flow.Runtime)
	// crashes, when set, kills the workers of the step attempts it arms.
	crashes *crashPlan
}

// HostOutcome is how one host's enrollment ended.
type HostOutcome struct {
	Device string
	Result enrollment.Result
	// Failure is set when the enrollment failed.
	Failure *hostforge.Failure
	// Virtual is the host's virtual time from submission to its end: the sum
	// of the durable sleeps its workflow took (steps take no virtual time on
	// zero-latency fakes).
	Virtual time.Duration
	// Steps counts step attempts (a step retried after a wait counts twice).
	Steps int
	// Panic holds a recovered panic's value; a panic is always a bug.
	Panic any
}

// RunStats is one pass over the fleet.
type RunStats struct {
	// Outcomes are in the fleet's host order.
	Outcomes []HostOutcome
	// Calls are the calls this pass made, per system.
	Calls fakes.Calls
	// Wall is the pass's wall time (zero when Options.Wall is nil).
	Wall time.Duration
	// PeakHeap is the largest live-heap sample taken during the pass, in bytes.
	PeakHeap uint64
	// Config is the site configuration the pass ran under.
	Config enrollment.SiteConfig
	// PlatformClass is true when the platform-class phase ran.
	PlatformClass bool
}

// Prepare fills the options' defaults for the fleet.
func (f *Fleet) Prepare(o Options) Options {
	if o.Exec == nil {
		o.Exec = f.Executor(o.Log)
	}
	if o.SiteConfig == nil {
		cfg := Gate(SiteConfig(), o.Exec)
		o.SiteConfig = &cfg
	}
	return o
}

// Executor is enrolltest's executor for the fleet's site, with the BMC
// phase reading the fleet's SimClock: it stamps and measures the times it
// persists (a cold reset requested, an iDRAC job staged) on the same
// virtual time the runtime sleeps its waits on, shared by concurrent hosts.
func (f *Fleet) Executor(log *slog.Logger) *enrollment.Executor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := enrolltest.Executor(f.Site, log)
	// One secret set for the whole fleet, as the real wiring holds one per
	// process: a credential is registered once, not on every attempt.
	e.Secrets = hostforge.NewSecrets()
	if c, ok := e.BMC.(*bmc.Configurator); ok && c != nil {
		c.Clock, c.Secrets = f.Clock, e.Secrets
	}
	// One learned pace per Ironic instance, as the real wiring keeps.
	for _, ph := range e.Ironic {
		if p, ok := ph.(*ironic.Phases); ok && p != nil {
			p.Pace = ironic.NewPace()
		}
	}
	return e
}

// Request is the request a submitter makes for one host of the fleet.
func (f *Fleet) Request(name string, o Options) enrollment.Request {
	class := ""
	if h, ok := f.Site.Host(name); ok {
		class = h.Spec.Class
	}
	return enrollment.NewRequest(name, class, SiteSlug, *o.SiteConfig, !o.PlatformClassOff, enrollment.Params{})
}

// heapSampler keeps the largest live-heap reading.
type heapSampler struct {
	events atomic.Uint64
	mu     sync.Mutex
	peak   uint64
	sample []metrics.Sample
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func newHeapSampler() *heapSampler {
	h := &heapSampler{sample: []metrics.Sample{{Name: heapMetric}}}
	h.read()
	return h
}

func (h *heapSampler) read() {
	h.mu.Lock()
	defer h.mu.Unlock()
	metrics.Read(h.sample)
	if h.sample[0].Value.Kind() == metrics.KindUint64 {
		if v := h.sample[0].Value.Uint64(); v > h.peak {
			h.peak = v
		}
	}
}

// tick samples every 64th event: often enough to see the peak of a pass
// that runs thousands of steps, cheap enough not to shape it.
func (h *heapSampler) tick() {
	if h.events.Add(1)%64 == 0 {
		h.read()
	}
}

// Run enrols every host of the fleet concurrently through flow.Local
// on virtual time (a SimClock over the site's clock: concurrent sleeps
// overlap, as they do on a wall clock), and reports what became of each.
func (f *Fleet) Run(ctx context.Context, o Options) RunStats {
	o = f.Prepare(o)
	heap := newHeapSampler()
	before := f.Site.Calls()
	var start time.Time
	if o.Wall != nil {
		start = o.Wall.Now()
	}
	names := o.Hosts
	if names == nil {
		names = f.Names
	}
	out := make([]HostOutcome, len(names))
	f.Clock.Each(len(names), o.Workers, func(i int) {
		out[i] = f.enrolOne(ctx, names[i], o, f.Clock, heap)
	})
	heap.read()
	st := RunStats{Outcomes: out, Calls: f.Site.Calls().Sub(before), PeakHeap: heap.peak, Config: *o.SiteConfig, PlatformClass: !o.PlatformClassOff}
	if o.Wall != nil {
		st.Wall = o.Wall.Now().Sub(start)
	}
	return st
}

// enrolOne runs one host's workflow; a panic is caught and recorded, so one
// bad host cannot take the simulation down.
func (f *Fleet) enrolOne(ctx context.Context, name string, o Options, clk clock.Clock, heap *heapSampler) (ho HostOutcome) {
	ho.Device = name
	defer func() {
		if p := recover(); p != nil {
			ho.Panic = p
		}
	}()
	rt := &flow.Local{Steps: o.Exec, Log: o.Exec.Log, SubjectKey: "device", Clock: clk, Subject: name, RoundTrip: o.RoundTrip,
		OnEvent: func(e flow.Event) {
			switch e.Kind {
			case "sleep":
				ho.Virtual += e.Took
			case "step":
				ho.Steps++
			}
			if heap != nil {
				heap.tick()
			}
			if o.OnEvent != nil {
				o.OnEvent(e)
			}
		}}
	var run flow.Runtime = rt
	if o.crashes != nil {
		run = crashRuntime{Runtime: rt, plan: o.crashes, host: name}
	}
	if o.wrap != nil {
		run = o.wrap(name, rt)
	}
	res, err := enrollment.Enroll(ctx, run, f.Request(name, o))
	if o.done != nil {
		o.done(name, run)
	}
	ho.Result = res
	if err != nil {
		_, ho.Failure, _ = hostforge.Classify(err)
	}
	return ho
}
