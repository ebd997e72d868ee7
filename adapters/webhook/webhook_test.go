package webhook_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/webhook"
	"github.com/hostforge/hostforge/extensions"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// verify is the receiver's own Standard Webhooks check, written from the
// specification and independent of the runner's Sign: the secret after
// whsec_ is base64, the signed content is "id.timestamp.body", the header
// lists space-separated "v1,<base64 HMAC-SHA256>" signatures.
func verify(secret string, h http.Header, body []byte) error {
	key := []byte(secret)
	if strings.HasPrefix(secret, "whsec_") {
		var err error
		if key, err = base64.StdEncoding.DecodeString(secret[len("whsec_"):]); err != nil {
			return err
		}
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("missing headers: id %q timestamp %q signature %q", id, ts, sigs)
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(n, 0)).Abs() > 5*time.Minute {
		return fmt.Errorf("timestamp %q is not within 5 minutes of now", ts)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", id, ts, body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		v, b64, ok := strings.Cut(s, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if ok && v == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no valid v1 signature in %q", sigs)
}

// hit is one request a receiver got.
type hit struct {
	method string
	header http.Header
	body   []byte
	at     time.Time
}

// receiver answers each request with the next scripted response (the last
// one repeats) and records what it got.
type receiver struct {
	mu      sync.Mutex
	hits    []hit
	answers []func(w http.ResponseWriter, r *http.Request)
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.hits = append(rc.hits, hit{r.Method, r.Header.Clone(), b, time.Now()})
	n := len(rc.hits)
	answer := rc.answers[min(n, len(rc.answers))-1]
	rc.mu.Unlock()
	answer(w, r)
}

func (rc *receiver) got() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

func status(code int, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d", code)
	}
}

type memVault map[string]map[string]string

func (v memVault) Item(_ context.Context, name string) (map[string]string, error) {
	it, ok := v[name]
	if !ok {
		return nil, fmt.Errorf("item %s: %w", name, hostforge.ErrNotFound)
	}
	out := map[string]string{}
	for k, x := range it {
		out[k] = x
	}
	return out, nil
}

const whsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func newRunner(t *testing.T, cfg webhook.Config) *webhook.Runner {
	t.Helper()
	if cfg.Vault == nil {
		cfg.Vault = memVault{"hook-signing": {"password": whsec}, "raw-signing": {"password": "plain-text-secret"}}
	}
	if cfg.RetryWait == 0 {
		cfg.RetryWait = time.Millisecond
	}
	r, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func request(endpoint string, o extensions.WebhookOptions) extensions.Request {
	o.Endpoint = endpoint
	if o.Method == "" {
		o.Method = "post"
	}
	return extensions.Request{
		DeliveryID: extensions.DeliveryID("evt-1", "notify", "hook"), EventID: "evt-1", Stage: extensions.ServerRegisteredStage,
		Extension: "notify", Task: "hook", TaskType: extensions.TaskWebhook, Webhook: &o,
		Body: `{"serial": "6SBT0R3"}`,
	}
}

func start(t *testing.T, answers ...func(http.ResponseWriter, *http.Request)) (*receiver, *httptest.Server) {
	t.Helper()
	rc := &receiver{answers: answers}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv
}

func TestDeliverySignedWithStandardWebhooksHeaders(t *testing.T) {
	for _, secret := range []struct{ item, value string }{{"hook-signing", whsec}, {"raw-signing", "plain-text-secret"}} {
		t.Run(secret.item, func(t *testing.T) {
			rc, srv := start(t, status(204))
			r := newRunner(t, webhook.Config{})
			req := request(srv.URL+"/hooks/enrolled", extensions.WebhookOptions{SigningSecret: secret.item, Headers: map[string]string{"X-Team": "infra", "webhook-id": "spoofed"}})
			res, err := r.Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			hits := rc.got()
			if len(hits) != 1 {
				t.Fatalf("%d requests, want 1", len(hits))
			}
			h := hits[0]
			if err := verify(secret.value, h.header, h.body); err != nil {
				t.Errorf("the receiver's own check fails: %v", err)
			}
			checks := map[string][2]string{
				"method":       {h.method, "POST"},
				"body":         {string(h.body), req.Body},
				"webhook-id":   {h.header.Get("webhook-id"), req.DeliveryID},
				"content-type": {h.header.Get("Content-Type"), "application/json"},
				"task header":  {h.header.Get("X-Team"), "infra"},
			}
			for what, c := range checks {
				if c[0] != c[1] {
					t.Errorf("%s = %q, want %q", what, c[0], c[1])
				}
			}
			if !strings.Contains(res.Message, "answered 204 No Content (attempt 1 of 1)") || !strings.Contains(res.Message, `request: {"serial": "6SBT0R3"}`) {
				t.Errorf("message %q", res.Message)
			}
		})
	}
}

func TestUnsignedDeliveryStillCarriesIDAndTimestamp(t *testing.T) {
	rc, srv := start(t, status(200))
	r := newRunner(t, webhook.Config{})
	if _, err := r.Run(context.Background(), request(srv.URL, extensions.WebhookOptions{Method: "PUT"})); err != nil {
		t.Fatal(err)
	}
	h := rc.got()[0].header
	if h.Get("webhook-id") == "" || h.Get("webhook-timestamp") == "" || h.Get("webhook-signature") != "" {
		t.Errorf("headers %v: want an ID and a timestamp, and no signature without signingSecret", h)
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name     string
		retries  int
		expected []int
		answers  []func(http.ResponseWriter, *http.Request)
		code     string
		hits     int
		message  string
	}{
		{"5xx then success", 3, nil, []func(http.ResponseWriter, *http.Request){status(503), status(502), status(200)}, "", 3, "attempt 3 of 4"},
		{"429 then success", 1, nil, []func(http.ResponseWriter, *http.Request){status(429, "Retry-After", "0"), status(201)}, "", 2, "201 Created (attempt 2 of 2)"},
		{"retries run out", 2, nil, []func(http.ResponseWriter, *http.Request){status(500)}, webhook.Unavailable.Code, 3, "no retries left (retries: 2)"},
		{"no retries by default", 0, nil, []func(http.ResponseWriter, *http.Request){status(503)}, webhook.Unavailable.Code, 1, "attempt 1 of 1"},
		{"an unexpected 4xx is never retried", 3, nil, []func(http.ResponseWriter, *http.Request){status(404)}, webhook.Rejected.Code, 1, "404 Not Found, expected any 2xx; not retried"},
		{"501 is never retried", 3, nil, []func(http.ResponseWriter, *http.Request){status(501)}, webhook.Rejected.Code, 1, "not retried"},
		{"an unexpected 2xx is never retried", 3, []int{201}, []func(http.ResponseWriter, *http.Request){status(200)}, webhook.Rejected.Code, 1, "expected 201; not retried"},
		{"a redirect is an answer", 3, nil, []func(http.ResponseWriter, *http.Request){status(302, "Location", "/elsewhere")}, webhook.Rejected.Code, 1, "302 Found"},
		{"an expected 5xx is success", 3, []int{200, 503}, []func(http.ResponseWriter, *http.Request){status(503)}, "", 1, "503"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc, srv := start(t, tc.answers...)
			r := newRunner(t, webhook.Config{})
			req := request(srv.URL, extensions.WebhookOptions{Retries: tc.retries, ExpectedResponseStatuses: tc.expected, SigningSecret: "hook-signing"})
			res, err := r.Run(context.Background(), req)
			if got := hostforge.CodeOf(err); got != tc.code {
				t.Fatalf("error %v, want code %q", err, tc.code)
			}
			hits := rc.got()
			if len(hits) != tc.hits {
				t.Fatalf("%d attempts reached the receiver, want %d", len(hits), tc.hits)
			}
			for i, h := range hits {
				if h.header.Get("webhook-id") != req.DeliveryID {
					t.Errorf("attempt %d: webhook-id %q, want the delivery ID on every attempt", i+1, h.header.Get("webhook-id"))
				}
				if err := verify(whsec, h.header, h.body); err != nil {
					t.Errorf("attempt %d: %v", i+1, err)
				}
			}
			msg := res.Message
			if err != nil {
				msg = err.Error()
			}
			if !strings.Contains(msg, tc.message) {
				t.Errorf("message %q lacks %q", msg, tc.message)
			}
		})
	}
}

func TestRetryAfterIsHonouredWithinTheDeadline(t *testing.T) {
	t.Run("honoured", func(t *testing.T) {
		rc, srv := start(t, status(503, "Retry-After", "1"), status(200))
		r := newRunner(t, webhook.Config{})
		if _, err := r.Run(context.Background(), request(srv.URL, extensions.WebhookOptions{Retries: 1, Timeout: 10})); err != nil {
			t.Fatal(err)
		}
		hits := rc.got()
		if len(hits) != 2 || hits[1].at.Sub(hits[0].at) < time.Second {
			t.Fatalf("%d attempts, the second %s after the first: want it after Retry-After (1s)", len(hits), hits[len(hits)-1].at.Sub(hits[0].at))
		}
	})
	t.Run("past the deadline", func(t *testing.T) {
		rc, srv := start(t, status(429, "Retry-After", "120"), status(200))
		r := newRunner(t, webhook.Config{})
		begin := time.Now()
		_, err := r.Run(context.Background(), request(srv.URL, extensions.WebhookOptions{Retries: 3, Timeout: 5}))
		if !webhook.Unavailable.Is(err) || !strings.Contains(err.Error(), "the next attempt, in 2m0s, would start past its timeout of 5s") {
			t.Fatalf("error %v", err)
		}
		if len(rc.got()) != 1 || time.Since(begin) > 2*time.Second {
			t.Errorf("%d attempts in %s: a wait past the deadline is not started", len(rc.got()), time.Since(begin))
		}
	})
}

func TestConnectionErrorsAreRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := newRunner(t, webhook.Config{})
	_, err = r.Run(context.Background(), request("http://"+addr+"/hook?token=sekrit-token", extensions.WebhookOptions{Retries: 2}))
	if !webhook.Unavailable.Is(err) || !strings.Contains(err.Error(), "attempt 3 of 3") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("error %v, want %s after 3 attempts", err, webhook.Unavailable.Code)
	}
	if strings.Contains(err.Error(), "sekrit-token") {
		t.Errorf("the endpoint's query reached the message: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	stall := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	t.Run("task timeout", func(t *testing.T) {
		_, srv := start(t, stall)
		r := newRunner(t, webhook.Config{})
		begin := time.Now()
		_, err := r.Run(context.Background(), request(srv.URL, extensions.WebhookOptions{Timeout: 1, Retries: 3}))
		if !extensions.TaskTimeout.Is(err) || !strings.Contains(err.Error(), "no answer within its timeout of 1s") {
			t.Fatalf("error %v", err)
		}
		if d := time.Since(begin); d < time.Second || d > 3*time.Second {
			t.Errorf("took %s, want the 1s timeout", d)
		}
	})
	t.Run("stage deadline first", func(t *testing.T) {
		_, srv := start(t, stall)
		r := newRunner(t, webhook.Config{})
		req := request(srv.URL, extensions.WebhookOptions{Timeout: 30})
		req.Deadline = time.Now().Add(300 * time.Millisecond)
		_, err := r.Run(context.Background(), req)
		if !extensions.TaskTimeout.Is(err) || !strings.Contains(err.Error(), "the event's stage deadline") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		_, srv := start(t, stall)
		r := newRunner(t, webhook.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := r.Run(ctx, request(srv.URL, extensions.WebhookOptions{}))
		if _, f, _ := hostforge.Classify(err); f.Code != hostforge.Cancelled.Code {
			t.Fatalf("error %v: the caller's deadline is a cancellation, not the task's failure", err)
		}
	})
}

func TestTLS(t *testing.T) {
	rc := &receiver{answers: []func(http.ResponseWriter, *http.Request){status(200)}}
	srv := httptest.NewUnstartedServer(rc)
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()                                      // a self-signed certificate for 127.0.0.1
	t.Cleanup(srv.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))

	tests := []struct {
		name     string
		ca       []byte
		insecure bool
		code     string
	}{
		{"an unknown CA is refused", nil, false, webhook.TLSUnverified.Code},
		{"the CA bundle is trusted", caPEM, false, ""},
		{"insecureSkipVerify is honoured", nil, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, webhook.Config{CAPEM: tc.ca, Log: log})
			_, err := r.Run(context.Background(), request(srv.URL, extensions.WebhookOptions{InsecureSkipVerify: tc.insecure, Retries: 2}))
			if got := hostforge.CodeOf(err); got != tc.code {
				t.Fatalf("error %v, want code %q", err, tc.code)
			}
		})
	}
	if len(rc.got()) != 2 {
		t.Errorf("%d deliveries reached the receiver, want 2 (an unverified certificate sends nothing and is not retried)", len(rc.got()))
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logs.String(), "insecureSkipVerify") || !strings.Contains(logs.String(), "task=hook") || !strings.Contains(logs.String(), "extension=notify") {
		t.Errorf("no warning naming the task for insecureSkipVerify:\n%s", logs.String())
	}
	if _, err := webhook.New(webhook.Config{CAPEM: []byte("not a certificate")}); !extensions.RunnerConfigInvalid.Is(err) {
		t.Errorf("a CA bundle without certificates: %v", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A task that receives secrets keeps of its request and of the answer
// only their SHA-256 and length; the task's header and signing secrets are
// never recorded either way.
func TestSecretsStayOutOfRecords(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "auth=%s body=%s", r.Header.Get("Authorization"), b)
	}
	srv := httptest.NewServer(http.HandlerFunc(echo))
	t.Cleanup(srv.Close)
	r := newRunner(t, webhook.Config{Vault: memVault{"hook-signing": {"password": "raw-signing-secret"}}})
	req := request(srv.URL, extensions.WebhookOptions{SigningSecret: "hook-signing", Headers: map[string]string{"Authorization": "Bearer tok-123456"}})
	req.Body = `{"secret": "raw-signing-secret"}`
	req.IncludesSecrets = true
	res, err := r.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"tok-123456", "raw-signing-secret", "auth=", "body="} {
		if strings.Contains(res.Message, leak) {
			t.Errorf("the record holds %q: %s", leak, res.Message)
		}
	}
	answer := "auth=Bearer tok-123456 body=" + req.Body
	for _, want := range []string{"request: " + extensions.Digest([]byte(req.Body)), "response: " + extensions.Digest([]byte(answer))} {
		if !strings.Contains(res.Message, want) {
			t.Errorf("the record of a task that receives secrets must name its bodies by digest (%q): %s", want, res.Message)
		}
	}
}

// A receiver that refuses a delivery and echoes the request in its error:
// the failure's Error() — what log lines and the workflow's error carry —
// holds the headline only; the record's detail holds the request and the
// answer (for a task without secrets), or their digests (with secrets).
func TestRefusedDeliveryKeepsBodiesOutOfItsError(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error": "cannot parse %s"}`, b)
	}
	srv := httptest.NewServer(http.HandlerFunc(echo))
	t.Cleanup(srv.Close)
	var logs bytes.Buffer
	r := newRunner(t, webhook.Config{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, secrets := range []bool{false, true} {
		req := request(srv.URL, extensions.WebhookOptions{})
		req.Body = `{"serial": "RENDERED-6SBT0R3"}`
		req.IncludesSecrets = secrets
		_, err := r.Run(context.Background(), req)
		f, ok := hostforge.AsFailure(err)
		if !ok || !webhook.Rejected.Is(err) {
			t.Fatalf("error %v, want %s", err, webhook.Rejected.Code)
		}
		if strings.Contains(err.Error(), "RENDERED") || !strings.Contains(err.Error(), "answered 400") {
			t.Errorf("the error carries a body: %v", err)
		}
		keeps := strings.Contains(f.Detail, "request: "+req.Body) && strings.Contains(f.Detail, "cannot parse "+req.Body)
		if secrets {
			keeps = !strings.Contains(f.Detail, "RENDERED") && strings.Contains(f.Detail, "request: "+extensions.Digest([]byte(req.Body)))
		}
		if !keeps {
			t.Errorf("secrets %v: detail %q", secrets, f.Detail)
		}
	}
	if strings.Contains(logs.String(), "RENDERED") {
		t.Errorf("a log line carries a body:\n%s", logs.String())
	}
}

// A signing secret the site chose shorter than 8 characters (of its key,
// after a whsec_ prefix) is refused before anything is sent, naming the
// vault item and never the secret.
func TestShortSigningSecretIsRefused(t *testing.T) {
	rc, srv := start(t, status(200))
	for _, secret := range []string{"short7!", "whsec_" + base64.StdEncoding.EncodeToString([]byte("seven77"))} {
		r := newRunner(t, webhook.Config{Vault: memVault{"hook-signing": {"password": secret}}})
		_, err := r.Run(context.Background(), request(srv.URL, extensions.WebhookOptions{SigningSecret: "hook-signing"}))
		if !hostforge.SecretTooShort.Is(err) || !strings.Contains(err.Error(), "hook-signing") || strings.Contains(err.Error(), "seven77") || strings.Contains(err.Error(), "short7") {
			t.Fatalf("signing secret %q: %v, want %s naming the item", secret, err, hostforge.SecretTooShort.Code)
		}
	}
	if n := len(rc.got()); n != 0 {
		t.Fatalf("%d deliveries were sent with a short signing secret", n)
	}
}

func TestSigningSecretProblems(t *testing.T) {
	_, srv := start(t, status(200))
	tests := []struct {
		name  string
		vault webhook.Vault
		item  string
		want  string
	}{
		{"missing item", memVault{}, "hook-signing", "has no item hook-signing"},
		{"no password field", memVault{"hook-signing": {"username": "x"}}, "hook-signing", `no "password" field`},
		{"bad whsec", memVault{"hook-signing": {"password": "whsec_not base64!"}}, "hook-signing", "must be base64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, webhook.Config{Vault: tc.vault})
			_, err := r.Run(context.Background(), request(srv.URL, extensions.WebhookOptions{SigningSecret: tc.item}))
			if !extensions.SecretUnavailable.Is(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %s saying %q", err, extensions.SecretUnavailable.Code, tc.want)
			}
			if strings.Contains(err.Error(), "not base64!") {
				t.Errorf("the error quotes the secret: %v", err)
			}
		})
	}
}

func TestRecordedBodiesAreCapped(t *testing.T) {
	big := strings.Repeat("x", 3*webhook.MaxRecorded)
	_, srv := start(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, big) })
	r := newRunner(t, webhook.Config{})
	req := request(srv.URL, extensions.WebhookOptions{})
	req.Body = big
	res, err := r.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Message) > 3*webhook.MaxRecorded || strings.Count(res.Message, "(truncated)") != 2 {
		t.Errorf("message of %d bytes, want both bodies capped at %d", len(res.Message), webhook.MaxRecorded)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0, true},
		{"soon", 0, false},
		{"", 0, false},
		{"99999999999", 24 * time.Hour, true},
	}
	for _, tc := range tests {
		got, ok := webhook.ParseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %s %v, want %s %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSignMatchesTheSpecificationExample(t *testing.T) {
	// The example of the Standard Webhooks specification.
	key, err := webhook.SecretKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := webhook.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}
