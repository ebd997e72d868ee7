package extensions

import (
	"context"
	"strings"
	"sync"

	"github.com/hostforge/hostforge/extensions/nunjucks"
)

// secretKeys are the payload fields that carry secrets.
var secretKeys = map[string]bool{
	"passwordEncrypted":              true,
	"mgmtSnmpPasswordEncrypted":      true,
	"vncPasswordEncrypted":           true,
	"managementPassword":             true,
	"secretsMaterializedForOSAssets": true,
}

// IsSecretKey reports whether a payload field carries a secret:
// passwordEncrypted, mgmtSnmpPasswordEncrypted, vncPasswordEncrypted,
// managementPassword, secretsMaterializedForOSAssets, or any name ending in
// "Encrypted". Such fields are removed from the payload every task sees,
// logs and records; a task gets them only with "includeSecrets": true.
func IsSecretKey(k string) bool { return secretKeys[k] || strings.HasSuffix(k, "Encrypted") }

// redact returns v without secret fields (a copy where anything changed)
// and reports whether it removed any.
func redact(v any) (any, bool) {
	switch x := v.(type) {
	case *nunjucks.Object:
		var out *nunjucks.Object
		removed := false
		for i, k := range x.Keys() {
			val, _ := x.Get(k)
			nv, r := redact(val)
			drop := IsSecretKey(k)
			if (drop || r) && out == nil {
				out = nunjucks.NewObject(x.Len())
				for _, pk := range x.Keys()[:i] {
					pv, _ := x.Get(pk)
					out.Set(pk, pv)
				}
			}
			removed = removed || drop || r
			if out != nil && !drop {
				out.Set(k, nv)
			}
		}
		if out == nil {
			return x, false
		}
		return out, removed
	case *nunjucks.Array:
		var out *nunjucks.Array
		for i, it := range x.Items {
			nv, r := redact(it)
			if r && out == nil {
				out = &nunjucks.Array{Items: append([]any(nil), x.Items...)}
			}
			if out != nil {
				out.Items[i] = nv
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	}
	return v, false
}

// secretValues lists the string values under secret fields, however
// short: the scrubber matches a short one as a whole word
// (hostforge.WholeWordSecret) rather than leave it out.
func secretValues(v any) []string {
	var out []string
	var walk func(v any, secret bool)
	walk = func(v any, secret bool) {
		switch x := v.(type) {
		case *nunjucks.Object:
			for _, k := range x.Keys() {
				val, _ := x.Get(k)
				walk(val, secret || IsSecretKey(k))
			}
		case *nunjucks.Array:
			for _, it := range x.Items {
				walk(it, secret)
			}
		case string:
			if secret && x != "" {
				out = append(out, x)
			}
		}
	}
	walk(v, false)
	return out
}

// SecretSource gives back the secret-bearing payload of an event, for the
// tasks that opted in with includeSecrets. Events carry their payload
// without secrets (they travel through logs, records and a workflow
// engine's history); the source holds the original.
type SecretSource interface {
	// EventPayload returns the original payload of the event, or false when
	// the source does not have it.
	EventPayload(ctx context.Context, eventID string) ([]byte, bool, error)
}

// MemorySecrets is a SecretSource in process memory: the CLI, and a worker
// that fires the events it received itself.
type MemorySecrets struct {
	mu sync.Mutex
	m  map[string][]byte
}

// Put keeps the original payload of an event (from NewEvent).
func (m *MemorySecrets) Put(eventID string, original []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string][]byte{}
	}
	m.m[eventID] = append([]byte(nil), original...)
}

// Forget drops an event's payload once it has been dispatched.
func (m *MemorySecrets) Forget(eventID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, eventID)
}

// EventPayload returns the kept payload.
func (m *MemorySecrets) EventPayload(_ context.Context, eventID string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.m[eventID]
	return b, ok, nil
}
