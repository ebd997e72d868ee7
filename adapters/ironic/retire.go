package ironic

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/ironic"
)

// What retirement needs of Ironic besides the enrollment calls: a manual
// clean with steps and the deletions (ironic.Decommissioner), and the
// node's history for those who audit a retirement.

var _ ironic.Decommissioner = (*Client)(nil)

// Clean starts a manual clean: PUT /v1/nodes/{node}/states/provision with
// target "clean" and the steps (202).
func (c *Client) Clean(ctx context.Context, ident string, steps []ironic.CleanStep) error {
	if steps == nil {
		steps = []ironic.CleanStep{}
	}
	_, err := c.sc.Put(ctx, c.url("nodes", ident, "states", "provision"), map[string]any{"target": ironic.ActionClean, "clean_steps": steps}, nil, ok(202))
	return mapErr(ctx, c.secrets, err, "manual clean of node "+ident)
}

// DeletePort deletes a port (204).
func (c *Client) DeletePort(ctx context.Context, uuid string) error {
	_, err := c.sc.Delete(ctx, c.url("ports", uuid), ok(204))
	return mapErr(ctx, c.secrets, err, "delete port "+uuid)
}

// DeletePortgroup deletes a portgroup (204).
func (c *Client) DeletePortgroup(ctx context.Context, uuid string) error {
	_, err := c.sc.Delete(ctx, c.url("portgroups", uuid), ok(204))
	return mapErr(ctx, c.secrets, err, "delete portgroup "+uuid)
}

// HistoryEvent is one entry of a node's history (API 1.78+): what the
// conductor recorded about the node. Ironic 2023.1 records errors (a
// failed clean step, a failed deploy, power-state sync faults) and a few
// other events; a step that succeeds leaves no entry.
type HistoryEvent struct {
	UUID string `json:"uuid"`
	// CreatedAt is Ironic's timestamp, as it renders it.
	CreatedAt string `json:"created_at"`
	Severity  string `json:"severity"`
	Event     string `json:"event"`
	EventType string `json:"event_type,omitempty"`
	Conductor string `json:"conductor,omitempty"`
}

// History reads a node's history, oldest first: GET
// /v1/nodes/{node}/history?detail=true. Event texts are scrubbed of the
// secrets the client knows.
func (c *Client) History(ctx context.Context, ident string) ([]HistoryEvent, error) {
	var body struct {
		History []json.RawMessage `json:"history"`
	}
	if _, err := c.sc.Get(ctx, c.url("nodes", ident, "history")+"?detail=true", &body, ok(200)); err != nil {
		return nil, mapErr(ctx, c.secrets, err, "history of node "+ident)
	}
	out := make([]HistoryEvent, 0, len(body.History))
	for _, raw := range body.History {
		var e HistoryEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("ironic: history of node %s: an entry is not an object of strings: %v: %w", ident, err, hostforge.ErrUnavailable)
		}
		e.Event = c.secrets.Scrub(e.Event)
		out = append(out, e)
	}
	return out, nil
}
