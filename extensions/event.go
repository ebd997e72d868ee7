package extensions

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/hostforge/hostforge/extensions/nunjucks"
)

// DefaultStageDeadline bounds the dispatch of one event's stage: no task
// starts later than this after the event was fired.
const DefaultStageDeadline = time.Hour

// Event is one occurrence of a stage: what Fire dispatches.
type Event struct {
	// ID identifies the occurrence; delivery IDs derive from it, so firing
	// the same event again delivers the same IDs.
	ID    string `json:"id"`
	Stage Stage  `json:"stage"`
	// Payload is the stage's object, {"server": {...}}, without its secret
	// fields; it is safe to log, record and keep in a workflow history.
	Payload json.RawMessage `json:"payload"`
	// HasSecrets says secret fields were removed; tasks that opted in get
	// them from the dispatcher's SecretSource.
	HasSecrets bool `json:"hasSecrets,omitempty"`
	// StageDeadline bounds the dispatch (DefaultStageDeadline when 0).
	StageDeadline time.Duration `json:"stageDeadline,omitempty"`
	// Redeliver names tasks this firing runs again under a new delivery
	// ID (RedeliveryID), whatever earlier firings of the event did: a
	// task's label, or extension/label.
	Redeliver []string `json:"redeliver,omitempty"`
}

func (e Event) deadline() time.Duration {
	if e.StageDeadline <= 0 {
		return DefaultStageDeadline
	}
	return e.StageDeadline
}

// NewEvent builds an event from a payload (a JSON object with the stage's
// key). id comes from the event's source (an enrollment's run ID, a
// source's request ID, an operator's --event-id); an empty id is a fresh
// random one (NewEventID): the same payload fired again later is a new
// event, whose deliveries receivers must not drop as duplicates. original
// is the payload with its secrets, to keep in a SecretSource when
// HasSecrets is set; it must not be logged.
func NewEvent(id string, stage Stage, payload []byte) (ev Event, original []byte, err error) {
	if !stage.Known() {
		return Event{}, nil, EventInvalid.New("%s", stageProblem(string(stage)))
	}
	v, err := nunjucks.FromJSON(payload)
	if err != nil {
		return Event{}, nil, PayloadInvalid.Wrap(err, "the %s payload is not JSON", stage)
	}
	obj, ok := v.(*nunjucks.Object)
	if !ok {
		return Event{}, nil, PayloadInvalid.New("the %s payload must be a JSON object with the key %q", stage, stage.PayloadKey())
	}
	if err := checkPayloadKey(stage, obj); err != nil {
		return Event{}, nil, err
	}
	red, removed := redact(obj)
	clean, err := json.Marshal(red)
	if err != nil {
		return Event{}, nil, PayloadInvalid.Wrap(err, "the %s payload cannot be encoded", stage)
	}
	if id == "" {
		id = NewEventID()
	}
	ev = Event{ID: id, Stage: stage, Payload: clean, HasSecrets: removed}
	if removed {
		original = append([]byte(nil), payload...)
	}
	return ev, original, nil
}

// DeliveryID is the ID of one task's delivery of one event: stable per
// (event, extension, task), the same on every retry and every re-fire of
// the event that delivers the task again, so receivers can deduplicate
// (a redelivery has its own ID: RedeliveryID). It is sent as the
// webhook-id header. The format is a UUID (version 8, name-based on
// SHA-256).
func DeliveryID(eventID, extension, task string) string {
	return deliveryUUID("hostforge-delivery", eventID, extension, task)
}

// deliveryUUID is the version 8 UUID named by its parts.
func deliveryUUID(parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:]) // length-prefixed, so fields cannot run into each other
		h.Write([]byte(s))
	}
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x80 // version 8
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	x := hex.EncodeToString(b)
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}
