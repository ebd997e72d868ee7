package webhook_test

import (
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/webhook"
)

// FuzzParseRetryAfter reads Retry-After values as receivers send them: it
// never panics, and what it accepts is a wait from 0 to 24 h.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", "Fri, 31 Dec 1999 23:59:59 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "1e3", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := webhook.ParseRetryAfter(v, now)
		if ok && (d < 0 || d > 24*time.Hour) {
			t.Fatalf("ParseRetryAfter(%q) = %s", v, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %s, not ok", v, d)
		}
	})
}

// FuzzSecretKey reads signing secrets as a vault holds them: it never
// panics and never returns an empty key without an error.
func FuzzSecretKey(f *testing.F) {
	for _, s := range []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "plain", "whsec_!!", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := webhook.SecretKey(s)
		if err == nil && len(k) == 0 {
			t.Fatalf("SecretKey(%q): empty key without an error", s)
		}
	})
}
