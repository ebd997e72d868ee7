package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Calls is what one side asked of Ironic, as the counting proxy saw it.
type Calls struct {
	// Reads are GETs: polls and lookups.
	Reads int `json:"reads"`
	// Writes are every other method: creations, patches, state changes.
	Writes int `json:"writes"`
	// Locked counts 409 answers (NodeLocked and other conflicts).
	Locked int `json:"conflicts"`
	// ReadBytes are the bytes of the GETs' answer bodies: what polls and
	// lookups cost Ironic to render and the client to decode.
	ReadBytes int64 `json:"read_bytes"`
	// ByRoute counts calls per "METHOD /v1/path" with UUIDs and names
	// folded to {id}, for the report's detail.
	ByRoute map[string]int `json:"by_route"`
}

// Total is every call.
func (c Calls) Total() int { return c.Reads + c.Writes }

// counter is a concurrency-safe Calls.
type counter struct {
	mu sync.Mutex
	c  Calls
}

func (k *counter) add(method, path string, status int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.c.ByRoute == nil {
		k.c.ByRoute = map[string]int{}
	}
	if method == http.MethodGet {
		k.c.Reads++
	} else {
		k.c.Writes++
	}
	if status == http.StatusConflict {
		k.c.Locked++
	}
	k.c.ByRoute[method+" "+route(path)]++
}

func (k *counter) addReadBytes(n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.c.ReadBytes += int64(n)
}

// take returns the counts so far and starts again from zero.
func (k *counter) take() Calls {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.c
	k.c = Calls{}
	return c
}

// route folds a path's identifiers: /v1/nodes/<uuid>/states/power →
// /v1/nodes/{id}/states/power. The first segment after a collection name is
// an identifier unless it is a known sub-collection ("detail").
func route(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	collections := map[string]bool{"nodes": true, "ports": true, "portgroups": true}
	for i := 1; i < len(parts); i++ {
		if collections[parts[i-1]] && parts[i] != "detail" {
			parts[i] = "{id}"
		}
	}
	return "/" + strings.Join(parts, "/")
}

// countingTransport counts each round trip by method, route and status.
type countingTransport struct {
	next  http.RoundTripper
	k     *counter
	trace *tracer
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	started := time.Now()
	resp, err := t.next.RoundTrip(r)
	t.trace.record(r, resp, started)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	t.k.add(r.Method, r.URL.Path, status)
	if resp != nil && r.Method == http.MethodGet {
		resp.Body = &countingBody{ReadCloser: resp.Body, k: t.k}
	}
	return resp, err
}

// countingBody counts the bytes of an answer as the proxy relays them.
type countingBody struct {
	io.ReadCloser
	k *counter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.k.addReadBytes(n)
	return n, err
}

// proxy is a counting reverse proxy on loopback in front of Ironic: every
// side of the benchmark talks to Ironic through it, so all are counted the
// same way (openstacksdk included, which no Go RoundTripper can see).
type proxy struct {
	URL   string
	k     counter
	trace *tracer
	srv   *http.Server
	done  chan struct{}
}

// startProxy starts the proxy; a non-nil trace gets every call (-trace).
func startProxy(target string, trace *tracer) (*proxy, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil, errors.New("the Ironic URL must be absolute, e.g. http://127.0.0.1:6385")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{URL: "http://" + ln.Addr().String(), trace: trace, done: make(chan struct{})}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &countingTransport{next: tr, k: &p.k, trace: trace}
	// Ironic's version discovery answers with absolute links to itself;
	// clients that follow them (openstacksdk) must stay on the proxy.
	rp.ModifyResponse = func(r *http.Response) error {
		if r.Request.URL.Path == "/" || r.Request.URL.Path == "/v1" || r.Request.URL.Path == "/v1/" {
			return rewriteBody(r, target, p.URL)
		}
		return nil
	}
	p.srv = &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(ln)
	}()
	return p, nil
}

// Close stops the proxy and waits for its server goroutine.
func (p *proxy) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	<-p.done
}

// routes renders the per-route counts, most frequent first.
func routes(c Calls) []string {
	out := make([]string, 0, len(c.ByRoute))
	for r := range c.ByRoute {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if c.ByRoute[out[i]] != c.ByRoute[out[j]] {
			return c.ByRoute[out[i]] > c.ByRoute[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// rewriteBody replaces from with to in a response body (version documents
// carry absolute links).
func rewriteBody(r *http.Response, from, to string) error {
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return err
	}
	b = bytes.ReplaceAll(b, []byte(strings.TrimSuffix(from, "/")), []byte(to))
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Length", strconv.Itoa(len(b)))
	return nil
}
