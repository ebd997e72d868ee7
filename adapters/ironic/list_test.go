package ironic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/hostforge/hostforge"
	adapter "github.com/hostforge/hostforge/adapters/ironic"
)

// pagedIronic answers the version document and GET /v1/nodes with n nodes
// in pages of the requested limit, as Ironic does (limit, marker, next).
func pagedIronic(t *testing.T, n int, fail bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/", "/v1":
			fmt.Fprint(w, `{"version": {"version": "1.92", "min_version": "1.1"}}`)
			return
		case "/v1/nodes":
		default:
			http.NotFound(w, r)
			return
		}
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error_message": "{\"faultstring\": \"conductor down\"}"}`)
			return
		}
		if r.URL.Query().Get("fields") == "" {
			t.Errorf("list without fields: %s", r.URL)
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		start := 0
		if m := r.URL.Query().Get("marker"); m != "" {
			fmt.Sscanf(m, "uuid-%d", &start)
			start++
		}
		var page []map[string]any
		for i := start; i < n && len(page) < limit; i++ {
			page = append(page, map[string]any{"uuid": fmt.Sprintf("uuid-%d", i), "name": fmt.Sprintf("host-%d", i), "provision_state": "available"})
		}
		body := map[string]any{"nodes": page}
		if start+len(page) < n {
			body["next"] = "http://" + r.Host + "/v1/nodes?limit=" + strconv.Itoa(limit) + "&marker=" + page[len(page)-1]["uuid"].(string)
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestListNodesPages(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, 3, adapter.ListPageSize, adapter.ListPageSize*2 + 7} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			c, err := adapter.New(ctx, adapter.Config{Endpoint: pagedIronic(t, n, false).URL})
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := c.ListNodes(ctx)
			if err != nil || len(nodes) != n {
				t.Fatalf("ListNodes = %d nodes, %v; want %d", len(nodes), err, n)
			}
			for i, nd := range nodes {
				if nd.UUID != fmt.Sprintf("uuid-%d", i) || nd.Name != fmt.Sprintf("host-%d", i) {
					t.Fatalf("node %d = %+v", i, nd)
				}
			}
		})
	}
	c, err := adapter.New(ctx, adapter.Config{Endpoint: pagedIronic(t, 1, true).URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListNodes(ctx); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("a 503 listing: %v, want ErrUnavailable", err)
	}
}
