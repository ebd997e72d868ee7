package netbox

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
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/hostforge/hostforge"
)

// TLSUntrusted is raised when NetBox's certificate does not verify: no
// amount of retrying fixes it.
var TLSUntrusted = hostforge.Declare(hostforge.Spec{
	Code:      "NETBOX_TLS_UNTRUSTED",
	Phase:     "any",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "NetBox's TLS certificate did not verify against the configured roots: give the client NetBox's CA (Config.CACertPEM) or fix the certificate's name and chain, then rerun.",
})

// Config configures a Client. URL and Token are required.
type Config struct {
	// URL is NetBox's base URL, e.g. https://netbox.example.net (no /api).
	URL string
	// Token is the API token, sent as "Authorization: Token <token>". It is
	// never logged nor put in an error.
	Token string
	// CACertPEM, when set, are PEM CA certificates trusted in addition to the
	// system roots (an internal CA).
	CACertPEM []byte
	// InsecureSkipVerify turns TLS verification off. It is an explicit
	// opt-in for lab use and is logged at warning level on every New.
	InsecureSkipVerify bool
	// Timeout bounds one HTTP attempt (default 30s). The caller's context
	// bounds the whole call, retries included.
	Timeout time.Duration
	// RetryMax is the number of retries after the first attempt on a
	// connection error, 429, 502, 503 or 504 (default 4; negative means none).
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the exponential backoff between
	// attempts (defaults 500ms and 8s).
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxRetryAfter caps how long a Retry-After header may make the client
	// wait before one retry (default 60s).
	MaxRetryAfter time.Duration
	// PageSize is the ?limit of list requests (default 1000, NetBox's
	// default MAX_PAGE_SIZE; a server with a lower cap is followed page by page).
	PageSize int
	// Transport replaces the HTTP transport (tests); its TLS settings are
	// then the transport's own.
	Transport http.RoundTripper
	// Log receives warnings about retries and opt-ins; nil discards.
	Log *slog.Logger
	// Secrets is the process's set of secret values: the token is
	// registered in it, and NetBox's text (error details, malformed
	// answers) is scrubbed with it before it becomes an error (nil: a set of
	// the client's own).
	Secrets *hostforge.Secrets
}

// Client reads and writes NetBox over its REST API. It implements
// enrollment.NetBox and enrollment.DeviceLister and is safe for concurrent use.
type Client struct {
	base     *url.URL
	token    string
	http     *retryablehttp.Client
	pageSize int
	log      *slog.Logger
	secrets  *hostforge.Secrets
	// noGraphQL is set once NetBox has shown it serves no GraphQL API (or
	// not the query Device sends): Device then reads over REST alone.
	noGraphQL atomic.Bool
}

// New returns a client. It does not contact NetBox.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, fmt.Errorf("netbox: Config.URL is empty: %w", hostforge.ErrInvalid)
	}
	base, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("netbox: Config.URL %q is not an http(s) URL: %w", cfg.URL, hostforge.ErrInvalid)
	}
	if cfg.Token == "" {
		return nil, fmt.Errorf("netbox: Config.Token is empty: %w", hostforge.ErrInvalid)
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	switch {
	case cfg.RetryMax == 0:
		cfg.RetryMax = 4
	case cfg.RetryMax < 0:
		cfg.RetryMax = 0
	}
	if cfg.RetryWaitMin <= 0 {
		cfg.RetryWaitMin = 500 * time.Millisecond
	}
	if cfg.RetryWaitMax <= 0 {
		cfg.RetryWaitMax = 8 * time.Second
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = time.Minute
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 1000
	}
	transport := cfg.Transport
	if transport == nil {
		tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if len(cfg.CACertPEM) > 0 {
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(cfg.CACertPEM) {
				return nil, fmt.Errorf("netbox: Config.CACertPEM holds no PEM certificate: %w", hostforge.ErrInvalid)
			}
			tlsCfg.RootCAs = pool
		}
		if cfg.InsecureSkipVerify {
			log.Warn("netbox: TLS certificate verification disabled by explicit opt-in (Config.InsecureSkipVerify)", "url", base.Redacted())
			tlsCfg.InsecureSkipVerify = true // explicit opt-in, logged above
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tlsCfg
		transport = t
	}

	rc := retryablehttp.NewClient()
	rc.HTTPClient = &http.Client{Transport: transport, Timeout: cfg.Timeout}
	rc.Logger = nil
	rc.RetryMax = cfg.RetryMax
	rc.RetryWaitMin, rc.RetryWaitMax = cfg.RetryWaitMin, cfg.RetryWaitMax
	rc.CheckRetry = checkRetry
	rc.Backoff = backoff(cfg.MaxRetryAfter)
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	rc.RequestLogHook = func(_ retryablehttp.Logger, req *http.Request, attempt int) {
		if attempt > 0 {
			log.Warn("netbox: retrying request", "method", req.Method, "path", req.URL.Path, "attempt", attempt+1)
		}
	}
	sec := cfg.Secrets.OrNew()
	sec.Add(cfg.Token)
	return &Client{base: base, token: cfg.Token, http: rc, pageSize: cfg.PageSize, log: log, secrets: sec}, nil
}

// checkRetry retries connection errors (except TLS verification and other
// permanent ones, as go-retryablehttp decides) and 429/502/503/504. Other
// statuses — 500 included, which NetBox answers for a server-side bug a
// retry will not fix — are final.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, nil
	}
	return false, nil
}

// backoff honours Retry-After (seconds or an HTTP date) on any retried
// status, capped at maxAfter, and otherwise backs off exponentially.
func backoff(maxAfter time.Duration) retryablehttp.Backoff {
	return func(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
		if resp != nil {
			if v := resp.Header.Get("Retry-After"); v != "" {
				if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
					return min(time.Duration(secs)*time.Second, maxAfter)
				}
				if at, err := http.ParseTime(v); err == nil {
					return min(max(time.Until(at), 0), maxAfter)
				}
			}
		}
		return retryablehttp.DefaultBackoff(lo, hi, attempt, nil)
	}
}

// apiError is a non-2xx answer.
type apiError struct {
	method, path string
	status       int
	detail       string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("netbox: %s %s: HTTP %d: %s", e.method, e.path, e.status, e.detail)
}

// Unwrap maps NetBox's status to hostforge's system errors.
func (e *apiError) Unwrap() error {
	switch {
	case e.status == http.StatusUnauthorized, e.status == http.StatusForbidden:
		return hostforge.ErrUnauthorized
	case e.status == http.StatusNotFound:
		return hostforge.ErrNotFound
	case e.status == http.StatusConflict:
		return hostforge.ErrConflict
	case e.status == http.StatusTooManyRequests, e.status >= 500:
		return hostforge.ErrUnavailable
	default:
		return hostforge.ErrInvalid
	}
}

// errorDetail condenses NetBox's error body ({"detail": ...} or
// {"field": ["reason"]}) into one line.
func errorDetail(body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) == nil && len(m) > 0 {
		if d, ok := m["detail"].(string); ok {
			return d
		}
		b, _ := json.Marshal(m)
		return truncate(string(b))
	}
	s := strings.TrimSpace(string(body))
	if s == "" {
		return "(empty body)"
	}
	return truncate(s)
}

func truncate(s string) string {
	const limit = 300
	if len(s) > limit {
		return s[:limit] + "…"
	}
	return s
}

// do performs one API call under ctx (retries included) and decodes a 2xx
// JSON answer into out (when out is not nil). path is relative to /api/, with
// its query, or, starting with "/", to NetBox's root (/graphql/). Its error's text is scrubbed of every secret the client knows.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	return c.secrets.Err(c.call(ctx, method, path, body, out))
}

func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	u := c.base.String() + "/api/" + path
	if strings.HasPrefix(path, "/") { // outside the REST API: /graphql/
		u = c.base.String() + path
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("netbox: encoding %s %s: %w", method, path, hostforge.ErrInvalid)
		}
	}
	var reqBody any
	if payload != nil {
		reqBody = bytes.NewReader(payload)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, u, reqBody)
	if err != nil {
		return fmt.Errorf("netbox: building %s %s: %v: %w", method, path, err, hostforge.ErrInvalid)
	}
	req.Header.Set("Authorization", "Token "+c.token)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// Only the caller's context ending is a cancellation. The HTTP
		// client's own timeout (Config.Timeout) matches
		// context.DeadlineExceeded too, but means NetBox did not answer in
		// time: it is ErrUnavailable, and err is kept out of the chain (%v)
		// so nothing downstream mistakes it for a cancelled run.
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("netbox: %s %s: %w", method, path, ctxErr)
		}
		var certErr *tls.CertificateVerificationError
		var unknownAuth x509.UnknownAuthorityError
		var hostErr x509.HostnameError
		if errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) {
			return TLSUntrusted.Wrap(err, "netbox %s: certificate not trusted", c.base.Host)
		}
		return fmt.Errorf("netbox: %s %s: %v: %w", method, path, err, hostforge.ErrUnavailable)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("netbox: %s %s: reading the answer: %w", method, path, ctxErr)
		}
		return fmt.Errorf("netbox: %s %s: reading the answer: %v: %w", method, path, err, hostforge.ErrUnavailable)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &apiError{method: method, path: path, status: resp.StatusCode, detail: c.secrets.Scrub(errorDetail(data))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &decodeError{path: path, err: err}
	}
	return nil
}

// decodeError is a 2xx answer that does not have NetBox's shape.
type decodeError struct {
	path string
	err  error
}

func (e *decodeError) Error() string {
	var te *json.UnmarshalTypeError
	if errors.As(e.err, &te) {
		return fmt.Sprintf("field %s is a JSON %s, want %s (in %s)", te.Field, te.Value, te.Type, e.path)
	}
	return fmt.Sprintf("malformed answer to %s: %v", e.path, e.err)
}

func (e *decodeError) Unwrap() error { return e.err }

// page is NetBox's list envelope.
type page[T any] struct {
	Count   int     `json:"count"`
	Next    *string `json:"next"`
	Results []T     `json:"results"`
}

// list reads every page of a list endpoint. NetBox's next links are
// absolute URLs built from what NetBox believes its own address is (behind a
// TLS-terminating proxy that may be plain http), so only their query is
// used, against the configured base URL.
func list[T any](ctx context.Context, c *Client, path string, q url.Values) ([]T, error) {
	q.Set("limit", strconv.Itoa(c.pageSize))
	next := path + "?" + q.Encode()
	var out []T
	for pages := 0; next != ""; pages++ {
		var p page[T]
		if err := c.do(ctx, http.MethodGet, next, nil, &p); err != nil {
			return nil, err
		}
		out = append(out, p.Results...)
		next = ""
		if p.Next != nil && *p.Next != "" && len(p.Results) > 0 && len(out) < p.Count {
			nu, err := url.Parse(*p.Next)
			if err != nil {
				return nil, c.secrets.Err(&decodeError{path: path, err: fmt.Errorf("next link %q: %v", *p.Next, err)})
			}
			if pages > p.Count { // a server that never ends its pages
				return nil, &decodeError{path: path, err: fmt.Errorf("pagination does not end after %d pages", pages)}
			}
			next = path + "?" + nu.RawQuery
		}
	}
	return out, nil
}
