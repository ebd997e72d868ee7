package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/hostforge/hostforge/firmware"
)

// FirmwareComponent names the firmware store's migrations.
const FirmwareComponent = "firmware"

// FirmwareStore is firmware.Store on SQLite or PostgreSQL. Migrate the
// database with db.Migrate(ctx, FirmwareComponent) (or every component)
// first.
type FirmwareStore struct {
	db *DB
}

var _ firmware.Store = (*FirmwareStore)(nil)

// NewFirmwareStore returns the firmware store of db.
func NewFirmwareStore(db *DB) *FirmwareStore { return &FirmwareStore{db: db} }

func (s *FirmwareStore) inTx(ctx context.Context, op string, fn func(tx *Tx) error) error {
	return Wrap(s.db.InTx(ctx, fn), "firmware store: %s", op)
}

// CreateRequest stores r unless the machine has a request.
func (s *FirmwareStore) CreateRequest(ctx context.Context, r firmware.Request) (bool, error) {
	res, err := s.db.Exec(ctx, `INSERT INTO firmware_requests (machine_id, initiator, message, created_at, started_at, approved_at, manual_done_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (machine_id) DO NOTHING`,
		r.MachineID, r.Initiator, r.Message, Nanos(r.CreatedAt), Nanos(r.StartedAt), Nanos(r.ApprovedAt), Nanos(r.ManualUpgradeCompletedAt))
	if err != nil {
		return false, Wrap(err, "firmware store: creating the request of %s", r.MachineID)
	}
	n, err := res.RowsAffected()
	return n == 1, Wrap(err, "firmware store: creating the request of %s", r.MachineID)
}

// CreateRequests stores each request whose machine has none, in one
// transaction.
func (s *FirmwareStore) CreateRequests(ctx context.Context, rs []firmware.Request) ([]string, error) {
	var created []string
	err := s.inTx(ctx, "creating requests", func(tx *Tx) error {
		created = created[:0]
		for _, r := range rs {
			res, err := tx.Exec(ctx, `INSERT INTO firmware_requests (machine_id, initiator, message, created_at, started_at, approved_at, manual_done_at)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (machine_id) DO NOTHING`,
				r.MachineID, r.Initiator, r.Message, Nanos(r.CreatedAt), Nanos(r.StartedAt), Nanos(r.ApprovedAt), Nanos(r.ManualUpgradeCompletedAt))
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				created = append(created, r.MachineID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return created, nil
}

const requestColumns = `machine_id, initiator, message, created_at, started_at, approved_at, manual_done_at`

type scanner interface{ Scan(...any) error }

func scanRequest(row scanner) (firmware.Request, error) {
	var r firmware.Request
	var created, started, approved, manual int64
	err := row.Scan(&r.MachineID, &r.Initiator, &r.Message, &created, &started, &approved, &manual)
	r.CreatedAt, r.StartedAt, r.ApprovedAt, r.ManualUpgradeCompletedAt = Time(created), Time(started), Time(approved), Time(manual)
	return r, err
}

// Request returns the machine's request.
func (s *FirmwareStore) Request(ctx context.Context, machine string) (firmware.Request, bool, error) {
	r, err := scanRequest(s.db.QueryRow(ctx, `SELECT `+requestColumns+` FROM firmware_requests WHERE machine_id = ?`, machine))
	if errors.Is(err, sql.ErrNoRows) {
		return firmware.Request{}, false, nil
	}
	if err != nil {
		return firmware.Request{}, false, Wrap(err, "firmware store: reading the request of %s", machine)
	}
	return r, true, nil
}

// Requests lists every request by machine.
func (s *FirmwareStore) Requests(ctx context.Context) ([]firmware.Request, error) {
	rows, err := s.db.Query(ctx, `SELECT `+requestColumns+` FROM firmware_requests ORDER BY machine_id`)
	if err != nil {
		return nil, Wrap(err, "firmware store: listing requests")
	}
	defer rows.Close()
	var out []firmware.Request
	for rows.Next() {
		r, err := scanRequest(rows)
		if err != nil {
			return nil, Wrap(err, "firmware store: listing requests")
		}
		out = append(out, r)
	}
	return out, Wrap(rows.Err(), "firmware store: listing requests")
}

// PatchRequest sets the patch's times where they are unset.
func (s *FirmwareStore) PatchRequest(ctx context.Context, machine string, p firmware.RequestPatch) (firmware.Request, error) {
	var out firmware.Request
	err := s.inTx(ctx, "patching the request of "+machine, func(tx *Tx) error {
		res, err := tx.Exec(ctx, `UPDATE firmware_requests SET
			started_at = CASE WHEN started_at = 0 THEN ? ELSE started_at END,
			approved_at = CASE WHEN approved_at = 0 THEN ? ELSE approved_at END,
			manual_done_at = CASE WHEN manual_done_at = 0 THEN ? ELSE manual_done_at END
			WHERE machine_id = ?`, Nanos(p.StartedAt), Nanos(p.ApprovedAt), Nanos(p.ManualUpgradeCompletedAt), machine)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return firmware.RequestRefused.New("machine %s has no reprovisioning request", machine)
		}
		out, err = scanRequest(tx.QueryRow(ctx, `SELECT `+requestColumns+` FROM firmware_requests WHERE machine_id = ?`, machine))
		return err
	})
	return out, err
}

// DeleteRequest removes the machine's request.
func (s *FirmwareStore) DeleteRequest(ctx context.Context, machine string, unstartedOnly bool) (bool, error) {
	deleted := false
	err := s.inTx(ctx, "clearing the request of "+machine, func(tx *Tx) error {
		deleted = false
		var started int64
		switch err := tx.QueryRow(ctx, `SELECT started_at FROM firmware_requests WHERE machine_id = ?`, machine).Scan(&started); {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return err
		case unstartedOnly && started != 0:
			return firmware.RequestRefused.New("the update of machine %s started at %s; its request can no longer be cleared", machine, Time(started).Format(time.RFC3339))
		}
		if _, err := tx.Exec(ctx, `DELETE FROM firmware_requests WHERE machine_id = ?`, machine); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	return deleted, err
}

// Complete keeps h (with the machine's results) in the history and
// removes the machine's request, update record, results, pushes and agent
// task, in one transaction.
func (s *FirmwareStore) Complete(ctx context.Context, machine string, h *firmware.UpdateHistory) error {
	return s.inTx(ctx, "completing the update of "+machine, func(tx *Tx) error {
		if h != nil {
			kept := *h
			kept.Results = nil
			rows, err := tx.Query(ctx, `SELECT doc FROM firmware_results WHERE machine_id = ?`, machine)
			if err != nil {
				return err
			}
			for rows.Next() {
				var doc []byte
				var r firmware.Result
				if err := rows.Scan(&doc); err != nil {
					rows.Close()
					return err
				}
				if err := json.Unmarshal(doc, &r); err != nil {
					rows.Close()
					return err
				}
				kept.Results = append(kept.Results, r)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			sort.Slice(kept.Results, func(i, j int) bool {
				a, b := kept.Results[i], kept.Results[j]
				if !a.At.Equal(b.At) {
					return a.At.Before(b.At)
				}
				return a.ID < b.ID
			})
			doc, err := json.Marshal(kept)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO firmware_history (machine_id, generation, finished_at, doc) VALUES (?, ?, ?, ?)
				ON CONFLICT (machine_id, generation) DO UPDATE SET finished_at = excluded.finished_at, doc = excluded.doc`,
				machine, kept.Generation, Nanos(kept.FinishedAt), string(doc)); err != nil {
				return err
			}
		}
		for _, q := range []string{
			`DELETE FROM firmware_requests WHERE machine_id = ?`,
			`DELETE FROM firmware_updates WHERE machine_id = ?`,
			`DELETE FROM firmware_results WHERE machine_id = ?`,
			`DELETE FROM firmware_pushes WHERE machine_id = ?`,
			`DELETE FROM firmware_scout_tasks WHERE machine_id = ?`,
		} {
			if _, err := tx.Exec(ctx, q, machine); err != nil {
				return err
			}
		}
		return nil
	})
}

func decodeUpdate(rev int64, doc string) (firmware.HostUpdate, error) {
	var u firmware.HostUpdate
	if err := json.Unmarshal([]byte(doc), &u); err != nil {
		return u, err
	}
	u.Revision = rev
	return u, nil
}

// Update returns the machine's update record.
func (s *FirmwareStore) Update(ctx context.Context, machine string) (firmware.HostUpdate, bool, error) {
	var rev int64
	var doc string
	err := s.db.QueryRow(ctx, `SELECT revision, doc FROM firmware_updates WHERE machine_id = ?`, machine).Scan(&rev, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return firmware.HostUpdate{}, false, nil
	}
	if err != nil {
		return firmware.HostUpdate{}, false, Wrap(err, "firmware store: reading the update of %s", machine)
	}
	u, err := decodeUpdate(rev, doc)
	if err != nil {
		return firmware.HostUpdate{}, false, Wrap(err, "firmware store: decoding the update of %s", machine)
	}
	return u, true, nil
}

// Updates lists every update record by machine.
func (s *FirmwareStore) Updates(ctx context.Context) ([]firmware.HostUpdate, error) {
	rows, err := s.db.Query(ctx, `SELECT revision, doc FROM firmware_updates ORDER BY machine_id`)
	if err != nil {
		return nil, Wrap(err, "firmware store: listing updates")
	}
	defer rows.Close()
	var out []firmware.HostUpdate
	for rows.Next() {
		var rev int64
		var doc string
		if err := rows.Scan(&rev, &doc); err != nil {
			return nil, Wrap(err, "firmware store: listing updates")
		}
		u, err := decodeUpdate(rev, doc)
		if err != nil {
			return nil, Wrap(err, "firmware store: decoding an update")
		}
		out = append(out, u)
	}
	return out, Wrap(rows.Err(), "firmware store: listing updates")
}

// PutUpdate writes u by compare-and-set on its revision.
func (s *FirmwareStore) PutUpdate(ctx context.Context, u firmware.HostUpdate) (firmware.HostUpdate, error) {
	prev := u.Revision
	u.Revision = prev + 1
	doc, err := json.Marshal(u)
	if err != nil {
		return firmware.HostUpdate{}, Wrap(err, "firmware store: encoding the update of %s", u.MachineID)
	}
	var res sql.Result
	if prev == 0 {
		res, err = s.db.Exec(ctx, `INSERT INTO firmware_updates (machine_id, revision, substate, doc) VALUES (?, ?, ?, ?) ON CONFLICT (machine_id) DO NOTHING`,
			u.MachineID, u.Revision, string(u.Substate), string(doc))
	} else {
		res, err = s.db.Exec(ctx, `UPDATE firmware_updates SET revision = ?, substate = ?, doc = ? WHERE machine_id = ? AND revision = ?`,
			u.Revision, string(u.Substate), string(doc), u.MachineID, prev)
	}
	if err != nil {
		return firmware.HostUpdate{}, Wrap(err, "firmware store: writing the update of %s", u.MachineID)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return firmware.HostUpdate{}, Wrap(err, "firmware store: writing the update of %s", u.MachineID)
	}
	if n == 0 {
		return firmware.HostUpdate{}, firmware.StateConflict.New("update record of %s: revision %d is stale", u.MachineID, prev)
	}
	return decodeUpdate(u.Revision, string(doc))
}

// SetAutoUpdate sets or clears the machine's override.
func (s *FirmwareStore) SetAutoUpdate(ctx context.Context, machine string, enabled *bool) error {
	var err error
	if enabled == nil {
		_, err = s.db.Exec(ctx, `DELETE FROM firmware_autoupdate WHERE machine_id = ?`, machine)
	} else {
		v := 0
		if *enabled {
			v = 1
		}
		_, err = s.db.Exec(ctx, `INSERT INTO firmware_autoupdate (machine_id, enabled) VALUES (?, ?)
			ON CONFLICT (machine_id) DO UPDATE SET enabled = excluded.enabled`, machine, v)
	}
	return Wrap(err, "firmware store: setting the autoupdate override of %s", machine)
}

// AutoUpdates returns every override.
func (s *FirmwareStore) AutoUpdates(ctx context.Context) (map[string]bool, error) {
	rows, err := s.db.Query(ctx, `SELECT machine_id, enabled FROM firmware_autoupdate`)
	if err != nil {
		return nil, Wrap(err, "firmware store: listing autoupdate overrides")
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var m string
		var v int64
		if err := rows.Scan(&m, &v); err != nil {
			return nil, Wrap(err, "firmware store: listing autoupdate overrides")
		}
		out[m] = v != 0
	}
	return out, Wrap(rows.Err(), "firmware store: listing autoupdate overrides")
}

// SetWindow sets the machine's window.
func (s *FirmwareStore) SetWindow(ctx context.Context, w firmware.Window) error {
	_, err := s.db.Exec(ctx, `INSERT INTO firmware_windows (machine_id, start_at, end_at) VALUES (?, ?, ?)
		ON CONFLICT (machine_id) DO UPDATE SET start_at = excluded.start_at, end_at = excluded.end_at`,
		w.MachineID, Nanos(w.Start), Nanos(w.End))
	return Wrap(err, "firmware store: setting the window of %s", w.MachineID)
}

// DeleteWindow removes the machine's window.
func (s *FirmwareStore) DeleteWindow(ctx context.Context, machine string) (bool, error) {
	res, err := s.db.Exec(ctx, `DELETE FROM firmware_windows WHERE machine_id = ?`, machine)
	if err != nil {
		return false, Wrap(err, "firmware store: cancelling the window of %s", machine)
	}
	n, err := res.RowsAffected()
	return n > 0, Wrap(err, "firmware store: cancelling the window of %s", machine)
}

// Windows returns every window.
func (s *FirmwareStore) Windows(ctx context.Context) (map[string]firmware.Window, error) {
	rows, err := s.db.Query(ctx, `SELECT machine_id, start_at, end_at FROM firmware_windows`)
	if err != nil {
		return nil, Wrap(err, "firmware store: listing windows")
	}
	defer rows.Close()
	out := map[string]firmware.Window{}
	for rows.Next() {
		var w firmware.Window
		var a, b int64
		if err := rows.Scan(&w.MachineID, &a, &b); err != nil {
			return nil, Wrap(err, "firmware store: listing windows")
		}
		w.Start, w.End = Time(a), Time(b)
		out[w.MachineID] = w
	}
	return out, Wrap(rows.Err(), "firmware store: listing windows")
}

// PutObserved replaces the machine's observation.
func (s *FirmwareStore) PutObserved(ctx context.Context, o firmware.Observed) error {
	doc := encodeObserved(o)
	_, err := s.db.Exec(ctx, `INSERT INTO firmware_observed (machine_id, observed_at, doc) VALUES (?, ?, ?)
		ON CONFLICT (machine_id) DO UPDATE SET observed_at = excluded.observed_at, doc = excluded.doc`,
		o.MachineID, Nanos(o.At), doc)
	return Wrap(err, "firmware store: writing the observation of %s", o.MachineID)
}

// Observed returns the machine's observation.
func (s *FirmwareStore) Observed(ctx context.Context, machine string) (firmware.Observed, bool, error) {
	var doc string
	var at int64
	err := s.db.QueryRow(ctx, `SELECT observed_at, doc FROM firmware_observed WHERE machine_id = ?`, machine).Scan(&at, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return firmware.Observed{}, false, nil
	}
	if err != nil {
		return firmware.Observed{}, false, Wrap(err, "firmware store: reading the observation of %s", machine)
	}
	o, err := decodeObserved(machine, doc)
	if err != nil {
		return firmware.Observed{}, false, Wrap(err, "firmware store: decoding the observation of %s", machine)
	}
	o.At = Time(at)
	return o, true, nil
}

// AllObserved lists every observation by machine.
func (s *FirmwareStore) AllObserved(ctx context.Context) ([]firmware.Observed, error) {
	rows, err := s.db.Query(ctx, `SELECT machine_id, observed_at, doc FROM firmware_observed ORDER BY machine_id`)
	if err != nil {
		return nil, Wrap(err, "firmware store: listing observations")
	}
	defer rows.Close()
	var out []firmware.Observed
	var machine, doc string
	var at int64
	for rows.Next() {
		if err := rows.Scan(&machine, &at, &doc); err != nil {
			return nil, Wrap(err, "firmware store: listing observations")
		}
		o, err := decodeObserved(machine, doc)
		if err != nil {
			return nil, Wrap(err, "firmware store: decoding the observation of %s", machine)
		}
		o.At = Time(at)
		out = append(out, o)
	}
	return out, Wrap(rows.Err(), "firmware store: listing observations")
}

func overrideKey(vendor, model string) (string, string) {
	return firmware.Family(vendor), strings.ToLower(strings.TrimSpace(model))
}

// PutOverride upserts an override.
func (s *FirmwareStore) PutOverride(ctx context.Context, o firmware.Override) error {
	doc, err := json.Marshal(o)
	if err != nil {
		return Wrap(err, "firmware store: encoding an override")
	}
	fam, model := overrideKey(o.Vendor, o.Model)
	_, err = s.db.Exec(ctx, `INSERT INTO firmware_overrides (family, model_key, component, version, updated_at, doc) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (family, model_key, component, version) DO UPDATE SET updated_at = excluded.updated_at, doc = excluded.doc`,
		fam, model, string(o.Component), o.Entry.Version, Nanos(o.UpdatedAt), string(doc))
	return Wrap(err, "firmware store: writing an override")
}

// SwapOverride writes next (nil: deletes) if the stored override of its
// key is old (nil: none), by one conditional statement.
func (s *FirmwareStore) SwapOverride(ctx context.Context, old, next *firmware.Override) error {
	var ref firmware.Override
	switch {
	case old == nil && next == nil:
		return firmware.RequestRefused.New("an override swap needs the old override or the new one")
	case next != nil:
		ref = *next
		if old != nil && !firmware.SameOverrideKey(*old, *next) {
			return firmware.RequestRefused.New("an override swap changes one override: %s / %s %s %s is not %s / %s %s %s",
				old.Vendor, old.Model, old.Component, old.Entry.Version, next.Vendor, next.Model, next.Component, next.Entry.Version)
		}
	default:
		ref = *old
	}
	fam, model := overrideKey(ref.Vendor, ref.Model)
	var res sql.Result
	var err error
	switch {
	case next == nil:
		res, err = s.db.Exec(ctx, `DELETE FROM firmware_overrides WHERE family = ? AND model_key = ? AND component = ? AND version = ? AND updated_at = ?`,
			fam, model, string(ref.Component), ref.Entry.Version, Nanos(old.UpdatedAt))
	default:
		doc, merr := json.Marshal(next)
		if merr != nil {
			return Wrap(merr, "firmware store: encoding an override")
		}
		if old == nil {
			res, err = s.db.Exec(ctx, `INSERT INTO firmware_overrides (family, model_key, component, version, updated_at, doc) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (family, model_key, component, version) DO NOTHING`,
				fam, model, string(ref.Component), ref.Entry.Version, Nanos(next.UpdatedAt), string(doc))
		} else {
			res, err = s.db.Exec(ctx, `UPDATE firmware_overrides SET updated_at = ?, doc = ?
				WHERE family = ? AND model_key = ? AND component = ? AND version = ? AND updated_at = ?`,
				Nanos(next.UpdatedAt), string(doc), fam, model, string(ref.Component), ref.Entry.Version, Nanos(old.UpdatedAt))
		}
	}
	if err != nil {
		return Wrap(err, "firmware store: swapping an override")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Wrap(err, "firmware store: swapping an override")
	}
	if n == 0 {
		return firmware.StateConflict.New("override %s / %s %s %s changed since it was read", ref.Vendor, ref.Model, ref.Component, ref.Entry.Version)
	}
	return nil
}

// DeleteOverride removes an override.
func (s *FirmwareStore) DeleteOverride(ctx context.Context, vendor, model string, c firmware.ComponentType, version string) (bool, error) {
	fam, m := overrideKey(vendor, model)
	res, err := s.db.Exec(ctx, `DELETE FROM firmware_overrides WHERE family = ? AND model_key = ? AND component = ? AND version = ?`, fam, m, string(c), version)
	if err != nil {
		return false, Wrap(err, "firmware store: deleting an override")
	}
	n, err := res.RowsAffected()
	return n > 0, Wrap(err, "firmware store: deleting an override")
}

// Overrides lists overrides, oldest first.
func (s *FirmwareStore) Overrides(ctx context.Context) ([]firmware.Override, error) {
	rows, err := s.db.Query(ctx, `SELECT doc FROM firmware_overrides ORDER BY updated_at, family, model_key, component, version`)
	if err != nil {
		return nil, Wrap(err, "firmware store: listing overrides")
	}
	defer rows.Close()
	var out []firmware.Override
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, Wrap(err, "firmware store: listing overrides")
		}
		var o firmware.Override
		if err := json.Unmarshal(doc, &o); err != nil {
			return nil, Wrap(err, "firmware store: decoding an override")
		}
		out = append(out, o)
	}
	return out, Wrap(rows.Err(), "firmware store: listing overrides")
}

// PutResult stores r unless one with its ID exists.
func (s *FirmwareStore) PutResult(ctx context.Context, r firmware.Result) (firmware.Result, error) {
	doc, err := json.Marshal(r)
	if err != nil {
		return firmware.Result{}, Wrap(err, "firmware store: encoding a result")
	}
	if _, err := s.db.Exec(ctx, `INSERT INTO firmware_results (machine_id, id, doc) VALUES (?, ?, ?) ON CONFLICT (machine_id, id) DO NOTHING`,
		r.MachineID, r.ID, string(doc)); err != nil {
		return firmware.Result{}, Wrap(err, "firmware store: writing result %s of %s", r.ID, r.MachineID)
	}
	got, _, err := s.Result(ctx, r.MachineID, r.ID)
	return got, err
}

// Result returns a stored result.
func (s *FirmwareStore) Result(ctx context.Context, machine, id string) (firmware.Result, bool, error) {
	var doc []byte
	err := s.db.QueryRow(ctx, `SELECT doc FROM firmware_results WHERE machine_id = ? AND id = ?`, machine, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return firmware.Result{}, false, nil
	}
	if err != nil {
		return firmware.Result{}, false, Wrap(err, "firmware store: reading result %s of %s", id, machine)
	}
	var r firmware.Result
	if err := json.Unmarshal(doc, &r); err != nil {
		return firmware.Result{}, false, Wrap(err, "firmware store: decoding result %s of %s", id, machine)
	}
	return r, true, nil
}

// PutPush stores p unless the machine has a push with its ID.
func (s *FirmwareStore) PutPush(ctx context.Context, p firmware.Push) (firmware.Push, error) {
	doc, err := json.Marshal(p)
	if err != nil {
		return firmware.Push{}, Wrap(err, "firmware store: encoding a push")
	}
	if _, err := s.db.Exec(ctx, `INSERT INTO firmware_pushes (machine_id, id, at, doc) VALUES (?, ?, ?, ?) ON CONFLICT (machine_id, id) DO NOTHING`,
		p.MachineID, p.ID, Nanos(p.At), string(doc)); err != nil {
		return firmware.Push{}, Wrap(err, "firmware store: recording push %s of %s", p.ID, p.MachineID)
	}
	var stored []byte
	if err := s.db.QueryRow(ctx, `SELECT doc FROM firmware_pushes WHERE machine_id = ? AND id = ?`, p.MachineID, p.ID).Scan(&stored); err != nil {
		return firmware.Push{}, Wrap(err, "firmware store: reading push %s of %s", p.ID, p.MachineID)
	}
	var got firmware.Push
	if err := json.Unmarshal(stored, &got); err != nil {
		return firmware.Push{}, Wrap(err, "firmware store: decoding push %s of %s", p.ID, p.MachineID)
	}
	return got, nil
}

// Pushes lists the machine's pushes by time, then ID.
func (s *FirmwareStore) Pushes(ctx context.Context, machine string) ([]firmware.Push, error) {
	rows, err := s.db.Query(ctx, `SELECT doc FROM firmware_pushes WHERE machine_id = ? ORDER BY at, id`, machine)
	if err != nil {
		return nil, Wrap(err, "firmware store: listing the pushes of %s", machine)
	}
	defer rows.Close()
	var out []firmware.Push
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, Wrap(err, "firmware store: listing the pushes of %s", machine)
		}
		var p firmware.Push
		if err := json.Unmarshal(doc, &p); err != nil {
			return nil, Wrap(err, "firmware store: decoding a push of %s", machine)
		}
		out = append(out, p)
	}
	return out, Wrap(rows.Err(), "firmware store: listing the pushes of %s", machine)
}

// PutScoutTask stores t as its machine's agent task.
func (s *FirmwareStore) PutScoutTask(ctx context.Context, t firmware.ScoutTask) error {
	doc, err := json.Marshal(t)
	if err != nil {
		return Wrap(err, "firmware store: encoding agent task %s", t.ID)
	}
	_, err = s.db.Exec(ctx, `INSERT INTO firmware_scout_tasks (machine_id, task_id, doc) VALUES (?, ?, ?)
		ON CONFLICT (machine_id) DO UPDATE SET task_id = excluded.task_id, doc = excluded.doc`, t.MachineID, t.ID, string(doc))
	return Wrap(err, "firmware store: writing agent task %s of %s", t.ID, t.MachineID)
}

// ScoutTask returns the machine's agent task.
func (s *FirmwareStore) ScoutTask(ctx context.Context, machine string) (firmware.ScoutTask, bool, error) {
	var doc []byte
	err := s.db.QueryRow(ctx, `SELECT doc FROM firmware_scout_tasks WHERE machine_id = ?`, machine).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return firmware.ScoutTask{}, false, nil
	}
	if err != nil {
		return firmware.ScoutTask{}, false, Wrap(err, "firmware store: reading the agent task of %s", machine)
	}
	var t firmware.ScoutTask
	if err := json.Unmarshal(doc, &t); err != nil {
		return firmware.ScoutTask{}, false, Wrap(err, "firmware store: decoding the agent task of %s", machine)
	}
	return t, true, nil
}

// AcquireUploadSlot takes a slot when fewer than max are held. On
// PostgreSQL a transaction-scoped advisory lock serialises acquirers, so
// concurrent workers never count the same free slot twice.
func (s *FirmwareStore) AcquireUploadSlot(ctx context.Context, holder string, max int, now time.Time, lease time.Duration) (bool, error) {
	ok := false
	err := s.inTx(ctx, "taking an upload slot for "+holder, func(tx *Tx) error {
		ok = false
		if tx.Driver() == Postgres {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(?)`, lockKey("firmware_upload_slots")); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM firmware_upload_slots WHERE expires_at <= ?`, Nanos(now)); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, `UPDATE firmware_upload_slots SET expires_at = ? WHERE holder = ?`, Nanos(now.Add(lease)), holder)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 1 {
			ok = true
			return nil
		}
		var held int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM firmware_upload_slots`).Scan(&held); err != nil {
			return err
		}
		if held >= max {
			return nil
		}
		if _, err := tx.Exec(ctx, `INSERT INTO firmware_upload_slots (holder, expires_at) VALUES (?, ?)`, holder, Nanos(now.Add(lease))); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return ok, err
}

// ReleaseUploadSlot frees holder's slot.
func (s *FirmwareStore) ReleaseUploadSlot(ctx context.Context, holder string) error {
	_, err := s.db.Exec(ctx, `DELETE FROM firmware_upload_slots WHERE holder = ?`, holder)
	return Wrap(err, "firmware store: releasing the upload slot of %s", holder)
}

// UploadSlots counts the slots held at now.
func (s *FirmwareStore) UploadSlots(ctx context.Context, now time.Time) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `SELECT COUNT(*) FROM firmware_upload_slots WHERE expires_at > ?`, Nanos(now)).Scan(&n)
	return n, Wrap(err, "firmware store: counting upload slots")
}

// History lists the machine's finished updates, oldest first.
func (s *FirmwareStore) History(ctx context.Context, machine string) ([]firmware.UpdateHistory, error) {
	rows, err := s.db.Query(ctx, `SELECT doc FROM firmware_history WHERE machine_id = ? ORDER BY finished_at, generation`, machine)
	if err != nil {
		return nil, Wrap(err, "firmware store: listing the history of %s", machine)
	}
	defer rows.Close()
	var out []firmware.UpdateHistory
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, Wrap(err, "firmware store: listing the history of %s", machine)
		}
		var h firmware.UpdateHistory
		if err := json.Unmarshal(doc, &h); err != nil {
			return nil, Wrap(err, "firmware store: decoding the history of %s", machine)
		}
		out = append(out, h)
	}
	return out, Wrap(rows.Err(), "firmware store: listing the history of %s", machine)
}

// PruneHistory removes the finished updates that finished before before.
func (s *FirmwareStore) PruneHistory(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.Exec(ctx, `DELETE FROM firmware_history WHERE finished_at < ?`, Nanos(before))
	if err != nil {
		return 0, Wrap(err, "firmware store: pruning the history")
	}
	n, err := res.RowsAffected()
	return int(n), Wrap(err, "firmware store: pruning the history")
}

// PutPassFigures replaces the figures of the last pass.
func (s *FirmwareStore) PutPassFigures(ctx context.Context, f firmware.PassFigures) error {
	doc, err := json.Marshal(f)
	if err != nil {
		return Wrap(err, "firmware store: encoding the pass figures")
	}
	_, err = s.db.Exec(ctx, `INSERT INTO firmware_pass (id, at, doc) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at, doc = excluded.doc`,
		Nanos(f.At), string(doc))
	return Wrap(err, "firmware store: writing the pass figures")
}

// PassFigures returns the figures of the last pass.
func (s *FirmwareStore) PassFigures(ctx context.Context) (firmware.PassFigures, bool, error) {
	var doc []byte
	err := s.db.QueryRow(ctx, `SELECT doc FROM firmware_pass WHERE id = 1`).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return firmware.PassFigures{}, false, nil
	}
	if err != nil {
		return firmware.PassFigures{}, false, Wrap(err, "firmware store: reading the pass figures")
	}
	var f firmware.PassFigures
	if err := json.Unmarshal(doc, &f); err != nil {
		return firmware.PassFigures{}, false, Wrap(err, "firmware store: decoding the pass figures")
	}
	return f, true, nil
}
