package extensions

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hostforge/hostforge"
)

// What a delivery's record and log lines hold of a task's exchange with
// its receiver. A task that received secrets — it opted into the payload's
// secrets (includeSecrets), or its extension declares an isPassword input
// or configVar — keeps of its request and of the answer it got back only
// their SHA-256 and length (Digest): never the body, which holds the
// secrets in forms no scrubber can promise to find all of. Any other task's
// record keeps the bodies, capped, scrubbed. Log lines keep neither: a
// runner puts bodies in a Failure's Detail, which Error() leaves out.

// Digest is how a record names a body it does not keep: its SHA-256 and
// its length, enough to match it with what the receiver logged.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return DigestSum(sum[:], int64(len(b)))
}

// DigestSum is Digest of a body hashed as it streamed: its SHA-256 sum and
// its length n (a command's whole output, of which only a tail is kept).
func DigestSum(sum []byte, n int64) string {
	return fmt.Sprintf("sha256:%x, %d bytes", sum, n)
}

// Recorded is what a delivery's record keeps of a body the task sent or
// got back: keep(b) (the body, capped) for a task without secrets, and
// only its Digest for a task that received secrets.
func Recorded(b []byte, secrets bool, keep func([]byte) string) string {
	if secrets {
		return Digest(b) + NotRecorded
	}
	return keep(b)
}

// NotRecorded follows a Digest that stands for a body.
const NotRecorded = " (the body is not recorded: the task receives secrets)"

// receivesSecrets reports whether task t of x receives secrets: it opted
// into the payload's (includeSecrets, whether or not this payload has
// any), or x declares an isPassword input or configVar.
func (x *Extension) receivesSecrets(t *BoundTask) bool {
	if t.IncludeSecrets {
		return true
	}
	for _, ins := range [][]Input{x.Definition.ConfigVars, x.Definition.Inputs} {
		for _, in := range ins {
			if in.IsPassword {
				return true
			}
		}
	}
	return false
}

// passwordValues are the values of x's isPassword inputs and configVars:
// a JSON string's text, or the JSON of any other value.
func (x *Extension) passwordValues() []string {
	var out []string
	for _, ins := range [][]Input{x.Definition.ConfigVars, x.Definition.Inputs} {
		for _, in := range ins {
			if !in.IsPassword || len(in.DefaultValue) == 0 {
				continue
			}
			var s string
			if json.Unmarshal(in.DefaultValue, &s) != nil {
				s = string(in.DefaultValue)
			}
			if s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// deliverySecrets is the set a delivery's message, failure and outputs
// are scrubbed of: the payload's secrets, x's isPassword values, the
// task's own credentials (an SSH task's password, a webhook's credential
// header values), and, for a task that receives secrets, the rendered body
// itself (a receiver echoing it whole).
func (x *Extension) deliverySecrets(payload []string, t *BoundTask, body string) *hostforge.Secrets {
	s := hostforge.NewSecrets(payload...)
	s.Add(x.passwordValues()...)
	if t.ssh != nil {
		s.Add(t.ssh.Password)
	}
	if t.webhook != nil {
		for k, v := range t.webhook.Headers {
			if CredentialHeader(k) {
				s.Add(v)
				if _, tok, ok := strings.Cut(v, " "); ok {
					s.Add(tok) // after a scheme: "Bearer <token>"
				}
			}
		}
	}
	if x.receivesSecrets(t) {
		s.Add(body)
	}
	return s
}

// CredentialHeader reports whether a header of this name carries a
// credential: its name contains auth, token, key, secret, password,
// cookie, signature or credential (any case).
func CredentialHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "token", "key", "secret", "password", "cookie", "signature", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
