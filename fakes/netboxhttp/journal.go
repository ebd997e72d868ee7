package netboxhttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// Journal entries (/api/extras/journal-entries/): a device's journal, as
// NetBox 4.2 serves it. Listing filters by assigned_object_type and
// assigned_object_id; a POST creates one entry each time (NetBox has no
// idempotency key: a client that retries a POST whose answer it lost
// writes a second entry).

func (s *Server) journalRoutes() {
	s.mux.HandleFunc("GET /api/extras/journal-entries/{$}", s.listJournal)
	s.mux.HandleFunc("POST /api/extras/journal-entries/{$}", s.createJournal)
}

func renderJournal(b string, st *fakes.NetBoxState, e *fakes.NBJournalEntry) map[string]any {
	var obj any
	if d := st.Devices[e.ObjectID]; d != nil && e.ObjectType == fakes.ObjectTypeDevice {
		obj = briefDevice(b, d)
	}
	created := e.Created.UTC().Format(time.RFC3339Nano)
	return map[string]any{
		"id": e.ID, "url": fmt.Sprintf("%s/api/extras/journal-entries/%d/", b, e.ID),
		"display_url":          fmt.Sprintf("%s/extras/journal-entries/%d/", b, e.ID),
		"display":              e.Created.UTC().Format("2006-01-02 15:04") + " (" + strings.ToUpper(e.Kind[:1]) + e.Kind[1:] + ")",
		"assigned_object_type": e.ObjectType, "assigned_object_id": e.ObjectID, "assigned_object": obj,
		"created": created, "created_by": nil,
		"kind":     map[string]any{"value": e.Kind, "label": strings.ToUpper(e.Kind[:1]) + e.Kind[1:]},
		"comments": e.Comments, "tags": []any{}, "custom_fields": map[string]any{}, "last_updated": created,
	}
}

func (s *Server) listJournal(w http.ResponseWriter, r *http.Request) {
	q, ok := s.parseList(w, r)
	if !ok {
		return
	}
	ids, ok := intsParam(w, r, "assigned_object_id")
	if !ok {
		return
	}
	types := r.URL.Query()["assigned_object_type"]
	if !s.enter(w, r, "journal_entries", false) {
		return
	}
	var out []map[string]any
	s.nb.View(func(st *fakes.NetBoxState) {
		entries := st.JournalEntries
		if len(ids) > 0 { // the common query: one device's journal
			entries = func() []*fakes.NBJournalEntry {
				var es []*fakes.NBJournalEntry
				for _, id := range ids {
					es = append(es, st.JournalOf(fakes.ObjectTypeDevice, id)...)
				}
				sort.Slice(es, func(i, j int) bool { return es[i].ID < es[j].ID })
				return es
			}
		}
		for _, e := range entries() {
			if len(ids) > 0 && !contains(ids, e.ObjectID) || len(types) > 0 && !containsString(types, e.ObjectType) {
				continue
			}
			out = append(out, renderJournal(base(r), st, e))
		}
	})
	writeJSON(w, http.StatusOK, q.page(out))
}

func (s *Server) createJournal(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Type     *string `json:"assigned_object_type"`
		ID       *int    `json:"assigned_object_id"`
		Kind     *string `json:"kind"`
		Comments *string `json:"comments"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "JSON parse error - " + err.Error()})
		return
	}
	kind := string(intent.JournalInfo)
	if body.Kind != nil {
		kind = *body.Kind
	}
	switch {
	case body.Type == nil || *body.Type == "":
		badRequest(w, "assigned_object_type", "This field is required.")
		return
	case body.ID == nil:
		badRequest(w, "assigned_object_id", "This field is required.")
		return
	case body.Comments == nil || strings.TrimSpace(*body.Comments) == "":
		badRequest(w, "comments", "This field may not be blank.")
		return
	case !intent.JournalKind(kind).Known():
		badRequest(w, "kind", fmt.Sprintf("%q is not a valid choice.", kind))
		return
	}
	if !s.enter(w, r, "add_journal_entry", true) {
		return
	}
	var out map[string]any
	err := s.nb.Update(func(st *fakes.NetBoxState) error {
		e, err := st.AddJournalEntry(*body.Type, *body.ID, kind, *body.Comments, s.nb.Now())
		if err != nil {
			return err
		}
		out = renderJournal(base(r), st, e)
		return nil
	})
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"assigned_object_id": []string{err.Error()}})
		return
	}
	if !s.answered(w, r, "add_journal_entry") {
		return
	}
	writeJSON(w, http.StatusCreated, out)
}
