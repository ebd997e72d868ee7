package netboxhttp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge/fakes"
)

// EventRule is an event rule whose action is a webhook, as NetBox keeps
// them (extras.EventRule with extras.Webhook): on the events it names, for
// the object types it names, NetBox's background worker sends the webhook.
type EventRule struct {
	Name string
	// ObjectTypes are "app.model" names; the emulator's objects are
	// "dcim.device".
	ObjectTypes []string
	// Events are the event types: "object_created", "object_updated",
	// "object_deleted".
	Events []string
	// PayloadURL, HTTPMethod (POST by default) and HTTPContentType
	// (application/json by default) are the webhook's.
	PayloadURL      string
	HTTPMethod      string
	HTTPContentType string
	// Secret, when set, signs the body: X-Hook-Signature is its hex
	// HMAC-SHA512 under the secret.
	Secret string
	// Client sends the request (http.DefaultClient when nil): its TLS
	// configuration is the webhook's ssl_verification and ca_file_path.
	Client *http.Client
}

// EventDelivery is one webhook request the emulator sent.
type EventDelivery struct {
	Rule      string
	Event     string // created, updated, deleted
	RequestID string
	Body      []byte
	Header    http.Header
	// Status is the receiver's HTTP status; Err is set when there was none.
	Status int
	Err    error
}

// events is the emulator's background worker: NetBox enqueues an event
// rule's webhook when the change is committed, after the request that
// made it was answered, and a worker sends it.
type events struct {
	mu         sync.Mutex
	rules      []EventRule
	queue      []queued
	deliveries []EventDelivery
	busy       bool
	idle       *sync.Cond
	username   string
}

type queued struct {
	rule EventRule
	body []byte
	ev   string
	req  string
}

// AddEventRule makes the emulator send rule's webhook for the changes it
// names, as NetBox does: the body is the event context serialised
// ({"event", "timestamp", "model", "username", "request_id", "data",
// "snapshots"}), data the object as the REST API renders it, snapshots
// its stored fields before and after the change.
func (s *Server) AddEventRule(rule EventRule) {
	s.ev.mu.Lock()
	defer s.ev.mu.Unlock()
	s.ev.rules = append(s.ev.rules, rule)
}

// EventDeliveries returns the webhook requests sent so far.
func (s *Server) EventDeliveries() []EventDelivery {
	s.ev.mu.Lock()
	defer s.ev.mu.Unlock()
	return append([]EventDelivery(nil), s.ev.deliveries...)
}

// WaitEvents blocks until every webhook enqueued so far was sent, or ctx
// ends.
func (s *Server) WaitEvents(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.ev.mu.Lock()
		for len(s.ev.queue) > 0 || s.ev.busy {
			s.ev.idle.Wait()
		}
		s.ev.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// eventContext is NetBox's webhook context, in its key order.
type eventContext struct {
	Event     string         `json:"event"`
	Timestamp string         `json:"timestamp"`
	Model     string         `json:"model"`
	Username  string         `json:"username"`
	RequestID string         `json:"request_id"`
	Data      map[string]any `json:"data"`
	Snapshots snapshots      `json:"snapshots"`
}

type snapshots struct {
	Prechange  map[string]any `json:"prechange"`
	Postchange map[string]any `json:"postchange"`
}

// deviceSnapshot is a device's stored fields (NetBox's serialize_object):
// related objects by ID, the status by its value, tags by name.
func deviceSnapshot(st *fakes.NetBoxState, d *fakes.NBDevice) map[string]any {
	tags := []any{}
	for _, id := range d.TagIDs {
		if t := st.Tags[id]; t != nil {
			tags = append(tags, t.Name)
		}
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].(string) < tags[j].(string) })
	return map[string]any{
		"name": d.Name, "device_type": d.DeviceTypeID, "role": d.RoleID, "site": d.SiteID, "serial": d.Serial,
		"status": d.Status, "description": "", "custom_fields": customFields(d.CustomFields), "tags": tags,
	}
}

// enqueue queues the webhooks of the rules that match a device event;
// the lock of the fake's state is held (the data is rendered as
// committed).
func (s *Server) enqueue(event string, data, pre, post map[string]any, requestID string) {
	s.ev.mu.Lock()
	defer s.ev.mu.Unlock()
	for _, rule := range s.ev.rules {
		if !matches(rule, event) {
			continue
		}
		ctxBody := eventContext{Event: event, Timestamp: isoTimestamp(s.opts.Clock.Now()), Model: "device", Username: s.ev.username, RequestID: requestID,
			Data: data, Snapshots: snapshots{Prechange: pre, Postchange: post}}
		body, err := json.Marshal(ctxBody)
		if err != nil {
			continue
		}
		s.ev.queue = append(s.ev.queue, queued{rule: rule, body: body, ev: event, req: requestID})
	}
	if len(s.ev.queue) > 0 && !s.ev.busy {
		s.ev.busy = true
		go s.sendAll()
	}
}

func matches(rule EventRule, event string) bool {
	obj := false
	for _, o := range rule.ObjectTypes {
		obj = obj || o == "dcim.device"
	}
	for _, e := range rule.Events {
		if obj && e == "object_"+event {
			return true
		}
	}
	return false
}

// sendAll is the background worker: it sends the queued webhooks in
// order until the queue is empty.
func (s *Server) sendAll() {
	for {
		s.ev.mu.Lock()
		if len(s.ev.queue) == 0 {
			s.ev.busy = false
			s.ev.idle.Broadcast()
			s.ev.mu.Unlock()
			return
		}
		q := s.ev.queue[0]
		s.ev.queue = s.ev.queue[1:]
		s.ev.mu.Unlock()
		d := send(q)
		s.ev.mu.Lock()
		s.ev.deliveries = append(s.ev.deliveries, d)
		s.ev.mu.Unlock()
	}
}

// send makes one webhook request as NetBox's send_webhook does.
func send(q queued) EventDelivery {
	d := EventDelivery{Rule: q.rule.Name, Event: q.ev, RequestID: q.req, Body: q.body}
	method := q.rule.HTTPMethod
	if method == "" {
		method = http.MethodPost
	}
	ctype := q.rule.HTTPContentType
	if ctype == "" {
		ctype = "application/json"
	}
	req, err := http.NewRequest(method, q.rule.PayloadURL, bytes.NewReader(q.body))
	if err != nil {
		d.Err = err
		return d
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", "python-requests/2.32.3")
	if q.rule.Secret != "" {
		m := hmac.New(sha512.New, []byte(q.rule.Secret))
		m.Write(q.body)
		req.Header.Set("X-Hook-Signature", hex.EncodeToString(m.Sum(nil)))
	}
	d.Header = req.Header.Clone()
	c := q.rule.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		d.Err = err
		return d
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	d.Status = resp.StatusCode
	return d
}

// newRequestID is the UUID NetBox gives each request (uuid4).
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b[:])
	return strings.Join([]string{x[:8], x[8:12], x[12:16], x[16:20], x[20:]}, "-")
}

// isoTimestamp renders a time as Python's datetime.isoformat() of an
// aware UTC time: microseconds and +00:00.
func isoTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
}
