package extensions

import (
	"context"
	"encoding/json"
	"time"
)

// ExecStatus is what became of one delivery.
type ExecStatus string

// Execution statuses.
const (
	StatusRunning   ExecStatus = "running"
	StatusSucceeded ExecStatus = "succeeded"
	StatusFailed    ExecStatus = "failed"
	// StatusSkipped: not run, because an earlier task of the extension
	// failed with failurePolicy fail, or the stage deadline had passed.
	StatusSkipped ExecStatus = "skipped"
)

// Execution is the record of one delivery: MetalSoft's execution info
// (success or error message with timestamps), keyed by delivery ID.
type Execution struct {
	DeliveryID string     `json:"deliveryId"`
	EventID    string     `json:"eventId"`
	Stage      Stage      `json:"stage"`
	Extension  string     `json:"extension"`
	Task       string     `json:"task"`
	TaskType   TaskType   `json:"taskType"`
	Status     ExecStatus `json:"status"`
	// Message is the success message or the error (code and reason),
	// without secrets.
	Message    string    `json:"message,omitempty"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// Outputs are the outputs this run produced, when it produced any.
	Outputs json.RawMessage `json:"outputs,omitempty"`
}

// Validate refuses a record a store must not keep.
func (e Execution) Validate() error {
	switch {
	case e.DeliveryID == "":
		return RecordInvalid.New("execution record without a delivery ID")
	case e.Extension == "" || e.Task == "":
		return RecordInvalid.New("execution record %s without an extension or task", e.DeliveryID)
	case e.StartedAt.IsZero():
		return RecordInvalid.New("execution record %s without a start time", e.DeliveryID)
	}
	switch e.Status {
	case StatusRunning, StatusSucceeded, StatusFailed, StatusSkipped:
	default:
		return RecordInvalid.New("execution record %s has status %q", e.DeliveryID, e.Status)
	}
	if len(e.Outputs) > 0 && !json.Valid(e.Outputs) {
		return RecordInvalid.New("execution record %s: outputs are not JSON", e.DeliveryID)
	}
	return nil
}

// Outputs are an extension's stored outputs: replaced by every run that
// produces outputs, as MetalSoft replaces them.
type Outputs struct {
	Extension string          `json:"extension"`
	Values    json.RawMessage `json:"values"`
	// DeliveryID is the delivery that produced them.
	DeliveryID string    `json:"deliveryId"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// Validate refuses outputs a store must not keep.
func (o Outputs) Validate() error {
	switch {
	case o.Extension == "":
		return RecordInvalid.New("outputs without an extension")
	case o.DeliveryID == "" || o.UpdatedAt.IsZero():
		return RecordInvalid.New("outputs of %s without a delivery ID or time", o.Extension)
	case !json.Valid(o.Values):
		return RecordInvalid.New("outputs of %s are not JSON", o.Extension)
	}
	return nil
}

// Query selects execution records; empty fields match everything.
type Query struct {
	EventID   string
	Extension string
	Stage     Stage
	// Limit caps the number of records (0: no cap).
	Limit int
}

// Store keeps execution records and outputs across restarts. It is
// declared here, by its consumer; extensionsfake.Store and the SQL
// adapter (adapters/sqlstore) implement it, and extensionstest.Run is the
// contract both pass.
type Store interface {
	// PutExecution inserts the record of a delivery, or replaces the
	// record with the same delivery ID. An invalid record is refused with
	// EXTENSION_RECORD_INVALID and nothing is written.
	PutExecution(ctx context.Context, e Execution) error
	// Execution returns the record of a delivery.
	Execution(ctx context.Context, deliveryID string) (Execution, bool, error)
	// Executions returns the matching records, oldest start first (then
	// by delivery ID).
	Executions(ctx context.Context, q Query) ([]Execution, error)
	// PutOutputs replaces an extension's outputs.
	PutOutputs(ctx context.Context, o Outputs) error
	// Outputs returns an extension's outputs.
	Outputs(ctx context.Context, extension string) (Outputs, bool, error)
}
