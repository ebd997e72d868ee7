package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/fakes"
)

// Ramdisk plays the Ironic Python Agent for the lab's hosts: while a host's
// node waits in "inspect wait" and ironic-inspector waits for it, it posts
// the host's inspection data (fakes.InventoryJSON: NICs with LLDP naming the
// switch ports they are really cabled to, CPUs, memory, disks, PCI) to the
// inspector's /v1/continue, as the agent booted on the host would. A host
// whose every frontend link is down posts nothing — its agent could not
// reach the inspector — so the link guard is what ends its inspection.
type Ramdisk struct {
	Site                    *fakes.Site
	IronicURL, InspectorURL string
	// Every is the polling period (500 ms).
	Every time.Duration
	// HTTP is the client (a 10 s timeout by default).
	HTTP *http.Client
	Log  *slog.Logger

	mu     sync.Mutex
	posted map[string]int
}

// Posted is how many payloads the inspector accepted for host.
func (r *Ramdisk) Posted(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.posted[host]
}

// Run polls until ctx ends.
func (r *Ramdisk) Run(ctx context.Context) {
	every := r.Every
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	if r.HTTP == nil {
		r.HTTP = &http.Client{Timeout: 10 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	defer r.HTTP.CloseIdleConnections()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		r.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once makes one pass: every waiting host of the site gets its payload.
func (r *Ramdisk) Once(ctx context.Context) {
	nodes, err := r.waitingNodes(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log().Debug("lab ramdisk: listing nodes in inspect wait", "error", err)
		}
		return
	}
	for _, n := range nodes {
		h, ok := r.Site.Host(n.Name)
		if !ok || allDown(h) {
			continue
		}
		if st, err := r.introspectionState(ctx, n.UUID); err != nil || st != "waiting" {
			continue
		}
		if err := r.post(ctx, h); err != nil {
			r.log().Warn("lab ramdisk: the inspector refused the inspection data", "device", h.Name, "error", err)
			continue
		}
		r.mu.Lock()
		if r.posted == nil {
			r.posted = map[string]int{}
		}
		r.posted[h.Name]++
		r.mu.Unlock()
		r.log().Info("lab ramdisk: inspection data posted", "device", h.Name, "node", n.UUID)
	}
}

func allDown(h *fakes.Host) bool {
	if len(h.NICs) == 0 {
		return false
	}
	for _, n := range h.NICs {
		if n.Link != "down" {
			return false
		}
	}
	return true
}

type nodeRef struct {
	UUID string `json:"uuid"`
	Name string `json:"name"`
}

func (r *Ramdisk) client() *http.Client {
	if r.HTTP != nil {
		return r.HTTP
	}
	return &http.Client{Timeout: 10 * time.Second}
}

func (r *Ramdisk) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

func (r *Ramdisk) waitingNodes(ctx context.Context) ([]nodeRef, error) {
	u := strings.TrimSuffix(r.IronicURL, "/") + "/v1/nodes?" + url.Values{"provision_state": {"inspect wait"}, "fields": {"uuid,name"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", ironicapi.MinMicroversion)
	var out struct {
		Nodes []nodeRef `json:"nodes"`
	}
	return out.Nodes, r.do(req, &out)
}

func (r *Ramdisk) introspectionState(ctx context.Context, uuid string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(r.InspectorURL, "/")+"/v1/introspection/"+url.PathEscape(uuid), nil)
	if err != nil {
		return "", err
	}
	var st struct {
		State string `json:"state"`
	}
	return st.State, r.do(req, &st)
}

func (r *Ramdisk) post(ctx context.Context, h *fakes.Host) error {
	body, err := Payload(h)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(r.InspectorURL, "/")+"/v1/continue", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return r.do(req, nil)
}

func (r *Ramdisk) do(req *http.Request, out any) error { return doJSON(r.client(), req, 1<<20, out) }

// doJSON sends req with c and decodes the answer's JSON body, read up to
// limit bytes, into out (nil: the body is dropped). An answer other than
// 2xx is an error naming the request, the status and the body.
func doJSON(c *http.Client, req *http.Request, limit int64, out any) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// Payload is what the agent posts to ironic-inspector for h: its inventory,
// the interface it booted from, and the collectors' data (which Ironic's
// inventory API returns as plugin_data).
func Payload(h *fakes.Host) ([]byte, error) {
	var doc struct {
		Inventory  map[string]any `json:"inventory"`
		PluginData map[string]any `json:"plugin_data"`
	}
	if err := json.Unmarshal(fakes.InventoryJSON(h), &doc); err != nil {
		return nil, err
	}
	body := map[string]any{"inventory": doc.Inventory, "error": nil}
	if len(h.NICs) > 0 {
		body["boot_interface"] = strings.ToLower(h.NICs[0].MAC)
	}
	for k, v := range doc.PluginData {
		body[k] = v
	}
	return json.Marshal(body)
}
