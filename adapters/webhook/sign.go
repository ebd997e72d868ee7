package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix marks a Standard Webhooks secret: the rest is base64.
const SecretPrefix = "whsec_"

// SecretKey turns a signing secret into the HMAC key: after the whsec_
// prefix the secret is base64 (standard alphabet, as Standard Webhooks
// writes it), otherwise its bytes are the key as they are.
func SecretKey(secret string) ([]byte, error) {
	if secret == "" {
		return nil, errors.New("the signing secret is empty")
	}
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		// The error quotes no part of the secret.
		return nil, errors.New("a secret starting whsec_ must be base64 after the prefix")
	}
	if len(key) == 0 {
		return nil, errors.New("the signing secret is empty after the whsec_ prefix")
	}
	return key, nil
}

// Sign is the Standard Webhooks signature header value of a delivery:
// "v1," and the base64 HMAC-SHA256, keyed by key, of "id.timestamp.body".
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// maxRetryAfter bounds a Retry-After a receiver may ask for.
const maxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads a Retry-After header: delay-seconds or an
// HTTP-date (RFC 9110), relative to now. A date in the past is 0; a value
// that is neither, or negative, is not ok.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		return 0, true
	}
	return min(d, maxRetryAfter), true
}
