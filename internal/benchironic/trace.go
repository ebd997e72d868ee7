package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// TraceEvent is one call as the proxy relayed it (-trace): when it started
// and how long Ironic took, relative to the start of the side's run, so a
// node's timeline shows where each side waits — in a write, in a read, or
// between polls. Ident is the node the path names (a name or a UUID); a
// node creation also carries the UUID and name Ironic answered, to tie the
// two together, and a node read the states it answered, to tell the polls
// that found a transition over from those that did not.
type TraceEvent struct {
	Side  string `json:"side"`
	Round int    `json:"round"`
	// Time is when the call started (for Ironic's log), At the same from
	// the start of the side's run.
	Time   time.Time `json:"time"`
	At     float64   `json:"at_s"`
	Took   float64   `json:"took_s"`
	Method string    `json:"method"`
	Route  string    `json:"route"`
	Ident  string    `json:"ident,omitempty"`
	Status int       `json:"status"`
	UUID   string    `json:"uuid,omitempty"`
	Name   string    `json:"name,omitempty"`
	// The states a node read answered.
	ProvisionState       string `json:"provision_state,omitempty"`
	TargetProvisionState string `json:"target_provision_state,omitempty"`
	PowerState           string `json:"power_state,omitempty"`
	TargetPowerState     string `json:"target_power_state,omitempty"`
}

// tracer writes TraceEvents as JSON lines; a nil tracer writes nothing.
type tracer struct {
	mu    sync.Mutex
	w     *bufio.Writer
	side  string
	round int
	start time.Time
}

func newTracer(w io.Writer) *tracer { return &tracer{w: bufio.NewWriter(w)} }

// begin starts a side's run: later events are timed from now.
func (t *tracer) begin(side string, round int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.side, t.round, t.start = side, round, time.Now()
}

func (t *tracer) record(r *http.Request, resp *http.Response, started time.Time) {
	if t == nil {
		return
	}
	took := time.Since(started)
	e := TraceEvent{Method: r.Method, Route: route(r.URL.Path), Ident: ident(r.URL.Path)}
	if resp != nil {
		e.Status = resp.StatusCode
		switch {
		case r.Method == http.MethodPost && e.Route == "/v1/nodes" && resp.StatusCode == http.StatusCreated,
			r.Method == http.MethodGet && e.Route == "/v1/nodes/{id}" && resp.StatusCode == http.StatusOK:
			n := peekNode(resp)
			e.UUID, e.Name = n.UUID, n.Name
			e.ProvisionState, e.TargetProvisionState = n.ProvisionState, s(n.TargetProvisionState)
			e.PowerState, e.TargetPowerState = s(n.PowerState), s(n.TargetPowerState)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e.Side, e.Round, e.Time = t.side, t.round, started
	e.At, e.Took = started.Sub(t.start).Seconds(), took.Seconds()
	b, _ := json.Marshal(e)
	t.w.Write(append(b, '\n'))
}

func (t *tracer) flush() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w.Flush()
}

// ident is the node a path names: /v1/nodes/{ident}/….
func ident(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) >= 3 && parts[1] == "nodes" && parts[2] != "detail" {
		return parts[2]
	}
	return ""
}

// tracedNode is what the trace reads from a node in an answer.
type tracedNode struct {
	UUID                 string  `json:"uuid"`
	Name                 string  `json:"name"`
	ProvisionState       string  `json:"provision_state"`
	TargetProvisionState *string `json:"target_provision_state"`
	PowerState           *string `json:"power_state"`
	TargetPowerState     *string `json:"target_power_state"`
}

// peekNode reads a node from an answer and leaves the body for the client
// as it was.
func peekNode(resp *http.Response) tracedNode {
	var n tracedNode
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err == nil {
		_ = json.Unmarshal(b, &n)
	}
	return n
}

func s(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
