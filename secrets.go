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
// Scrub also catches the forms a value travels in (Variants): in any case
// (a template's lower or upper filter), JSON-escaped once and twice (a
// template's dump; JSON inside a JSON string), Go-quoted, shell-quoted, and
// each of those HTML-escaped or URL-escaped (a receiver echoing a request),
// and base64 (and base64 of "user:password", an echoed basic-auth header,
// with AddCredential). Every value is scrubbed however short; one shorter
// than MinSecretLen characters, or a published factory default such as
// Dell's calvin, only as a whole word (WholeWordSecret), so that it does
// not cut other words apart.
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
	// headLen bytes, ASCII case-folded; short holds the shorter ones. Add
	// extends them in place, so a set that grows by one credential at a
	// time never rebuilds anything.
	heads map[uint32]*bucket
	short bucket
	// pairs has a bit set for the first two (folded) bytes of every head,
	// so a scan skips most positions of clean text without a map lookup.
	pairs *[1 << 16 / 64]uint64
	// creds are the credentials AddCredential has registered, so a
	// credential seen again costs a lookup and not two encodings.
	creds map[credential]struct{}
	// patterns counts the distinct variants indexed.
	patterns int
}

// bucket holds the variants that start with one head, ASCII case-folded,
// as a set, and their distinct lengths, longest first. A match at a
// position tries each length once (a map lookup), so the cost does not
// grow with the number of variants sharing a head — and many do: base64
// of "root:…" always starts "cm9v", generated passwords often share a
// prefix. The set's value says the variant matches as a whole word only.
type bucket struct {
	lens []int
	set  map[string]bool
}

// add puts the folded variant x in the bucket; false when it was there.
// A variant wanted both ways matches anywhere.
func (b *bucket) add(x string, word bool) bool {
	if w, ok := b.set[x]; ok {
		if w && !word {
			b.set[x] = false
		}
		return false
	}
	if b.set == nil {
		b.set = map[string]bool{}
	}
	b.set[x] = word
	i, found := slices.BinarySearchFunc(b.lens, len(x), func(have, want int) int { return want - have })
	if !found {
		b.lens = slices.Insert(b.lens, i, len(x))
	}
	return true
}

// match returns the length of the longest variant in b that text[i:]
// starts with, ASCII case-insensitively, and that is not a whole-word
// variant inside a longer word; 0 when none. buf is scratch space for the
// folded text.
func (b *bucket) match(text string, i int, buf *[]byte) int {
	t := text[i:]
	var f []byte
	for _, n := range b.lens {
		if n > len(t) {
			continue
		}
		if f == nil {
			// The first length that fits is the longest: fold once.
			if cap(*buf) < n {
				*buf = make([]byte, 0, max(n, 64))
			}
			f = foldBytes((*buf)[:0], t[:n])
			*buf = f
		}
		word, ok := b.set[string(f[:n])]
		if ok && (!word || wholeWord(text, i, n)) {
			return n
		}
	}
	return 0
}

type credential struct{ user, password string }

// pairOf is the first two bytes of t (at least two long), folded, as one
// number.
func pairOf(t string) uint32 { return uint32(lower[t[0]])<<8 | uint32(lower[t[1]]) }

// headOf is the first headLen bytes of t (at least that long), folded, as
// one number.
func headOf(t string) uint32 {
	return uint32(lower[t[0]])<<24 | uint32(lower[t[1]])<<16 | uint32(lower[t[2]])<<8 | uint32(lower[t[3]])
}

// lower maps each byte to its ASCII lower case.
var lower = func() (l [256]byte) {
	for i := range l {
		l[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			l[i] += 'a' - 'A'
		}
	}
	return l
}()

// foldBytes appends t, ASCII case-folded, to dst. Folding keeps every
// byte where it is, so a match in the folded text is one in the text.
func foldBytes(dst []byte, t string) []byte {
	for i := 0; i < len(t); i++ {
		dst = append(dst, lower[t[i]])
	}
	return dst
}

// fold is t ASCII case-folded.
func fold(t string) string { return string(foldBytes(make([]byte, 0, len(t)), t)) }

// wordByte reports whether c is part of a word: an ASCII letter, digit or
// underscore, or a byte of a non-ASCII character.
func wordByte(c byte) bool {
	return c >= 0x80 || c == '_' || '0' <= c && c <= '9' || 'a' <= lower[c] && lower[c] <= 'z'
}

// wholeWord reports whether text[i:i+n] is not part of a longer word: it
// does not continue a word on its left nor run on into one on its right.
func wholeWord(text string, i, n int) bool {
	if i > 0 && wordByte(text[i]) && wordByte(text[i-1]) {
		return false
	}
	e := i + n
	return e >= len(text) || !wordByte(text[e-1]) || !wordByte(text[e])
}

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
			s.vals, s.heads = map[string][]string{}, map[uint32]*bucket{}
		}
		vs := Variants(v)
		s.vals[v] = vs
		word := WholeWordSecret(v)
		for _, x := range vs {
			s.index(fold(x), word)
		}
	}
}

// index adds one folded variant to the index, unless it is there
// already. Callers hold s.mu.
func (s *Secrets) index(x string, word bool) {
	b := &s.short
	if len(x) >= headLen {
		h := headOf(x)
		b = s.heads[h]
		if b == nil {
			b = &bucket{}
			s.heads[h] = b
			if s.pairs == nil {
				s.pairs = new([1 << 16 / 64]uint64)
			}
			p := pairOf(x)
			s.pairs[p/64] |= 1 << (p % 64)
		}
	}
	if b.add(x, word) {
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

// Variants are the forms a secret value takes in text, each once (up to
// ASCII case, which Scrub ignores):
//
//   - the value, and its lower- and upper-case forms where they differ
//     beyond ASCII (a template's lower or upper filter);
//   - each of them as it appears inside what it was rendered into: as it
//     is, JSON-escaped (with and without HTML escaping: Go's encoder and
//     JavaScript's JSON.stringify, a template's dump), JSON-escaped twice
//     in any mix of the two (JSON inside a JSON string: a receiver echoing
//     a request), Go-quoted (%q, %+q) and single-quoted for a shell;
//   - each of those as it appears in what echoed it: as it is,
//     HTML-escaped (Go's html escaping and a template's escape filter),
//     URL-escaped (query, path, and JavaScript's encodeURIComponent, a
//     template's urlencode);
//   - base64 (standard and URL alphabets, unpadded) of the value.
func Variants(v string) []string {
	if v == "" {
		return nil
	}
	var out []string
	seen := map[string]bool{} // folded forms
	add := func(x string) {
		if k := fold(x); x != "" && !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	for _, c := range caseForms(v) {
		if plain(c) {
			// Every escaping leaves c as it is.
			add(c)
			continue
		}
		for _, in := range renderedForms(c) {
			for _, echo := range echoes {
				add(echo(in))
			}
		}
	}
	add(base64.RawStdEncoding.EncodeToString([]byte(v)))
	add(base64.RawURLEncoding.EncodeToString([]byte(v)))
	return out
}

// caseForms are v and its Unicode lower- and upper-case forms, where they
// differ from v beyond ASCII case (which the scan folds itself).
func caseForms(v string) []string {
	out := []string{v}
	if ascii(v) {
		return out
	}
	for _, c := range []string{strings.ToLower(v), strings.ToUpper(v)} {
		if fold(c) != fold(v) && (len(out) == 1 || fold(c) != fold(out[1])) {
			out = append(out, c)
		}
	}
	return out
}

func ascii(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return false
		}
	}
	return true
}

// renderedForms are v as it appears inside what it was rendered into:
// itself, JSON-escaped once and twice, Go-quoted and shell-quoted.
func renderedForms(v string) []string {
	if renderedAsIs(v) {
		return []string{v}
	}
	ja, jb := jsonInner(v, true), jsonInner(v, false)
	forms := []string{v, ja, jb,
		jsonInner(ja, true), jsonInner(ja, false), jsonInner(jb, true), jsonInner(jb, false),
		strings.Trim(strconv.Quote(v), `"`), strings.Trim(strconv.QuoteToASCII(v), `"`),
		strings.ReplaceAll(v, "'", `'\''`)}
	slices.Sort(forms)
	return slices.Compact(forms)
}

// renderedAsIs reports whether JSON (with or without HTML escaping), Go
// and shell quoting all leave v as it is: printable ASCII without quotes,
// backslashes or HTML's specials (base64 and most generated passwords).
func renderedAsIs(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || strings.IndexByte("\"\\<>&'", c) >= 0 {
			return false
		}
	}
	return true
}

// echoes are what a text goes through when a system echoes it: nothing,
// HTML escaping, URL escaping.
var echoes = []func(string) string{
	func(s string) string { return s },
	html.EscapeString,
	templateEscaper.Replace,
	url.QueryEscape,
	url.PathEscape,
	encodeURIComponent,
}

// templateEscaper is a template's HTML escape filter (Nunjucks's, and
// Jinja's but for the backslash).
var templateEscaper = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "'", "&#39;", "<", "&lt;", ">", "&gt;", `\`, "&#92;")

// encodeURIComponent is JavaScript's: every byte but letters, digits and
// -_.!~*'() percent-encoded.
func encodeURIComponent(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= lower[c] && lower[c] <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// plain reports whether v is made only of characters no escaping
// changes: JSON (with or without HTML escaping), Go quoting, shell
// quoting, URL query, path and component escaping and HTML escaping all
// leave it as it is.
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
// replaced by Redacted. It scans text once, ASCII case-insensitively: at
// each position the longest variant that starts there is replaced, and the
// scan goes on after it. A variant of a value WholeWordSecret calls short
// (fewer than MinSecretLen characters, or a published factory default) is
// replaced only as a whole word: not where it continues a word on its left
// or runs on into one on its right.
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
	var buf []byte // folded text at a head that hit, allocated on the first
	done := 0      // text[:done] is written to b (or needs no change)
	for i := 0; i < len(text); {
		n := s.matchAt(text, i, &buf)
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

// matchAt returns the length of the longest variant text[i:] starts with,
// 0 when none. Callers hold s.mu for reading.
func (s *Secrets) matchAt(text string, i int, buf *[]byte) int {
	t := text[i:]
	if len(t) >= headLen {
		if p := pairOf(t); s.pairs == nil || s.pairs[p/64]&(1<<(p%64)) == 0 {
			// no head starts with these two bytes
		} else if b := s.heads[headOf(t)]; b != nil {
			if n := b.match(text, i, buf); n > 0 {
				return n
			}
		}
	}
	if len(s.short.lens) == 0 {
		return 0
	}
	return s.short.match(text, i, buf)
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

// Failure returns f with its message, detail and cause scrubbed (f
// itself when none carries a secret).
func (s *Secrets) Failure(f *Failure) *Failure {
	if f == nil || s.Len() == 0 {
		return f
	}
	msg, detail := s.Scrub(f.Message), s.Scrub(f.Detail)
	cause := s.Err(f.Cause)
	if msg == f.Message && detail == f.Detail && cause == f.Cause {
		return f
	}
	c := *f
	c.Message, c.Detail, c.Cause = msg, detail, cause
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
