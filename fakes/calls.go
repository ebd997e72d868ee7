package fakes

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Systems counted by the fakes.
const (
	SysNetBox       = "netbox"
	SysFleetManager = "fleet_manager"
	SysVault        = "vault"
	SysDHCP         = "dhcp"
	SysBMC          = "bmc"
	SysIronic       = "ironic"
)

// Tally is the number of calls to one system.
type Tally struct {
	Reads  int `json:"reads"`
	Writes int `json:"writes"`
	// Ops counts calls per operation name.
	Ops map[string]int `json:"ops,omitempty"`
	// WriteOps counts the writes among them, per operation name.
	WriteOps map[string]int `json:"write_ops,omitempty"`
}

// Calls is a snapshot of call counts per system.
type Calls map[string]Tally

// Writes is the total number of writes across systems.
func (c Calls) Writes() int {
	n := 0
	for _, t := range c {
		n += t.Writes
	}
	return n
}

// Reads is the total number of reads across systems.
func (c Calls) Reads() int {
	n := 0
	for _, t := range c {
		n += t.Reads
	}
	return n
}

// String renders "netbox r=3 w=1, vault r=1 w=0".
func (c Calls) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s r=%d w=%d", k, c[k].Reads, c[k].Writes))
	}
	return strings.Join(parts, ", ")
}

// Sub returns c minus an earlier snapshot, per system.
func (c Calls) Sub(earlier Calls) Calls {
	out := Calls{}
	for k, t := range c {
		e := earlier[k]
		d := Tally{Reads: t.Reads - e.Reads, Writes: t.Writes - e.Writes, Ops: map[string]int{}, WriteOps: map[string]int{}}
		for op, n := range t.Ops {
			if m := n - e.Ops[op]; m != 0 {
				d.Ops[op] = m
			}
		}
		for op, n := range t.WriteOps {
			if m := n - e.WriteOps[op]; m != 0 {
				d.WriteOps[op] = m
			}
		}
		out[k] = d
	}
	return out
}

// counter counts calls; it is shared by every fake of a Site. Each
// (system, op, write) has its own atomic count, found under a read lock,
// so concurrent calls do not queue on one lock to be counted.
type counter struct {
	mu sync.RWMutex
	m  map[callKey]*atomic.Int64
}

type callKey struct {
	system, op string
	write      bool
}

func (c *counter) add(system, op string, write bool) {
	k := callKey{system, op, write}
	c.mu.RLock()
	n := c.m[k]
	c.mu.RUnlock()
	if n == nil {
		c.mu.Lock()
		if c.m == nil {
			c.m = map[callKey]*atomic.Int64{}
		}
		if n = c.m[k]; n == nil {
			n = new(atomic.Int64)
			c.m[k] = n
		}
		c.mu.Unlock()
	}
	n.Add(1)
}

func (c *counter) snapshot() Calls {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := Calls{}
	for k, n := range c.m {
		t, ok := out[k.system]
		if !ok {
			t = Tally{Ops: map[string]int{}, WriteOps: map[string]int{}}
		}
		v := int(n.Load())
		if k.write {
			t.Writes += v
			t.WriteOps[k.op] += v
		} else {
			t.Reads += v
		}
		t.Ops[k.op] += v
		out[k.system] = t
	}
	return out
}
