package hostforge

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Redacted is what a secret becomes in scrubbed text.
const Redacted = "<redacted>"

// Secrets is the set of secret values in flight — passwords, tokens,
// private keys, passphrases, DSNs — that must never reach an error, a
// Failure, a log line, an event, CLI output or a Temporal payload. Remote
// systems echo what they refuse (a BMC's PropertyValueFormatError quotes
// the value; Ironic's faultstring quotes driver_info), so every adapter runs
// the text a remote system returns through Scrub before it becomes any of
// those, and the process's exits (its logger, its output streams, its
// Temporal activities) scrub once more.
//
// Scrub also catches the encodings a value travels in: JSON-escaped (once
// and twice: JSON inside a JSON string), Go-quoted, URL-escaped, HTML-escaped
// and base64 (and base64 of "user:password", an echoed basic-auth header,
// with AddCredential).
//
// One set serves a process: the vault registers what it hands out (Vault),
// an adapter registers what it sends (Add), and everything scrubs with the
// same set. A nil *Secrets is valid: it holds nothing and scrubs nothing.
// It is safe for concurrent use.
type Secrets struct {
	mu sync.RWMutex
	// vals maps each value to its variants.
	vals map[string][]string
	// heads indexes every variant of at least headLen bytes by its first
	// headLen bytes; short holds the shorter ones. Add extends them in
	// place, so a set that grows by one credential at a time never
	// rebuilds anything.
	heads map[string]*bucket
	short bucket
	// pairs has a bit set for the first two bytes of every head, so a
	// scan skips most positions of clean text without a map lookup.
	pairs *[1 << 16 / 64]uint64
	// creds are the credentials AddCredential has registered, so a
	// credential seen again costs a lookup and not two encodings.
	creds map[credential]struct{}
	// patterns counts the distinct variants indexed.
	patterns int
}

// bucket holds the variants that start with one head, as a set, and
// their distinct lengths, longest first. A match at a position tries each
// length once (a map lookup), so the cost does not grow with the number
// of variants sharing a head — and many do: base64 of "root:…" always
// starts "cm9v", generated passwords often share a prefix.
type bucket struct {
	lens []int
	set  map[string]struct{}
}

// add puts x in the bucket; false when it was there.
func (b *bucket) add(x string) bool {
	if _, ok := b.set[x]; ok {
		return false
	}
	if b.set == nil {
		b.set = map[string]struct{}{}
	}
	b.set[x] = struct{}{}
	i, found := slices.BinarySearchFunc(b.lens, len(x), func(have, want int) int { return want - have })
	if !found {
		b.lens = slices.Insert(b.lens, i, len(x))
	}
	return true
}

// match returns the length of the longest variant in b that t starts
// with, 0 when none.
func (b *bucket) match(t string) int {
	for _, n := range b.lens {
		if n > len(t) {
			continue
		}
		if _, ok := b.set[t[:n]]; ok {
			return n
		}
	}
	return 0
}

type credential struct{ user, password string }

// pairOf is the first two bytes of t (at least two long) as one number.
func pairOf(t string) uint32 { return uint32(t[0])<<8 | uint32(t[1]) }

// headLen is the length of a variant's index key.
const headLen = 4

// NewSecrets returns a set holding values.
func NewSecrets(values ...string) *Secrets {
	s := &Secrets{}
	s.Add(values...)
	return s
}

// OrNew returns s, or a new empty set when s is nil: an adapter built
// without a process-wide set still scrubs what it knows itself.
func (s *Secrets) OrNew() *Secrets {
	if s == nil {
		return NewSecrets()
	}
	return s
}

// Add registers secret values. Empty values are ignored.
func (s *Secrets) Add(values ...string) {
	if s == nil || s.known(values) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(values)
}

// known reports whether every value is registered already, under the
// read lock: a value seen again (every attempt registers what it handles)
// does not contend with the scrubbing readers.
func (s *Secrets) known(values []string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range values {
		if _, ok := s.vals[v]; !ok && v != "" {
			return false
		}
	}
	return true
}

// add registers values. Callers hold s.mu.
func (s *Secrets) add(values []string) {
	for _, v := range values {
		if v == "" {
			continue
		}
		if _, ok := s.vals[v]; ok {
			continue
		}
		if s.vals == nil {
			s.vals, s.heads = map[string][]string{}, map[string]*bucket{}
		}
		vs := Variants(v)
		s.vals[v] = vs
		for _, x := range vs {
			s.index(x)
		}
	}
}

// index adds one variant to the index, unless it is there already.
// Callers hold s.mu.
func (s *Secrets) index(x string) {
	b := &s.short
	if len(x) >= headLen {
		b = s.heads[x[:headLen]]
		if b == nil {
			b = &bucket{}
			s.heads[x[:headLen]] = b
			if s.pairs == nil {
				s.pairs = new([1 << 16 / 64]uint64)
			}
			p := pairOf(x)
			s.pairs[p/64] |= 1 << (p % 64)
		}
	}
	if b.add(x) {
		s.patterns++
	}
}

// AddCredential registers a password and the basic-auth encoding of the
// credential (base64 of "user:password"), which a server that echoes a
// request's headers gives back.
func (s *Secrets) AddCredential(user, password string) {
	if s == nil || password == "" {
		return
	}
	c := credential{user, password}
	s.mu.RLock()
	_, seen := s.creds[c]
	s.mu.RUnlock()
	if seen {
		return
	}
	basic := user + ":" + password
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add([]string{password, base64.StdEncoding.EncodeToString([]byte(basic)), base64.RawStdEncoding.EncodeToString([]byte(basic))})
	if s.creds == nil {
		s.creds = map[credential]struct{}{}
	}
	s.creds[c] = struct{}{}
}

// AddFields registers the values of the fields of a vault item whose names
// say they are secret (SecretField): passwords, passphrases, tokens, keys.
// User names, known_hosts and bookkeeping fields are not secret and stay
// readable in messages.
func (s *Secrets) AddFields(fields map[string]string) {
	for k, v := range fields {
		if SecretField(k) {
			s.Add(v)
		}
	}
}

// secretWords mark a field name as secret.
var secretWords = []string{"password", "passwd", "passphrase", "secret", "token", "private_key", "privatekey", "api_key", "apikey", "dsn", "credential"}

// SecretField reports whether a vault field of this name holds a secret:
// its name contains password, passwd, passphrase, secret, token,
// private_key, api_key, dsn or credential (any case).
func SecretField(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Len is the number of values registered.
func (s *Secrets) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.vals)
}

// Values returns the registered values, sorted (for tests that scan output
// for them).
func (s *Secrets) Values() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.vals))
	for v := range s.vals {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Variants are the forms a secret value takes in text: itself, and its
// JSON-escaped (once and twice), Go-quoted, URL-escaped, HTML-escaped and
// base64 forms, each once.
func Variants(v string) []string {
	if v == "" {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(x string) {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	add(v)
	if plain(v) {
		// Every escaping leaves v as it is; only the encodings differ.
		add(base64.RawStdEncoding.EncodeToString([]byte(v)))
		add(base64.RawURLEncoding.EncodeToString([]byte(v)))
		return out
	}
	j := jsonInner(v, true)
	add(j)
	add(jsonInner(v, false))
	add(jsonInner(j, true))
	add(jsonInner(j, false))
	add(strings.Trim(strconv.Quote(v), `"`))
	add(strings.Trim(strconv.QuoteToASCII(v), `"`))
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	add(html.EscapeString(v))
	add(base64.RawStdEncoding.EncodeToString([]byte(v)))
	add(base64.RawURLEncoding.EncodeToString([]byte(v)))
	return out
}

// plain reports whether v is made only of characters no escaping
// changes: JSON (with or without HTML escaping), Go quoting, URL query
// and path escaping and HTML escaping all leave it as it is.
func plain(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~') {
			return false
		}
	}
	return true
}

// jsonInner is v as it appears inside a JSON string.
func jsonInner(v string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v)
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(b.String(), `"`), "\n"), `"`)
}

// Scrub returns text with every registered value, in every variant,
// replaced by Redacted. It scans text once: at each position the longest
// variant that starts there is replaced, as strings.Replacer would with
// the variants longest first, and the scan goes on after it.
func (s *Secrets) Scrub(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.patterns == 0 {
		return text
	}
	var b strings.Builder
	done := 0 // text[:done] is written to b (or needs no change)
	for i := 0; i < len(text); {
		n := s.matchAt(text[i:])
		if n == 0 {
			i++
			continue
		}
		if b.Cap() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[done:i])
		b.WriteString(Redacted)
		i += n
		done = i
	}
	if done == 0 {
		return text
	}
	b.WriteString(text[done:])
	return b.String()
}

// matchAt returns the length of the longest variant t starts with, 0 when
// none. Callers hold s.mu for reading.
func (s *Secrets) matchAt(t string) int {
	if len(t) >= headLen {
		if p := pairOf(t); s.pairs == nil || s.pairs[p/64]&(1<<(p%64)) == 0 {
			// no head starts with these two bytes
		} else if b := s.heads[t[:headLen]]; b != nil {
			if n := b.match(t); n > 0 {
				return n
			}
		}
	}
	return s.short.match(t)
}

// Contains reports whether text carries a registered value in any variant.
func (s *Secrets) Contains(text string) bool { return s.Scrub(text) != text }

// Err returns err with its text scrubbed. A *Failure comes back as a
// Failure (message scrubbed, cause scrubbed), a *Wait as a Wait (detail
// scrubbed); any other error whose text carries a secret is wrapped so that
// Error() is scrubbed while errors.Is still sees the original chain, and
// errors.As for a *Failure or a *Wait inside it yields a scrubbed copy.
// An error that carries no secret is returned as it is.
func (s *Secrets) Err(err error) error {
	if err == nil || s.Len() == 0 {
		return err
	}
	switch e := err.(type) {
	case *Failure:
		return s.Failure(e)
	case *Wait:
		return s.wait(e)
	}
	text := err.Error()
	clean := s.Scrub(text)
	if clean == text {
		return err
	}
	return &scrubbedErr{err: err, text: clean, s: s}
}

// Failure returns f with its message and cause scrubbed (f itself when
// neither carries a secret).
func (s *Secrets) Failure(f *Failure) *Failure {
	if f == nil || s.Len() == 0 {
		return f
	}
	msg := s.Scrub(f.Message)
	cause := s.Err(f.Cause)
	if msg == f.Message && cause == f.Cause {
		return f
	}
	c := *f
	c.Message, c.Cause = msg, cause
	return &c
}

func (s *Secrets) wait(w *Wait) *Wait {
	d := s.Scrub(w.Detail)
	if d == w.Detail {
		return w
	}
	c := *w
	c.Detail = d
	return &c
}

// scrubbedErr is an error whose text is scrubbed of secrets.
type scrubbedErr struct {
	err  error
	text string
	s    *Secrets
}

func (e *scrubbedErr) Error() string { return e.text }
func (e *scrubbedErr) Unwrap() error { return e.err }

// As hands out scrubbed copies of the Failure or Wait inside, so that
// AsFailure and AsWait on a scrubbed error never reach the raw text.
func (e *scrubbedErr) As(target any) bool {
	switch t := target.(type) {
	case **Failure:
		var f *Failure
		if errors.As(e.err, &f) {
			*t = e.s.Failure(f)
			return true
		}
	case **Wait:
		var w *Wait
		if errors.As(e.err, &w) {
			*t = e.s.wait(w)
			return true
		}
	}
	return false
}

// Writer returns a writer that scrubs each Write before passing it to w. A
// secret split across two writes is not caught: write whole lines (fmt and
// encoding/json do).
func (s *Secrets) Writer(w io.Writer) io.Writer {
	if s == nil {
		return w
	}
	return &scrubWriter{w: w, s: s}
}

type scrubWriter struct {
	w io.Writer
	s *Secrets
}

func (w *scrubWriter) Write(p []byte) (int, error) {
	if w.s.Len() == 0 {
		return w.w.Write(p)
	}
	clean := w.s.Scrub(string(p))
	if _, err := io.WriteString(w.w, clean); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Handler returns a slog.Handler that scrubs every record's message and
// attribute values (strings, errors, Stringers and values that marshal to
// JSON) before passing it to h. Attributes bound with WithAttrs are
// scrubbed of the secrets registered when they are bound.
func (s *Secrets) Handler(h slog.Handler) slog.Handler {
	if s == nil {
		return h
	}
	if sh, ok := h.(*scrubHandler); ok && sh.s == s {
		return h
	}
	if h == slog.DiscardHandler {
		return h // writes nothing, so there is nothing to scrub
	}
	return &scrubHandler{h: h, s: s}
}

type scrubHandler struct {
	h slog.Handler
	s *Secrets
}

func (h *scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.s.Len() == 0 {
		return h.h.Handle(ctx, r)
	}
	nr := slog.NewRecord(r.Time, r.Level, h.s.Scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(h.s.attr(a))
		return true
	})
	return h.h.Handle(ctx, nr)
}

func (h *scrubHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.s.attr(a)
	}
	return &scrubHandler{h: h.h.WithAttrs(out), s: h.s}
}

func (h *scrubHandler) WithGroup(name string) slog.Handler {
	return &scrubHandler{h: h.h.WithGroup(name), s: h.s}
}

// attr scrubs one attribute's value.
func (s *Secrets) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, s.Scrub(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = s.attr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, s.Scrub(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, s.Scrub(x.String()))
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return slog.String(a.Key, s.Scrub(fmt.Sprint(x)))
			}
			if clean := s.Scrub(string(b)); clean != string(b) {
				return slog.String(a.Key, clean)
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// ItemVault is a secrets vault of items of named fields: the shape the
// phases' own Vault interfaces take (bmc.Vault, ironic.Vault,
// enrollment.Vault and the SSH adapter's).
type ItemVault interface {
	Item(ctx context.Context, name string) (map[string]string, error)
	PutItem(ctx context.Context, name string, fields map[string]string) error
}

// Vault returns v with every secret field (SecretField) of every item it
// hands out or stores registered in s: a password is known to the scrubber
// from the moment it is read or generated, before it is ever sent.
func (s *Secrets) Vault(v ItemVault) ItemVault {
	if s == nil {
		return v
	}
	return &recordingVault{v: v, s: s}
}

type recordingVault struct {
	v ItemVault
	s *Secrets
}

func (r *recordingVault) Item(ctx context.Context, name string) (map[string]string, error) {
	f, err := r.v.Item(ctx, name)
	r.s.AddFields(f)
	return f, err
}

func (r *recordingVault) PutItem(ctx context.Context, name string, fields map[string]string) error {
	r.s.AddFields(fields)
	return r.v.PutItem(ctx, name, fields)
}
