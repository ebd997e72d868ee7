package ironic_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hostforge/hostforge"
	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/internal/realdata"
)

// fuzzSecret is registered in the client's set; a document that quotes it
// must never hand it on.
const fuzzSecret = "Fz-Secret-9q"

// FuzzIronicDocuments feeds whatever Ironic might answer — a node, a node
// list, ports, an inventory, an error body, with any status — through the
// adapter's reads. Whatever the bytes, a read returns a value or an error
// of one of hostforge's system kinds (never a panic, never an unclassified
// error), and a registered secret quoted anywhere in the document reaches
// neither the node's text fields nor the error.
func FuzzIronicDocuments(f *testing.F) {
	for _, name := range []string{"node-show-response.json", "nodes-list-details-response.json", "node-port-list-response.json", "port-list-detail-response.json", "node-create-response.json"} {
		f.Add(realdata.Read(f, "ironic", "api-ref", name), uint16(200))
	}
	f.Add([]byte(`{"uuid":"u","last_error":"Invalid driver_info: {\"redfish_password\": \"`+fuzzSecret+`\"}","maintenance_reason":"`+fuzzSecret+`"}`), uint16(200))
	f.Add([]byte(`{"error_message": "{\"faultstring\": \"Invalid driver_info `+fuzzSecret+`\", \"faultcode\": \"Client\"}"}`), uint16(400))
	f.Add([]byte(`{"error_message": "{\"title\": \"Conflict\", \"description\": \"Node is locked by host conductor-1\"}"}`), uint16(409))
	f.Add([]byte(`<html>503 Service Unavailable</html>`), uint16(503))
	f.Add([]byte(`{"nodes": [{"uuid": 7}], "next": "http://evil/v1/nodes?marker=x"}`), uint16(200))
	f.Fuzz(fuzzOne)
}

func fuzzOne(t *testing.T, body []byte, status uint16) {
	code := int(status)%500 + 100 // 100..599
	if code < 200 {
		code = 200
	}
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.TrimSuffix(r.URL.Path, "/") == "/v1" {
			_, _ = w.Write([]byte(`{"version": {"version": "1.87", "min_version": "1.1"}}`))
			return
		}
		// A list's "next" link is followed at most a few times: a
		// document that points at itself must not loop forever.
		if served.Add(1) > 20 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(code)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	sec := hostforge.NewSecrets(fuzzSecret)
	ctx := context.Background()
	c, err := adapter.New(ctx, adapter.Config{Endpoint: srv.URL, Secrets: sec})
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	check := func(what string, err error, texts ...string) {
		t.Helper()
		if err != nil {
			if !systemKind(err) {
				t.Fatalf("%s: an error of no system kind: %v", what, err)
			}
			texts = append(texts, err.Error())
		}
		for _, s := range texts {
			if strings.Contains(s, fuzzSecret) {
				t.Fatalf("%s: the registered secret reached %q", what, s)
			}
		}
	}
	n, err := c.GetNode(ctx, "n1")
	check("GetNode", err, n.LastError, n.MaintenanceReason)
	nodes, err := c.ListNodes(ctx)
	var texts []string
	for _, n := range nodes {
		texts = append(texts, n.LastError, n.MaintenanceReason)
	}
	check("ListNodes", err, texts...)
	_, err = c.ListPorts(ctx, "u-1")
	check("ListPorts", err)
	_, err = c.Inventory(ctx, "n1")
	check("Inventory", err)
}

// systemKind reports whether err is one a consuming phase can classify.
func systemKind(err error) bool {
	if _, ok := hostforge.AsFailure(err); ok {
		return true
	}
	for _, k := range []error{hostforge.ErrNotFound, hostforge.ErrUnauthorized, hostforge.ErrUnavailable, hostforge.ErrConflict, hostforge.ErrInvalid} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
