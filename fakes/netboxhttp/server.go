package netboxhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// Options configure the emulator.
type Options struct {
	// Token is the API token every request must carry; "" accepts any
	// request, authenticated or not.
	Token string
	// MaxPageSize caps ?limit (NetBox's MAX_PAGE_SIZE); default 1000. Tests
	// set it low to exercise pagination.
	MaxPageSize int
	// DefaultPageSize is the page size without ?limit (NetBox's
	// PAGINATE_COUNT); default 50.
	DefaultPageSize int
	// Version is reported by /api/status/ and the API-Version header;
	// default "4.2".
	Version string
	// Username is the user changes are made as (the event rules'
	// username); default "admin".
	Username string
	// Clock dates the event rules' webhooks; default the wall clock.
	Clock clock.Clock
	// NoGraphQL answers /graphql/ as a NetBox with GRAPHQL_ENABLED off
	// does: 404 "The GraphQL API is not enabled."
	NoGraphQL bool
}

// Server is the emulator. It is safe for concurrent use.
type Server struct {
	nb   *fakes.NetBox
	opts Options
	mux  *http.ServeMux

	mu       sync.Mutex
	failures []injected
	requests []string

	ev events
}

type injected struct {
	status     int
	retryAfter string
}

// New returns an emulator serving nb's state.
func New(nb *fakes.NetBox, opts Options) *Server {
	if opts.MaxPageSize <= 0 {
		opts.MaxPageSize = 1000
	}
	if opts.DefaultPageSize <= 0 {
		opts.DefaultPageSize = 50
	}
	if opts.DefaultPageSize > opts.MaxPageSize {
		opts.DefaultPageSize = opts.MaxPageSize
	}
	if opts.Version == "" {
		opts.Version = "4.2"
	}
	if opts.Username == "" {
		opts.Username = "admin"
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	s := &Server{nb: nb, opts: opts, mux: http.NewServeMux()}
	s.ev.idle = sync.NewCond(&s.ev.mu)
	s.ev.username = opts.Username
	s.mux.HandleFunc("GET /api/dcim/devices/{$}", s.listDevices)
	s.mux.HandleFunc("GET /api/dcim/devices/{id}/{$}", s.getDevice)
	s.mux.HandleFunc("PATCH /api/dcim/devices/{id}/{$}", s.patchDevice)
	s.mux.HandleFunc("DELETE /api/dcim/devices/{id}/{$}", s.deleteDevice)
	s.mux.HandleFunc("GET /api/dcim/device-types/{id}/{$}", s.getDeviceType)
	s.mux.HandleFunc("GET /api/dcim/device-roles/{id}/{$}", s.getDeviceRole)
	s.mux.HandleFunc("GET /api/dcim/interfaces/{$}", s.listInterfaces)
	s.mux.HandleFunc("GET /api/dcim/cables/{$}", s.listCables)
	s.mux.HandleFunc("GET /api/extras/tags/{$}", s.listTags)
	s.mux.HandleFunc("POST /api/extras/tags/{$}", s.createTag)
	s.mux.HandleFunc("GET /api/status/{$}", s.status)
	s.journalRoutes()
	s.mux.HandleFunc("POST /graphql/{$}", s.graphql)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not found."})
	})
	return s
}

// FailNext makes the next n requests answer status (e.g. 503, 429, 401)
// with NetBox's error body, and a Retry-After header when retryAfter is not
// empty. The requests are still recorded by Requests.
func (s *Server) FailNext(n, status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < n; i++ {
		s.failures = append(s.failures, injected{status: status, retryAfter: retryAfter})
	}
}

// Requests returns every request served so far as "METHOD /path?query".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// ResetRequests forgets the recorded requests.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	var fail *injected
	if len(s.failures) > 0 {
		f := s.failures[0]
		s.failures = s.failures[1:]
		fail = &f
	}
	s.mu.Unlock()
	w.Header().Set("API-Version", s.opts.Version)
	if fail != nil {
		if fail.retryAfter != "" {
			w.Header().Set("Retry-After", fail.retryAfter)
		}
		writeJSON(w, fail.status, map[string]any{"detail": http.StatusText(fail.status)})
		return
	}
	if s.opts.Token != "" {
		auth := r.Header.Get("Authorization")
		scheme, tok, _ := strings.Cut(auth, " ")
		switch {
		case auth == "":
			writeJSON(w, http.StatusForbidden, map[string]any{"detail": "Authentication credentials were not provided."})
			return
		case (scheme != "Token" && scheme != "Bearer") || tok != s.opts.Token:
			writeJSON(w, http.StatusForbidden, map[string]any{"detail": "Invalid token"})
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// enter counts the request against the shared fake and applies injected faults.
func (s *Server) enter(w http.ResponseWriter, r *http.Request, op string, write bool) bool {
	err := s.nb.Enter(r.Context(), op, write)
	if err == nil {
		return true
	}
	writeFault(w, err)
	return false
}

// answered ends a write request whose handler succeeded: false, with the
// failure written instead of the answer, when the answer is to be lost
// (fakes.Site.InjectLost). The write has taken effect either way.
func (s *Server) answered(w http.ResponseWriter, r *http.Request, op string) bool {
	if err := s.nb.Answer(r.Context(), op); err != nil {
		writeFault(w, err)
		return false
	}
	return true
}

// writeFault answers an injected failure with the status a real NetBox (or
// the proxy in front of it) would give.
func writeFault(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, hostforge.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		status = http.StatusServiceUnavailable
	case errors.Is(err, hostforge.ErrUnauthorized):
		status = http.StatusForbidden
	case errors.Is(err, hostforge.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, hostforge.ErrInvalid):
		status = http.StatusBadRequest
	case errors.Is(err, hostforge.ErrConflict):
		status = http.StatusConflict
	}
	writeJSON(w, status, map[string]any{"detail": err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func badRequest(w http.ResponseWriter, field string, reasons ...string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{field: reasons})
}

func notFound(w http.ResponseWriter, model string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"detail": "No " + model + " matches the given query."})
}

// base is the absolute URL prefix of this server as the client reached it.
func base(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// query is a parsed list request.
type query struct {
	limit, offset int
	brief         bool
	exclude       map[string]bool
	r             *http.Request
}

// intsParam parses a repeatable integer filter; NetBox answers 400 for a bad value.
func intsParam(w http.ResponseWriter, r *http.Request, name string) ([]int, bool) {
	var out []int
	for _, v := range r.URL.Query()[name] {
		for _, part := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil {
				badRequest(w, name, "Select a valid choice. "+part+" is not one of the available choices.")
				return nil, false
			}
			out = append(out, n)
		}
	}
	return out, true
}

func (s *Server) parseList(w http.ResponseWriter, r *http.Request) (query, bool) {
	q := query{limit: s.opts.DefaultPageSize, exclude: map[string]bool{}, r: r}
	v := r.URL.Query()
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			badRequest(w, "limit", "Enter a whole number.")
			return q, false
		}
		q.limit = n
	}
	if q.limit == 0 || q.limit > s.opts.MaxPageSize {
		q.limit = s.opts.MaxPageSize
	}
	if o := v.Get("offset"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil || n < 0 {
			badRequest(w, "offset", "Enter a whole number.")
			return q, false
		}
		q.offset = n
	}
	switch strings.ToLower(v.Get("brief")) {
	case "true", "1", "yes":
		q.brief = true
	}
	for _, e := range v["exclude"] {
		for _, f := range strings.Split(e, ",") {
			q.exclude[f] = true
		}
	}
	return q, true
}

// page renders one page of results with NetBox's pagination envelope.
func (q query) page(all []map[string]any) map[string]any {
	total := len(all)
	lo := min(q.offset, total)
	hi := min(lo+q.limit, total)
	out := map[string]any{"count": total, "next": nil, "previous": nil, "results": all[lo:hi]}
	link := func(offset int) string {
		u := *q.r.URL
		v := u.Query()
		v.Set("limit", strconv.Itoa(q.limit))
		if offset > 0 {
			v.Set("offset", strconv.Itoa(offset))
		} else {
			v.Del("offset")
		}
		u.RawQuery = v.Encode()
		return base(q.r) + u.Path + "?" + u.RawQuery
	}
	if hi < total {
		out["next"] = link(hi)
	}
	if lo > 0 {
		out["previous"] = link(max(lo-q.limit, 0))
	}
	if out["results"] == nil {
		out["results"] = []map[string]any{}
	}
	return out
}

func pathID(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not found."})
		return 0, false
	}
	return id, true
}

func contains(ids []int, id int) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func (s *Server) listDevices(w http.ResponseWriter, r *http.Request) {
	q, ok := s.parseList(w, r)
	if !ok {
		return
	}
	ids, ok := intsParam(w, r, "id")
	if !ok {
		return
	}
	names := r.URL.Query()["name"]
	op := "device_names"
	if len(names) > 0 || len(ids) > 0 {
		op = "device"
	}
	if !s.enter(w, r, op, false) {
		return
	}
	var out []map[string]any
	s.nb.View(func(st *fakes.NetBoxState) {
		devs := make([]*fakes.NBDevice, 0, len(st.Devices))
		for _, d := range st.Devices {
			if len(ids) > 0 && !contains(ids, d.ID) {
				continue
			}
			if len(names) > 0 && !containsString(names, d.Name) {
				continue
			}
			devs = append(devs, d)
		}
		sort.Slice(devs, func(i, j int) bool {
			if devs[i].Name != devs[j].Name {
				return intent.NaturalLess(devs[i].Name, devs[j].Name)
			}
			return devs[i].ID < devs[j].ID
		})
		b := base(r)
		for _, d := range devs {
			if q.brief {
				out = append(out, briefDevice(b, d))
			} else {
				out = append(out, renderDevice(b, st, d, q.exclude))
			}
		}
	})
	writeJSON(w, http.StatusOK, q.page(out))
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) getDevice(w http.ResponseWriter, r *http.Request) {
	s.getOne(w, r, "Device", func(st *fakes.NetBoxState, id int) map[string]any {
		if d := st.Devices[id]; d != nil {
			return renderDevice(base(r), st, d, nil)
		}
		return nil
	})
}

func (s *Server) getDeviceType(w http.ResponseWriter, r *http.Request) {
	s.getOne(w, r, "DeviceType", func(st *fakes.NetBoxState, id int) map[string]any {
		if dt := st.DeviceTypes[id]; dt != nil {
			return renderDeviceType(base(r), st, dt)
		}
		return nil
	})
}

func (s *Server) getDeviceRole(w http.ResponseWriter, r *http.Request) {
	s.getOne(w, r, "DeviceRole", func(st *fakes.NetBoxState, id int) map[string]any {
		if role := st.Roles[id]; role != nil {
			return renderRole(base(r), st, role)
		}
		return nil
	})
}

// getOne serves GET of one object by the id in the path: render returns nil
// for an id that does not exist, which answers NetBox's 404 for kind.
func (s *Server) getOne(w http.ResponseWriter, r *http.Request, kind string, render func(st *fakes.NetBoxState, id int) map[string]any) {
	id, ok := pathID(w, r)
	if !ok || !s.enter(w, r, "device", false) {
		return
	}
	var out map[string]any
	s.nb.View(func(st *fakes.NetBoxState) { out = render(st, id) })
	if out == nil {
		notFound(w, kind)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// deviceScopedList reads what the interface and cable lists share: paging,
// the id and device_id filters, and the counted call. It has answered the
// request when ok is false.
func (s *Server) deviceScopedList(w http.ResponseWriter, r *http.Request) (q query, ids, devIDs []int, ok bool) {
	if q, ok = s.parseList(w, r); !ok {
		return
	}
	if ids, ok = intsParam(w, r, "id"); !ok {
		return
	}
	if devIDs, ok = intsParam(w, r, "device_id"); !ok {
		return
	}
	ok = s.enter(w, r, "device", false)
	return
}

func (s *Server) listInterfaces(w http.ResponseWriter, r *http.Request) {
	q, ids, devIDs, ok := s.deviceScopedList(w, r)
	if !ok {
		return
	}
	var out []map[string]any
	s.nb.View(func(st *fakes.NetBoxState) {
		ifs := make([]*fakes.NBInterface, 0)
		for _, i := range st.Interfaces {
			if len(ids) > 0 && !contains(ids, i.ID) {
				continue
			}
			if len(devIDs) > 0 && !contains(devIDs, i.DeviceID) {
				continue
			}
			ifs = append(ifs, i)
		}
		// NetBox orders interfaces by device, then natural name.
		sort.Slice(ifs, func(a, b int) bool {
			da, db := st.Devices[ifs[a].DeviceID], st.Devices[ifs[b].DeviceID]
			if ifs[a].DeviceID != ifs[b].DeviceID && da != nil && db != nil && da.Name != db.Name {
				return intent.NaturalLess(da.Name, db.Name)
			}
			if ifs[a].DeviceID != ifs[b].DeviceID {
				return ifs[a].DeviceID < ifs[b].DeviceID
			}
			if ifs[a].Name != ifs[b].Name {
				return intent.NaturalLess(ifs[a].Name, ifs[b].Name)
			}
			return ifs[a].ID < ifs[b].ID
		})
		bu := base(r)
		for _, i := range ifs {
			if q.brief {
				out = append(out, briefInterface(bu, st, i))
			} else {
				out = append(out, renderInterface(bu, st, i))
			}
		}
	})
	writeJSON(w, http.StatusOK, q.page(out))
}

func (s *Server) listCables(w http.ResponseWriter, r *http.Request) {
	q, ids, devIDs, ok := s.deviceScopedList(w, r)
	if !ok {
		return
	}
	var out []map[string]any
	s.nb.View(func(st *fakes.NetBoxState) {
		cables := make([]*fakes.NBCable, 0)
		for _, c := range st.Cables {
			if len(ids) > 0 && !contains(ids, c.ID) {
				continue
			}
			if len(devIDs) > 0 && !cableOnDevices(st, c, devIDs) {
				continue
			}
			cables = append(cables, c)
		}
		sort.Slice(cables, func(a, b int) bool { return cables[a].ID < cables[b].ID })
		for _, c := range cables {
			out = append(out, renderCable(base(r), st, c))
		}
	})
	writeJSON(w, http.StatusOK, q.page(out))
}

func cableOnDevices(st *fakes.NetBoxState, c *fakes.NBCable, devIDs []int) bool {
	for _, t := range append(append([]fakes.NBTermination(nil), c.A...), c.B...) {
		if contains(devIDs, terminationDevice(st, t)) {
			return true
		}
	}
	return false
}

func (s *Server) listTags(w http.ResponseWriter, r *http.Request) {
	q, ok := s.parseList(w, r)
	if !ok || !s.enter(w, r, "tags", false) {
		return
	}
	slugs := r.URL.Query()["slug"]
	var out []map[string]any
	s.nb.View(func(st *fakes.NetBoxState) {
		tags := make([]*fakes.NBTag, 0)
		for _, t := range st.Tags {
			if len(slugs) == 0 || containsString(slugs, t.Slug) {
				tags = append(tags, t)
			}
		}
		sort.Slice(tags, func(a, b int) bool { return tags[a].Name < tags[b].Name })
		for _, t := range tags {
			out = append(out, renderTag(base(r), st, t))
		}
	})
	writeJSON(w, http.StatusOK, q.page(out))
}

var slugRE = regexp.MustCompile(`^[-\w]+$`)

func (s *Server) createTag(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name  *string `json:"name"`
		Slug  *string `json:"slug"`
		Color *string `json:"color"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "JSON parse error - " + err.Error()})
		return
	}
	switch {
	case body.Name == nil || *body.Name == "":
		badRequest(w, "name", "This field is required.")
		return
	case body.Slug == nil || *body.Slug == "":
		badRequest(w, "slug", "This field is required.")
		return
	case !slugRE.MatchString(*body.Slug):
		badRequest(w, "slug", `Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.`)
		return
	}
	if !s.enter(w, r, "create_tag", true) {
		return
	}
	var out map[string]any
	var dup string
	_ = s.nb.Update(func(st *fakes.NetBoxState) error {
		for _, t := range st.Tags {
			if t.Slug == *body.Slug {
				dup = "slug"
				return nil
			}
			if t.Name == *body.Name {
				dup = "name"
				return nil
			}
		}
		t := st.EnsureTag(*body.Slug)
		t.Name = *body.Name
		out = renderTag(base(r), st, t)
		return nil
	})
	if dup != "" {
		badRequest(w, dup, "tag with this "+dup+" already exists.")
		return
	}
	if !s.answered(w, r, "create_tag") {
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	if !s.enter(w, r, "status", false) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"django-version": "5.1", "netbox-version": s.opts.Version + ".0", "python-version": "3.12",
		"installed-apps": map[string]any{}, "plugins": map[string]any{}, "rq-workers-running": 1,
	})
}

// patchDevice applies a partial update of status, tags and custom_fields.
// Like NetBox, custom_fields are merged into the existing data, tags replace
// the device's tag set, and a refused field changes nothing.
func (s *Server) patchDevice(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "JSON parse error - " + err.Error()})
		return
	}
	keys := make([]string, 0, len(body))
	for k := range body {
		switch k {
		case "status", "tags", "custom_fields":
		default:
			badRequest(w, k, "the emulator does not write this field")
			return
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	op := "patch_device"
	if len(keys) == 1 {
		op = map[string]string{"status": "set_status", "tags": "add_tags", "custom_fields": "set_platform_class"}[keys[0]]
	}
	if !s.enter(w, r, op, true) {
		return
	}
	cfDefined := s.nb.PlatformClassFieldDefined()
	var out map[string]any
	var field, reason string
	missing := false
	_ = s.nb.Update(func(st *fakes.NetBoxState) error {
		d := st.Devices[id]
		if d == nil {
			missing = true
			return nil
		}
		var status *string
		if raw, ok := body["status"]; ok {
			var v string
			if err := json.Unmarshal(raw, &v); err != nil || !intent.Status(v).Known() {
				field, reason = "status", fmt.Sprintf("%q is not a valid choice.", strings.Trim(string(raw), `"`))
				return nil
			}
			status = &v
		}
		var tagIDs []int
		if raw, ok := body["tags"]; ok {
			var err error
			if tagIDs, err = resolveTags(st, raw); err != nil {
				field, reason = "tags", err.Error()
				return nil
			}
		}
		var cf map[string]any
		if raw, ok := body["custom_fields"]; ok {
			if err := json.Unmarshal(raw, &cf); err != nil || cf == nil {
				field, reason = "custom_fields", "Invalid data. Expected a dictionary."
				return nil
			}
			for k, v := range cf {
				_, present := d.CustomFields[k]
				defined := present || (k == "platform_class" && cfDefined)
				if !defined {
					field, reason = "custom_fields", fmt.Sprintf("Unknown field name '%s' in custom field data.", k)
					return nil
				}
				if _, isString := v.(string); v != nil && !isString {
					field, reason = "custom_fields", fmt.Sprintf("Invalid value for custom field '%s': Value must be a string.", k)
					return nil
				}
			}
		}
		// Validated: apply.
		pre := deviceSnapshot(st, d)
		if status != nil {
			d.Status = *status
		}
		if tagIDs != nil || body["tags"] != nil {
			d.TagIDs = tagIDs
		}
		if cf != nil {
			if d.CustomFields == nil {
				d.CustomFields = map[string]any{}
			}
			for k, v := range cf {
				d.CustomFields[k] = v
			}
		}
		out = renderDevice(base(r), st, d, nil)
		data := renderDevice(base(r), st, d, map[string]bool{"config_context": true})
		s.enqueue("updated", data, pre, deviceSnapshot(st, d), newRequestID())
		return nil
	})
	switch {
	case missing:
		notFound(w, "Device")
	case field != "":
		badRequest(w, field, reason)
	case s.answered(w, r, op):
		writeJSON(w, http.StatusOK, out)
	}
}

// resolveTags resolves a tags list the way NetBox's nested write fields do:
// each item is a primary key or an object of attributes to look up.
func resolveTags(st *fakes.NetBoxState, raw json.RawMessage) ([]int, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("Expected a list of items but got type %q.", jsonKind(raw))
	}
	out := make([]int, 0, len(items))
	seen := map[int]bool{}
	for _, it := range items {
		var t *fakes.NBTag
		var pk int
		var attrs map[string]any
		switch {
		case json.Unmarshal(it, &pk) == nil:
			t = st.Tags[pk]
			if t == nil {
				return nil, fmt.Errorf("Related object not found using the provided numeric ID: %d", pk)
			}
		case json.Unmarshal(it, &attrs) == nil:
			for _, cand := range st.Tags {
				if matchesAttrs(cand, attrs) {
					t = cand
					break
				}
			}
			if t == nil {
				return nil, fmt.Errorf("Related object not found using the provided attributes: %s", string(it))
			}
		default:
			return nil, fmt.Errorf("Related objects must be referenced by numeric ID or by dictionary of attributes. Received an unrecognized value: %s", string(it))
		}
		if !seen[t.ID] {
			seen[t.ID] = true
			out = append(out, t.ID)
		}
	}
	return out, nil
}

func matchesAttrs(t *fakes.NBTag, attrs map[string]any) bool {
	if len(attrs) == 0 {
		return false
	}
	for k, v := range attrs {
		switch k {
		case "slug":
			if v != t.Slug {
				return false
			}
		case "name":
			if v != t.Name {
				return false
			}
		case "id":
			if f, ok := v.(float64); !ok || int(f) != t.ID {
				return false
			}
		case "color":
			// NetBox would match on color too; the fake has no colours.
		default:
			return false
		}
	}
	return true
}

func jsonKind(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	switch v.(type) {
	case map[string]any:
		return "dict"
	case string:
		return "str"
	case float64:
		return "int"
	case nil:
		return "NoneType"
	}
	return "unknown"
}

// deleteDevice deletes a device with its interfaces, and the cables that
// lose an end with them, as NetBox's cascade does; 204 with no body.
func (s *Server) deleteDevice(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok || !s.enter(w, r, "delete_device", true) {
		return
	}
	missing := false
	_ = s.nb.Update(func(st *fakes.NetBoxState) error {
		d := st.Devices[id]
		if d == nil {
			missing = true
			return nil
		}
		data := renderDevice(base(r), st, d, map[string]bool{"config_context": true})
		pre := deviceSnapshot(st, d)
		gone := map[int]bool{}
		for iid, i := range st.Interfaces {
			if i.DeviceID == id {
				gone[iid] = true
				delete(st.Interfaces, iid)
			}
		}
		for cid, c := range st.Cables {
			for _, t := range append(append([]fakes.NBTermination(nil), c.A...), c.B...) {
				if (t.ObjectType == "dcim.interface" && gone[t.ObjectID]) || (t.ObjectType != "dcim.interface" && t.DeviceID == id) {
					delete(st.Cables, cid)
					break
				}
			}
		}
		for _, i := range st.Interfaces {
			if st.Cables[i.CableID] == nil {
				i.CableID = 0
			}
		}
		delete(st.Devices, id)
		s.enqueue("deleted", data, pre, nil, newRequestID())
		return nil
	})
	if missing {
		notFound(w, "Device")
		return
	}
	if s.answered(w, r, "delete_device") {
		w.WriteHeader(http.StatusNoContent)
	}
}
