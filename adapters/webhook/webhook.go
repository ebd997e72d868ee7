package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions"
)

// Standard Webhooks headers every delivery carries.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretField is the field of the vault item a task's signingSecret names
// that holds the signing secret.
const SecretField = "password"

// Defaults.
const (
	// DefaultTimeout bounds a task whose timeout option is 0.
	DefaultTimeout = 30 * time.Second
	// MaxRecorded caps the request and response bodies kept in a
	// delivery's record.
	MaxRecorded = 2 << 10
	// drainLimit is how much of a response body is read past MaxRecorded,
	// so the connection can be reused.
	drainLimit = 256 << 10
)

// Vault holds secrets as items of named fields (adapters/vault is one).
type Vault interface {
	// Item returns the fields of the named item; hostforge.ErrNotFound
	// (wrapped) when absent.
	Item(ctx context.Context, name string) (map[string]string, error)
}

// Config is what a Runner needs from its site.
type Config struct {
	// Vault holds the signing secrets tasks name; nil fails every task
	// that names one.
	Vault Vault
	// CAPEM holds certificates trusted besides the system's roots (PEM),
	// for receivers with an internal CA.
	CAPEM []byte
	// RetryWait is the first pause between attempts of a task with retries
	// (1 s); it doubles up to RetryWaitMax (30 s). A Retry-After header
	// replaces it.
	RetryWait, RetryWaitMax time.Duration
	// MaxConnsPerHost bounds the connections kept open to one receiver
	// (32).
	MaxConnsPerHost int
	// Log receives a line per delivery and the insecureSkipVerify warnings;
	// never a body, a header value or a secret.
	Log *slog.Logger
	// Now is the clock of webhook-timestamp (time.Now when nil).
	Now func() time.Time
}

// Runner delivers ExtensionTaskWebhook tasks: it implements
// extensions.Runner. It is safe for concurrent use; connections to a
// receiver are reused across deliveries. Close releases them.
type Runner struct {
	cfg      Config
	verified *http.Transport

	insecureOnce sync.Once
	insecure     *http.Transport
}

var _ extensions.Runner = (*Runner)(nil)

// New returns a runner. A CAPEM without a certificate is refused.
func New(cfg Config) (*Runner, error) {
	if cfg.RetryWait <= 0 {
		cfg.RetryWait = time.Second
	}
	if cfg.RetryWaitMax <= 0 {
		cfg.RetryWaitMax = 30 * time.Second
	}
	if cfg.RetryWaitMax < cfg.RetryWait {
		cfg.RetryWaitMax = cfg.RetryWait
	}
	if cfg.MaxConnsPerHost <= 0 {
		cfg.MaxConnsPerHost = 32
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if len(bytes.TrimSpace(cfg.CAPEM)) > 0 && !roots.AppendCertsFromPEM(cfg.CAPEM) {
		return nil, extensions.RunnerConfigInvalid.New("the webhook CA bundle holds no PEM certificate")
	}
	r := &Runner{cfg: cfg}
	r.verified = r.transport(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
	return r, nil
}

func (r *Runner) transport(tc *tls.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tc
	t.MaxIdleConnsPerHost = r.cfg.MaxConnsPerHost
	t.MaxConnsPerHost = r.cfg.MaxConnsPerHost
	t.Proxy = http.ProxyFromEnvironment
	return t
}

// insecureTransport is the transport of tasks with insecureSkipVerify,
// built on first use.
func (r *Runner) insecureTransport() *http.Transport {
	r.insecureOnce.Do(func() {
		r.insecure = r.transport(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // the task's explicit, logged opt-in
	})
	return r.insecure
}

// Close closes the idle connections the runner keeps.
func (r *Runner) Close() {
	r.verified.CloseIdleConnections()
	if r.insecure != nil {
		r.insecure.CloseIdleConnections()
	}
}

// Run makes one delivery of a webhook task: the rendered body sent with
// the task's method and headers to its endpoint, with the Standard
// Webhooks headers, retried as the task allows within its timeout.
func (r *Runner) Run(ctx context.Context, req extensions.Request) (extensions.Result, error) {
	o := req.Webhook
	if o == nil {
		return extensions.Result{}, extensions.TaskFailed.New("extension %s task %s is not a webhook task (%s)", req.Extension, req.Task, req.TaskType)
	}
	d := &delivery{r: r, req: req, o: o, method: strings.ToUpper(o.Method), endpoint: RedactURL(o.Endpoint)}
	return d.run(ctx)
}

// delivery is one task's delivery and its attempts.
type delivery struct {
	r        *Runner
	req      extensions.Request
	o        *extensions.WebhookOptions
	method   string
	endpoint string // without credentials or query, for messages

	deadline time.Time
	limit    string // what the deadline is, for messages
	secrets  []string

	mu       sync.Mutex
	attempts int
	// tooLate is the wait a receiver asked for that would end past the
	// deadline; the delivery then stops retrying.
	tooLate time.Duration
	wait    time.Duration
}

func (d *delivery) run(ctx context.Context) (extensions.Result, error) {
	r := d.r
	timeout := DefaultTimeout
	if d.o.Timeout > 0 {
		timeout = time.Duration(d.o.Timeout) * time.Second
	}
	now := time.Now()
	d.deadline, d.limit = now.Add(timeout), "its timeout of "+timeout.String()
	if !d.req.Deadline.IsZero() && d.req.Deadline.Before(d.deadline) {
		d.deadline, d.limit = d.req.Deadline, "the event's stage deadline"
	}
	if !d.deadline.After(now) {
		return extensions.Result{}, extensions.TaskTimeout.New("%s %s was not sent: %s had passed", d.method, d.endpoint, d.limit)
	}
	d.secrets = headerSecrets(d.o.Headers)
	key, err := r.signingKey(ctx, d.o.SigningSecret, &d.secrets)
	if err != nil {
		return extensions.Result{}, err
	}
	tctx, cancel := context.WithDeadline(ctx, d.deadline)
	defer cancel()

	var body []byte
	if d.req.Body != "" {
		body = []byte(d.req.Body)
	}
	hreq, err := retryablehttp.NewRequestWithContext(tctx, d.method, d.o.Endpoint, body)
	if err != nil {
		return extensions.Result{}, extensions.TaskFailed.New("%s %s: the request cannot be built: %s", d.method, d.endpoint, RedactError(err, d.o.Endpoint))
	}
	for k, v := range d.o.Headers {
		hreq.Header.Set(k, v)
	}
	if hreq.Header.Get("Content-Type") == "" && len(body) > 0 {
		if json.Valid(body) {
			hreq.Header.Set("Content-Type", "application/json")
		} else {
			hreq.Header.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}
	if hreq.Header.Get("User-Agent") == "" {
		hreq.Header.Set("User-Agent", "hostforge-webhook")
	}
	// The Standard Webhooks headers win over a task header of the same name.
	hreq.Header.Set(HeaderID, d.req.DeliveryID)

	base := r.verified
	if d.o.InsecureSkipVerify {
		r.cfg.Log.Warn("webhook TLS verification is off by the task's insecureSkipVerify option",
			"extension", d.req.Extension, "task", d.req.Task, "delivery", d.req.DeliveryID, "endpoint", d.endpoint)
		base = r.insecureTransport()
	}
	client := &retryablehttp.Client{
		HTTPClient: &http.Client{
			Transport: &signer{base: base, d: d, key: key, body: body},
			// A redirect is an answer like any other: the receiver's
			// status is judged against the expected statuses.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		RetryMax:     max(d.o.Retries, 0),
		CheckRetry:   d.checkRetry,
		Backoff:      d.backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	resp, err := client.Do(hreq)
	if ctx.Err() != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return extensions.Result{}, ctx.Err()
	}
	if resp == nil {
		return extensions.Result{}, d.transportFailure(tctx, err)
	}
	respBody, cut := readAnswer(resp.Body)
	resp.Body.Close()
	return d.judge(resp, respBody, cut)
}

// signingKey reads the signing secret the task names: the item's password,
// base64-decoded after a whsec_ prefix (Standard Webhooks), else its bytes.
// A key shorter than hostforge.MinSecretLen is refused (SECRET_TOO_SHORT).
// The raw value joins secrets, to be scrubbed from what is recorded.
func (r *Runner) signingKey(ctx context.Context, item string, secrets *[]string) ([]byte, error) {
	if item == "" {
		return nil, nil
	}
	if r.cfg.Vault == nil {
		return nil, extensions.SecretUnavailable.New("signingSecret names the vault item %s, but no vault is configured (--vault, or vault.path in the config)", item)
	}
	fields, err := r.cfg.Vault.Item(ctx, item)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, hostforge.ErrNotFound) {
			return nil, extensions.SecretUnavailable.New("signingSecret: the vault has no item %s", item)
		}
		return nil, extensions.SecretUnavailable.New("signingSecret: the vault item %s cannot be read: %v", item, err)
	}
	raw := fields[SecretField]
	if raw == "" {
		return nil, extensions.SecretUnavailable.New("signingSecret: the vault item %s has no %q field", item, SecretField)
	}
	key, err := SecretKey(raw)
	if err != nil {
		return nil, extensions.SecretUnavailable.New("signingSecret: the %q field of the vault item %s: %v", SecretField, item, err)
	}
	// The site chose it: at least hostforge.MinSecretLen characters (of
	// the key, after a whsec_ prefix).
	if err := hostforge.CheckChosenSecret(fmt.Sprintf("the signing secret in the %q field of the vault item %s", SecretField, item), string(key)); err != nil {
		return nil, err
	}
	*secrets = append(*secrets, raw)
	return key, nil
}

// retryable reports whether a status is worth another attempt: 429 and
// 5xx except 501.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500 && status != http.StatusNotImplemented
}

// expected reports whether the task counts status as success.
func (d *delivery) expected(status int) bool {
	if len(d.o.ExpectedResponseStatuses) == 0 {
		return status >= 200 && status < 300
	}
	return slices.Contains(d.o.ExpectedResponseStatuses, status)
}

// checkRetry decides after each attempt: an expected status ends the
// delivery; a connection error, 429 or 5xx (but 501) is retried while the
// task has retries left and the pause (Retry-After, or the backoff) ends
// before its deadline; any other status is never retried.
func (d *delivery) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		if retry, perr := retryablehttp.ErrorPropagatedRetryPolicy(ctx, nil, err); !retry {
			return false, perr
		}
	} else if d.expected(resp.StatusCode) || !retryable(resp.StatusCode) {
		return false, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.attempts > d.o.Retries {
		return true, nil // the client stops: no retries left
	}
	wait := d.r.cfg.RetryWait << min(max(d.attempts-1, 0), 20)
	if wait > d.r.cfg.RetryWaitMax || wait <= 0 {
		wait = d.r.cfg.RetryWaitMax
	}
	if resp != nil {
		if after, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			wait = after
		}
	}
	if time.Now().Add(wait).After(d.deadline) {
		d.tooLate = wait
		return false, err
	}
	d.wait = wait
	return true, nil
}

func (d *delivery) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.wait
}

func (d *delivery) attemptsText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fmt.Sprintf("attempt %d of %d", d.attempts, d.o.Retries+1)
}

// transportFailure classifies a delivery that got no response.
func (d *delivery) transportFailure(tctx context.Context, err error) error {
	why := RedactError(err, d.o.Endpoint)
	var certErr *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	if errors.As(err, &certErr) || errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) {
		return TLSUnverified.New("%s %s: %s", d.method, d.endpoint, why)
	}
	if tctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return extensions.TaskTimeout.New("%s %s: no answer within %s (%s)", d.method, d.endpoint, d.limit, d.attemptsText())
	}
	if d.tooLate > 0 {
		return Unavailable.New("%s %s failed (%s), and the next attempt, in %s, would start past %s: %s", d.method, d.endpoint, d.attemptsText(), d.tooLate, d.limit, why)
	}
	return Unavailable.New("%s %s failed (%s): %s", d.method, d.endpoint, d.attemptsText(), why)
}

// judge turns the last response into the delivery's outcome. Its
// headline (method, endpoint, status, attempts) is the message; the
// exchange — the request body and the response body — is the record's
// detail (a Failure's Detail, which log lines leave out), each capped, or
// for a task that receives secrets each only by its digest.
func (d *delivery) judge(resp *http.Response, body []byte, cut bool) (extensions.Result, error) {
	status := resp.Status
	if status == "" {
		status = strconv.Itoa(resp.StatusCode)
	}
	ok := d.expected(resp.StatusCode)
	d.mu.Lock()
	late, attempts := d.tooLate, fmt.Sprintf("attempt %d of %d", d.attempts, d.o.Retries+1)
	d.mu.Unlock()
	var msg strings.Builder
	fmt.Fprintf(&msg, "%s %s answered %s", d.method, d.endpoint, status)
	switch {
	case ok:
	case !retryable(resp.StatusCode):
		fmt.Fprintf(&msg, ", expected %s; not retried", d.expectedText())
	case late > 0:
		fmt.Fprintf(&msg, ", expected %s; the next attempt, in %s, would start past %s", d.expectedText(), late, d.limit)
	default:
		fmt.Fprintf(&msg, ", expected %s; no retries left (retries: %d)", d.expectedText(), d.o.Retries)
	}
	fmt.Fprintf(&msg, " (%s)", attempts)
	head, detail := msg.String(), d.exchange(body, cut)
	log := d.r.cfg.Log.With("extension", d.req.Extension, "task", d.req.Task, "delivery", d.req.DeliveryID, "endpoint", d.endpoint, "status", resp.StatusCode, "attempts", attempts)
	switch {
	case ok:
		log.Info("webhook delivered")
		if detail != "" {
			head += "\n" + detail
		}
		return extensions.Result{Message: head}, nil
	case !retryable(resp.StatusCode):
		log.Warn("webhook rejected")
		f := Rejected.New("%s", head)
		f.Detail = detail
		return extensions.Result{}, f
	}
	log.Warn("webhook receiver unavailable")
	f := Unavailable.New("%s", head)
	f.Detail = detail
	return extensions.Result{}, f
}

// exchange is what the record keeps of the request sent and the response
// body got back: each capped (the response scrubbed of the task's header
// and signing secrets), or for a task that receives secrets each only by
// its digest. cut says the response was longer than what was read.
func (d *delivery) exchange(body []byte, cut bool) string {
	secret := d.req.IncludesSecrets
	var parts []string
	if d.req.Body != "" || secret {
		parts = append(parts, "request: "+extensions.Recorded([]byte(d.req.Body), secret, capped))
	}
	if len(body) > 0 {
		resp := "response: " + extensions.Recorded(body, secret, func(b []byte) string { return scrub(capped(b), d.secrets) })
		if cut && secret {
			resp += fmt.Sprintf(" (the first %d bytes of a longer answer)", len(body))
		}
		parts = append(parts, resp)
	}
	return strings.Join(parts, "\n")
}

func (d *delivery) expectedText() string {
	if len(d.o.ExpectedResponseStatuses) == 0 {
		return "any 2xx"
	}
	s := make([]string, len(d.o.ExpectedResponseStatuses))
	for i, c := range d.o.ExpectedResponseStatuses {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ", ")
}

// signer sends each attempt with a fresh webhook-timestamp and its
// signature, and counts the attempts.
type signer struct {
	base *http.Transport
	d    *delivery
	key  []byte
	body []byte
}

func (s *signer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.d.mu.Lock()
	s.d.attempts++
	s.d.mu.Unlock()
	ts := s.d.r.cfg.Now().Unix()
	req = req.Clone(req.Context())
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	if s.key != nil {
		req.Header.Set(HeaderSignature, Sign(s.key, s.d.req.DeliveryID, ts, s.body))
	}
	return s.base.RoundTrip(req)
}

// readAnswer reads a response body, up to MaxRecorded+drainLimit bytes
// (the record keeps the first MaxRecorded; a task that receives secrets
// keeps the digest of what was read), so the connection can be reused.
// cut says there was more.
func readAnswer(rc io.Reader) (body []byte, cut bool) {
	b, _ := io.ReadAll(io.LimitReader(rc, MaxRecorded+drainLimit+1))
	if len(b) > MaxRecorded+drainLimit {
		return b[:MaxRecorded+drainLimit], true
	}
	return b, false
}

func capped(b []byte) string {
	if len(b) > MaxRecorded {
		return strings.ToValidUTF8(string(b[:MaxRecorded]), "") + "… (truncated)"
	}
	return strings.ToValidUTF8(string(b), "�")
}

// headerSecrets lists the task's credential header values (and their
// token part after a scheme such as "Bearer "), to scrub from what a
// receiver echoes.
func headerSecrets(h map[string]string) []string {
	var out []string
	for k, v := range h {
		if !extensions.CredentialHeader(k) || len(v) < 4 {
			continue
		}
		out = append(out, v)
		if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 4 {
			out = append(out, tok)
		}
	}
	return out
}

func scrub(s string, secrets []string) string {
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range sorted {
		s = strings.ReplaceAll(s, sec, "[redacted]")
	}
	return s
}

// RedactURL renders an endpoint without its user information and query,
// which may carry credentials: scheme://host/path (a query shows as "?…").
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(an unparseable URL)"
	}
	out := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.RawQuery != "" {
		out += "?…"
	}
	return out
}

// RedactError renders a client error without the request URL it quotes
// (net/http quotes it whole, query included).
func RedactError(err error, endpoint string) string {
	if err == nil {
		return ""
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne *net.OpError
	msg := err.Error()
	if errors.As(err, &ne) && ne.Err != nil {
		msg = ne.Op + ": " + ne.Err.Error()
	}
	msg = strings.ReplaceAll(msg, endpoint, RedactURL(endpoint))
	if u, perr := url.Parse(endpoint); perr == nil && u.RawQuery != "" {
		msg = strings.ReplaceAll(msg, u.RawQuery, "…")
	}
	return msg
}
