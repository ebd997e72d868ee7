package extevents

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions"
)

// Path is where NetBox's event rules send their webhooks.
const Path = "/netbox/events"

// DefaultMaxBody caps a request body: NetBox's device serialisation is a
// few KiB.
const DefaultMaxBody = 1 << 20

// SignatureHeader carries the hex HMAC-SHA512 of the body under the
// webhook's secret, as NetBox computes it.
const SignatureHeader = "X-Hook-Signature"

// Handler is the endpoint of NetBox's event rules.
type Handler struct {
	// Secret is the NetBox webhook's secret.
	Secret []byte
	// Rules map NetBox's events to stages.
	Rules extensions.NetBoxRules
	// Dispatcher says which stages active extensions bind: events of
	// stages nothing binds are not submitted.
	Dispatcher *extensions.Dispatcher
	// Submitter takes the events.
	Submitter extensions.Submitter
	// MaxBody caps a body (DefaultMaxBody when 0).
	MaxBody int64
	Log     *slog.Logger
}

// Sign is NetBox's X-Hook-Signature of a body.
func Sign(secret, body []byte) string {
	m := hmac.New(sha512.New, secret)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// verify checks the signature in constant time.
func (h *Handler) verify(sig string, body []byte) bool {
	got, err := hex.DecodeString(strings.TrimSpace(sig))
	if err != nil || len(h.Secret) == 0 {
		return false
	}
	m := hmac.New(sha512.New, h.Secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

type answer struct {
	Accepted bool          `json:"accepted"`
	Key      string        `json:"key,omitempty"`
	Events   []answerEvent `json:"events,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Error    string        `json:"error,omitempty"`
}

type answerEvent struct {
	ID    string           `json:"id"`
	Stage extensions.Stage `json:"stage"`
}

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Log
}

func reply(w http.ResponseWriter, status int, a answer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(a)
}

// ServeHTTP verifies, maps and submits one request of NetBox's event
// rules. Nothing is mapped, logged or submitted before the signature
// verified.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		reply(w, http.StatusNotFound, answer{Error: "not found: NetBox's event rules post to " + Path})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, answer{Error: "POST only"})
		return
	}
	max := h.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		h.log().Warn("NetBox event refused: body over the cap", "phase", extensions.Phase, "remote", r.RemoteAddr, "max_bytes", max)
		reply(w, http.StatusRequestEntityTooLarge, answer{Error: "the body is over the endpoint's cap"})
		return
	case err != nil:
		reply(w, http.StatusBadRequest, answer{Error: "the body could not be read"})
		return
	}
	sig := r.Header.Get(SignatureHeader)
	if sig == "" || !h.verify(sig, body) {
		why := "wrongly signed"
		if sig == "" {
			why = "unsigned"
		}
		h.log().Warn("NetBox event refused: "+why+"; nothing fires", "phase", extensions.Phase, "remote", r.RemoteAddr)
		reply(w, http.StatusUnauthorized, answer{Error: why + ": " + SignatureHeader + " must be the hex HMAC-SHA512 of the body under the webhook's secret"})
		return
	}
	evs, why, err := extensions.NetBoxEvents(body, h.Rules)
	if err != nil {
		_, f, _ := hostforge.Classify(err)
		h.log().Warn("NetBox event refused", "phase", extensions.Phase, "code", f.Code, "error", f.Error())
		reply(w, http.StatusBadRequest, answer{Error: f.Code + ": " + f.Message})
		return
	}
	bound := make([]extensions.Event, 0, len(evs.Events))
	for _, e := range evs.Events {
		if h.Dispatcher == nil || h.Dispatcher.Bound(e.Stage) {
			bound = append(bound, e)
		}
	}
	if len(bound) == 0 {
		if why == "" {
			why = "no active extension binds a task to " + stagesOf(evs.Events)
		}
		h.log().Info("NetBox event: nothing fires", "phase", extensions.Phase, "reason", why)
		reply(w, http.StatusOK, answer{Reason: why})
		return
	}
	evs.Events = bound
	if err := h.Submitter.Submit(r.Context(), evs); err != nil {
		_, f, _ := hostforge.Classify(err)
		h.log().Error("NetBox event not taken by dispatch", "phase", extensions.Phase, "key", evs.Key, "code", f.Code, "error", f.Error())
		w.Header().Set("Retry-After", "30")
		reply(w, http.StatusServiceUnavailable, answer{Key: evs.Key, Error: f.Code + ": " + f.Message})
		return
	}
	a := answer{Accepted: true, Key: evs.Key}
	for _, e := range evs.Events {
		a.Events = append(a.Events, answerEvent{ID: e.ID, Stage: e.Stage})
	}
	h.log().Info("NetBox event accepted", "phase", extensions.Phase, "key", evs.Key, "stages", stagesOf(evs.Events))
	reply(w, http.StatusAccepted, a)
}

func stagesOf(evs []extensions.Event) string {
	s := make([]string, 0, len(evs))
	for _, e := range evs {
		s = append(s, string(e.Stage))
	}
	if len(s) == 0 {
		return "(no stage)"
	}
	return strings.Join(s, ", ")
}
