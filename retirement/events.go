package retirement

import (
	"context"
	"encoding/json"

	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
)

// The stages a retirement fires, in order (seed 004's names).
const (
	StageDecommissioned = "serverDecommissioned"
	StageDeleteDNS      = "serverDeleteDNS"
)

// Stages are the stages a retirement fires, in order.
var Stages = []string{StageDecommissioned, StageDeleteDNS}

// Announcement is one event a retirement fires: its ID (the run, then the
// stage), its stage and what its payload maps. It is plain data, built by
// the body and carried in the workflow's history.
type Announcement struct {
	ID    string `json:"id"`
	Stage string `json:"stage"`
	Host  Host   `json:"host"`
}

// Host is the retired host as the events describe it.
type Host struct {
	// Device is the NetBox intent read when the retirement started.
	Device intent.Device `json:"device"`
	// Instance and Node are the Ironic instance and node it was ("" when it
	// had none).
	Instance string `json:"instance,omitempty"`
	Node     string `json:"node,omitempty"`
	// Inventory is the node's inspection data, read before the node went
	// (nil when there was none).
	Inventory json.RawMessage `json:"inventory,omitempty"`
	// BMCHostname and BMCAddress are the BMC's DNS name (the BMC hostname
	// enrollment gives it) and its out-of-band address.
	BMCHostname string `json:"bmc_hostname"`
	BMCAddress  string `json:"bmc_address,omitempty"`
	// Zone is the site's DNS zone.
	Zone DNSZone `json:"zone,omitzero"`
}

// Announcer fires one event through extension dispatch on the same
// runtime as the retirement, so the dispatch's steps are part of the one
// resumable run (activities of the same workflow under Temporal). The
// extensions live a layer beside the retirement, so the composition that
// knows both passes it (adapters/wiring.AnnounceRetirement calls
// extensions.Fire). Task failures are deliveries, not errors; the error is
// a *hostforge.Failure when the dispatch itself could not run.
type Announcer func(ctx context.Context, rt flow.Runtime, a Announcement) ([]Delivery, error)

// Delivery is one extension task's delivery of an event.
type Delivery struct {
	Event      string `json:"event"`
	Stage      string `json:"stage"`
	Extension  string `json:"extension"`
	Task       string `json:"task"`
	DeliveryID string `json:"delivery_id"`
	// Status is succeeded, failed or skipped.
	Status  string `json:"status"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Delivery statuses (extension dispatch's).
const (
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
	DeliverySkipped   = "skipped"
)
