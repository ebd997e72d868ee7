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
	// StatusRunning: dispatch has taken the delivery up; for an SSH or
	// Ansible task, its effect has not begun.
	StatusRunning ExecStatus = "running"
	// StatusStarted: the effect of an SSH or Ansible task may have begun
	// (recorded by Store.StartDelivery just before the runner is called).
	// A record left started has an unknown outcome: the delivery is never
	// run again, it ends EXTENSION_TASK_INTERRUPTED.
	StatusStarted   ExecStatus = "started"
	StatusSucceeded ExecStatus = "succeeded"
	StatusFailed    ExecStatus = "failed"
	// StatusSkipped: not run. In a record: an earlier task of the
	// extension failed with failurePolicy fail, or the stage deadline had
	// passed (its message starts "not run:"). In a Report, also: the task
	// succeeded in an earlier firing of the same event (its message starts
	// "succeeded earlier:" and names that delivery's ID and time); the
	// earlier delivery's record is left as it is.
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
	// Attempts counts the runs of this delivery: each time dispatch handed
	// it to its runner (a webhook delivered again under its webhook-id, a
	// call a worker lost and made again). 0 for a task not run (skipped),
	// and for records written before attempts were counted.
	Attempts int `json:"attempts,omitempty"`
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
	case e.Attempts < 0:
		return RecordInvalid.New("execution record %s has %d attempts", e.DeliveryID, e.Attempts)
	}
	switch e.Status {
	case StatusRunning, StatusStarted, StatusSucceeded, StatusFailed, StatusSkipped:
	default:
		return RecordInvalid.New("execution record %s has status %q", e.DeliveryID, e.Status)
	}
	if len(e.Outputs) > 0 && !json.Valid(e.Outputs) {
		return RecordInvalid.New("execution record %s: outputs are not JSON", e.DeliveryID)
	}
	return nil
}

// ValidateStart refuses a write-ahead record StartDelivery must not keep.
func (e Execution) ValidateStart() error {
	if err := e.Validate(); err != nil {
		return err
	}
	if e.Status != StatusStarted {
		return RecordInvalid.New("delivery %s: a write-ahead record has status %q, want %q", e.DeliveryID, e.Status, StatusStarted)
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
	// Since keeps the records that started at or after it (zero: all).
	Since time.Time
	// NewestFirst orders the records newest start first (then by
	// delivery ID, descending): a history's order. Limit then keeps the
	// newest.
	NewestFirst bool
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
	// StartDelivery records, before its effect, that a delivery's effect
	// may begin (the write-ahead of an SSH or Ansible task): e, whose
	// status must be started, is written when the delivery has no record
	// or its record is running — atomically, so of two attempts of one
	// delivery at most one starts it. Otherwise nothing is written and
	// the record is returned as it is, with ok false. An invalid record is
	// refused with EXTENSION_RECORD_INVALID.
	StartDelivery(ctx context.Context, e Execution) (prior Execution, ok bool, err error)
	// Execution returns the record of a delivery.
	Execution(ctx context.Context, deliveryID string) (Execution, bool, error)
	// Executions returns the matching records, oldest start first (then
	// by delivery ID), or newest first with Query.NewestFirst.
	Executions(ctx context.Context, q Query) ([]Execution, error)
	// PutOutputs replaces an extension's outputs.
	PutOutputs(ctx context.Context, o Outputs) error
	// Outputs returns an extension's outputs.
	Outputs(ctx context.Context, extension string) (Outputs, bool, error)
}
