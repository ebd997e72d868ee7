package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/hostforge/hostforge/extensions"
)

// ComponentExtensions names the extension store's migrations.
const ComponentExtensions = "extensions"

// ExtensionStore keeps extension execution records and outputs: the
// extensions.Store on SQLite or PostgreSQL. Migrate the "extensions"
// component first.
type ExtensionStore struct {
	db *DB
}

// Extensions returns the extension store of the database.
func (db *DB) Extensions() *ExtensionStore { return &ExtensionStore{db: db} }

var _ extensions.Store = (*ExtensionStore)(nil)

// PutExecution inserts or replaces the record of a delivery.
func (s *ExtensionStore) PutExecution(ctx context.Context, e extensions.Execution) error {
	if err := e.Validate(); err != nil {
		return err
	}
	_, err := s.db.Exec(ctx, upsertExecution, executionArgs(e)...)
	return Wrap(err, "recording extension delivery %s", e.DeliveryID)
}

// upsertExecution inserts a delivery's record, or replaces the one under
// its delivery ID, with executionArgs.
const upsertExecution = `INSERT INTO extension_executions
		(` + executionColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (delivery_id) DO UPDATE SET
			event_id = excluded.event_id, stage = excluded.stage, extension = excluded.extension,
			task = excluded.task, task_type = excluded.task_type, status = excluded.status,
			message = excluded.message, started_at = excluded.started_at,
			finished_at = excluded.finished_at, outputs = excluded.outputs, attempts = excluded.attempts`

// executionArgs are the record's values in executionColumns' order.
func executionArgs(e extensions.Execution) []any {
	var outputs sql.NullString
	if e.Outputs != nil {
		outputs = sql.NullString{String: string(e.Outputs), Valid: true}
	}
	return []any{e.DeliveryID, e.EventID, string(e.Stage), e.Extension, e.Task, string(e.TaskType), string(e.Status),
		e.Message, Nanos(e.StartedAt), Nanos(e.FinishedAt), outputs, e.Attempts}
}

// StartDelivery writes the write-ahead record of a delivery when it has
// no record or a running one: one upsert whose update is conditional on
// the stored status, so of two concurrent attempts exactly one changes a
// row (on both engines a conflict whose WHERE is false affects none).
func (s *ExtensionStore) StartDelivery(ctx context.Context, e extensions.Execution) (extensions.Execution, bool, error) {
	if err := e.ValidateStart(); err != nil {
		return extensions.Execution{}, false, err
	}
	// The replacement only of a running record: the same upsert, its
	// update conditional on the stored status.
	res, err := s.db.Exec(ctx, upsertExecution+`
		WHERE extension_executions.status = ?`, append(executionArgs(e), string(extensions.StatusRunning))...)
	if err != nil {
		return extensions.Execution{}, false, Wrap(err, "recording the start of extension delivery %s", e.DeliveryID)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return extensions.Execution{}, false, Wrap(err, "recording the start of extension delivery %s", e.DeliveryID)
	}
	if n > 0 {
		return e, true, nil
	}
	prior, ok, err := s.Execution(ctx, e.DeliveryID)
	if err == nil && !ok {
		err = Wrap(sql.ErrNoRows, "extension delivery %s was neither started nor found", e.DeliveryID)
	}
	return prior, false, err
}

const executionColumns = `delivery_id, event_id, stage, extension, task, task_type, status, message, started_at, finished_at, outputs, attempts`

func scanExecution(sc interface{ Scan(...any) error }) (extensions.Execution, error) {
	var (
		e                 extensions.Execution
		stage, tt, status string
		started, finished int64
		outputs           sql.NullString
	)
	err := sc.Scan(&e.DeliveryID, &e.EventID, &stage, &e.Extension, &e.Task, &tt, &status, &e.Message, &started, &finished, &outputs, &e.Attempts)
	e.Stage, e.TaskType, e.Status = extensions.Stage(stage), extensions.TaskType(tt), extensions.ExecStatus(status)
	e.StartedAt, e.FinishedAt = Time(started), Time(finished)
	if outputs.Valid {
		e.Outputs = json.RawMessage(outputs.String)
	}
	return e, err
}

// Execution returns the record of a delivery.
func (s *ExtensionStore) Execution(ctx context.Context, id string) (extensions.Execution, bool, error) {
	e, err := scanExecution(s.db.QueryRow(ctx, `SELECT `+executionColumns+` FROM extension_executions WHERE delivery_id = ?`, id))
	if err == sql.ErrNoRows {
		return extensions.Execution{}, false, nil
	}
	if err != nil {
		return extensions.Execution{}, false, Wrap(err, "reading extension delivery %s", id)
	}
	return e, true, nil
}

// Executions returns the matching records, oldest start first (newest
// first with Query.NewestFirst).
func (s *ExtensionStore) Executions(ctx context.Context, q extensions.Query) ([]extensions.Execution, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"event_id", q.EventID}, {"extension", q.Extension}, {"stage", string(q.Stage)}} {
		if c.v != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	query := `SELECT ` + executionColumns + ` FROM extension_executions`
	if !q.Since.IsZero() {
		where = append(where, "started_at >= ?")
		args = append(args, Nanos(q.Since))
	}
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	if q.NewestFirst {
		query += ` ORDER BY started_at DESC, delivery_id DESC`
	} else {
		query += ` ORDER BY started_at, delivery_id`
	}
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, Wrap(err, "listing extension deliveries")
	}
	defer rows.Close()
	out := []extensions.Execution{}
	for rows.Next() {
		e, err := scanExecution(rows)
		if err != nil {
			return nil, Wrap(err, "reading extension deliveries")
		}
		out = append(out, e)
	}
	return out, Wrap(rows.Err(), "listing extension deliveries")
}

// PutOutputs replaces an extension's outputs.
func (s *ExtensionStore) PutOutputs(ctx context.Context, o extensions.Outputs) error {
	if err := o.Validate(); err != nil {
		return err
	}
	_, err := s.db.Exec(ctx, `INSERT INTO extension_outputs (extension, outputs, delivery_id, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (extension) DO UPDATE SET outputs = excluded.outputs, delivery_id = excluded.delivery_id, updated_at = excluded.updated_at`,
		o.Extension, string(o.Values), o.DeliveryID, Nanos(o.UpdatedAt))
	return Wrap(err, "storing the outputs of extension %s", o.Extension)
}

// Outputs returns an extension's outputs.
func (s *ExtensionStore) Outputs(ctx context.Context, ext string) (extensions.Outputs, bool, error) {
	o := extensions.Outputs{Extension: ext}
	var values string
	var at int64
	err := s.db.QueryRow(ctx, `SELECT outputs, delivery_id, updated_at FROM extension_outputs WHERE extension = ?`, ext).Scan(&values, &o.DeliveryID, &at)
	if err == sql.ErrNoRows {
		return extensions.Outputs{}, false, nil
	}
	if err != nil {
		return extensions.Outputs{}, false, Wrap(err, "reading the outputs of extension %s", ext)
	}
	o.Values, o.UpdatedAt = json.RawMessage(values), Time(at)
	return o, true, nil
}
