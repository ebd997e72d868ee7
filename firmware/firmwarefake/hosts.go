package firmwarefake

import (
	"context"
	"sort"
	"sync"

	"github.com/hostforge/hostforge/firmware"
)

// Hosts is a fake set of managed hosts. The update health report is a
// flag on the host; setting it counts, so tests can see it was set once.
type Hosts struct {
	mu      sync.Mutex
	m       map[string]firmware.Host
	sorted  []string
	reports map[string]int // machine → times the report was set
	fail    func(op, machine string) error
}

var _ firmware.Hosts = (*Hosts)(nil)

// NewHosts returns the hosts.
func NewHosts(hosts ...firmware.Host) *Hosts {
	h := &Hosts{m: map[string]firmware.Host{}, reports: map[string]int{}}
	for _, x := range hosts {
		h.Put(x)
	}
	return h
}

// Put adds or replaces a host.
func (h *Hosts) Put(x firmware.Host) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.m[x.MachineID]; !ok {
		h.sorted = nil
	}
	h.m[x.MachineID] = x
}

// Change edits a host in place (a tenant takes it, maintenance ends).
func (h *Hosts) Change(machine string, fn func(*firmware.Host)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	x, ok := h.m[machine]
	if ok {
		fn(&x)
		h.m[machine] = x
	}
}

// FailWith makes every call run fn first and return its error when non-nil.
func (h *Hosts) FailWith(fn func(op, machine string) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fail = fn
}

func (h *Hosts) check(op, machine string) error {
	if h.fail != nil {
		return h.fail(op, machine)
	}
	return nil
}

// List returns every host, sorted by machine.
func (h *Hosts) List(context.Context) ([]firmware.Host, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("list", ""); err != nil {
		return nil, err
	}
	if h.sorted == nil {
		h.sorted = make([]string, 0, len(h.m))
		for k := range h.m {
			h.sorted = append(h.sorted, k)
		}
		sort.Strings(h.sorted)
	}
	out := make([]firmware.Host, len(h.sorted))
	for i, k := range h.sorted {
		out[i] = h.m[k]
	}
	return out, nil
}

// Get returns one host.
func (h *Hosts) Get(_ context.Context, machine string) (firmware.Host, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("get", machine); err != nil {
		return firmware.Host{}, false, err
	}
	x, ok := h.m[machine]
	return x, ok, nil
}

// SetUpdateReport sets the host's update health report.
func (h *Hosts) SetUpdateReport(_ context.Context, machine, _ string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("set_report", machine); err != nil {
		return err
	}
	x, ok := h.m[machine]
	if !ok {
		return firmware.RequestRefused.New("machine %s is not a managed host", machine)
	}
	if !x.UpdateReport {
		h.reports[machine]++
	}
	x.UpdateReport = true
	h.m[machine] = x
	return nil
}

// ClearUpdateReport removes it.
func (h *Hosts) ClearUpdateReport(_ context.Context, machine string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.check("clear_report", machine); err != nil {
		return err
	}
	if x, ok := h.m[machine]; ok {
		x.UpdateReport = false
		h.m[machine] = x
	}
	return nil
}

// ReportsSet says how many times the machine's report was turned on.
func (h *Hosts) ReportsSet(machine string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reports[machine]
}
