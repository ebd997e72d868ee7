package benchtemporal

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/ironic"
)

// Result is one measured run.
type Result struct {
	Mode    string `json:"mode"` // "temporal" or "local"
	Hosts   int    `json:"hosts"`
	Workers int    `json:"workers,omitempty"`
	// Wall is from the first submission to the last close.
	Wall time.Duration `json:"wall"`
	// Available counts the hosts that reached available; Failed the others
	// by code.
	Available int            `json:"available"`
	Failed    map[string]int `json:"failed,omitempty"`
	// Events, Activities and Timers are per enrollment history (p50, max);
	// MaxRun is the longest single run's history.
	EventsP50     int `json:"events_p50,omitempty"`
	EventsMax     int `json:"events_max,omitempty"`
	ActivitiesP50 int `json:"activities_p50,omitempty"`
	ActivitiesMax int `json:"activities_max,omitempty"`
	TimersP50     int `json:"timers_p50,omitempty"`
	// BytesP50 is an enrollment history's encoded size, p50.
	BytesP50  int `json:"bytes_p50,omitempty"`
	MaxRun    int `json:"max_run,omitempty"`
	Continued int `json:"continued,omitempty"`
	// CPU is this process's user and system time during the run (the
	// workers, the fakes behind their activities and the submitter).
	CPU time.Duration `json:"cpu"`
	// PeakRSS is the process's resident high-water mark, bytes.
	PeakRSS int64 `json:"peak_rss"`
	// ServerCPU is the Temporal server's CPU during the run (the command
	// fills it in from outside).
	ServerCPU time.Duration `json:"server_cpu,omitempty"`
}

// HostsPerMinute is the throughput.
func (r Result) HostsPerMinute() float64 { return float64(r.Hosts) / r.Wall.Minutes() }

// RunTemporal enrols n hosts through the Temporal server at addr with
// `workers` workers in this process (each its own client connection and
// pollers, sharing the fleet), then reads every enrollment's history.
func RunTemporal(ctx context.Context, addr string, n, workers int, seed uint64) (Result, error) {
	res := Result{Mode: "temporal", Hosts: n, Workers: workers, Failed: map[string]int{}}
	f, exec, cfg, err := World(n, seed)
	if err != nil {
		return res, err
	}
	stop := f.Site.OnWallClock()
	defer stop()
	queue := fmt.Sprintf("bench-%d-%d-%d", n, workers, time.Now().UnixNano())
	var clients []client.Client
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	dial := func() (client.Client, error) {
		c, err := temporal.Dial(ctx, addr, "default", nil)
		if err == nil {
			clients = append(clients, c)
		}
		return c, err
	}
	for range workers {
		c, err := dial()
		if err != nil {
			return res, err
		}
		w := sdkworker.New(c, queue, sdkworker.Options{})
		if err := temporal.RegisterWorkflows(w, temporal.Activities{}, temporal.ActivityOptions{},
			temporal.Workflow{Name: "enrollment", Steps: exec, Definitions: []temporal.Definition{temporal.Enrollment}}); err != nil {
			return res, err
		}
		if err := w.Start(); err != nil {
			return res, err
		}
		defer w.Stop()
	}
	c, err := dial()
	if err != nil {
		return res, err
	}
	sub := &temporal.Submitter{Client: c, TaskQueue: queue, NetBox: f.Site.NetBox}

	before := cpu()
	start := time.Now()
	runs := make([]temporal.Run, len(f.Names))
	errs := make([]error, len(f.Names))
	outs := make([]enrollment.Result, len(f.Names))
	fails := make([]*hostforge.Failure, len(f.Names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i, name := range f.Names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			runs[i], errs[i] = sub.Submit(ctx, temporal.Submission{Device: name, Site: Site, Config: cfg, PlatformClassReady: true})
			<-sem
			if errs[i] == nil {
				outs[i], fails[i] = sub.Wait(ctx, runs[i])
			}
		}()
	}
	wg.Wait()
	res.Wall = time.Since(start)
	res.CPU = cpu() - before
	res.PeakRSS = peakRSS()
	for i := range f.Names {
		switch {
		case errs[i] != nil:
			res.Failed[hostforge.CodeOf(errs[i])]++
		case fails[i] != nil:
			res.Failed[fails[i].Code]++
		case outs[i].Enrolled && outs[i].ProvisionState == ironic.StateAvailable:
			res.Available++
		default:
			res.Failed["not available: "+outs[i].ProvisionState]++
		}
	}
	var events, acts, timers, sizes []int
	for i := range f.Names {
		if errs[i] != nil {
			continue
		}
		h, err := history(ctx, c, runs[i].WorkflowID, runs[i].RunID)
		if err != nil {
			return res, err
		}
		events, acts, timers, sizes = append(events, h.events), append(acts, h.activities), append(timers, h.timers), append(sizes, h.bytes)
		res.MaxRun = max(res.MaxRun, h.longestRun)
		res.Continued += h.runs - 1
	}
	res.EventsP50, res.EventsMax = pct(events)
	res.ActivitiesP50, res.ActivitiesMax = pct(acts)
	res.TimersP50, _ = pct(timers)
	res.BytesP50, _ = pct(sizes)
	return res, nil
}

// chainHistory is an enrollment's history over its runs.
type chainHistory struct {
	events, activities, timers, runs, longestRun, bytes int
}

// history counts the events of a workflow's runs, following its
// continue-as-new chain.
func history(ctx context.Context, c client.Client, id, run string) (chainHistory, error) {
	var h chainHistory
	for run != "" {
		h.runs++
		it := c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		n, next := 0, ""
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return h, err
			}
			n++
			h.bytes += proto.Size(ev)
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				h.activities++
			case enumspb.EVENT_TYPE_TIMER_STARTED:
				h.timers++
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				next = ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
			}
		}
		h.events += n
		h.longestRun = max(h.longestRun, n)
		run = next
	}
	return h, nil
}

// RunLocal enrols the same n hosts through flow.Local, one goroutine per
// host, sleeping on the wall clock: the limit the engine is held to.
func RunLocal(ctx context.Context, n int, seed uint64) (Result, error) {
	res := Result{Mode: "local", Hosts: n, Failed: map[string]int{}}
	f, exec, cfg, err := World(n, seed)
	if err != nil {
		return res, err
	}
	stop := f.Site.OnWallClock()
	defer stop()
	before := cpu()
	start := time.Now()
	outs := make([]enrollment.Result, len(f.Names))
	errs := make([]error, len(f.Names))
	var wg sync.WaitGroup
	for i, name := range f.Names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt := exec.Local(clock.Real{})
			rt.Subject = name
			outs[i], errs[i] = enrollment.Enroll(ctx, rt, Request(f, name, cfg))
		}()
	}
	wg.Wait()
	res.Wall = time.Since(start)
	res.CPU = cpu() - before
	res.PeakRSS = peakRSS()
	for i := range f.Names {
		switch {
		case errs[i] != nil:
			res.Failed[hostforge.CodeOf(errs[i])]++
		case outs[i].Enrolled && outs[i].ProvisionState == ironic.StateAvailable:
			res.Available++
		default:
			res.Failed["not available: "+outs[i].ProvisionState]++
		}
	}
	return res, nil
}

// pct is the median and the maximum.
func pct(xs []int) (p50, mx int) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[len(s)/2], s[len(s)-1]
}

// cpu is this process's user and system time.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's resident high-water mark (VmHWM), bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// ProcessCPU is another process's user and system time (/proc/PID/stat).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	// The command name may hold spaces: fields count from after its ')'.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticks, nil
}
