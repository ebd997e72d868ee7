package netboxhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
)

// graphql posts a query and returns the status and the raw answer.
func graphql(t *testing.T, srv *httptest.Server, auth, query string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql/", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type gqlErrors struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message   string `json:"message"`
		Path      []any  `json:"path"`
		Locations []struct {
			Line, Column int
		} `json:"locations"`
	} `json:"errors"`
}

// A device's role, device type and cable peers in one query, answered from
// the fake's state in the query's key order, ids as strings.
func TestGraphQLDevice(t *testing.T) {
	site, srv := setup(t, netboxhttp.Options{})
	host := site.AddHost(fakes.HostSpec{Name: "g1", GPUType: "GB300"})
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error { // eth0's switch port in a LAG
		sw := st.DeviceByName(host.NICs[0].Switch)
		lag := &fakes.NBInterface{ID: st.NextID, DeviceID: sw.ID, Name: "bond100", Type: "lag", Enabled: true}
		st.NextID++
		st.Interfaces[lag.ID] = lag
		for _, i := range st.DeviceInterfaces(sw.ID) {
			if i.Name == host.NICs[0].Port {
				i.LAGID = lag.ID
			}
		}
		return nil
	})
	want, err := site.NetBox.Device(context.Background(), "g1")
	if err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(`query Intent {
  # what REST's brief objects leave out
  device(id: "%d") {
    __typename name
    role { slug custom_fields }
    device_type { model custom_fields manufacturer { name } }
    interfaces {
      name
      link_peers {
        __typename
        ... on InterfaceType { id name lag { name } device { name role { slug } } }
        ... on FrontPortType { name }
      }
    }
  }
}`, want.ID)
	status, raw := graphql(t, srv, "Token "+token, q)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, raw)
	}
	if !strings.HasPrefix(raw, `{"data":{"device":{"__typename":"DeviceType","name":"g1","role":{"slug":`) {
		t.Fatalf("keys out of the query's order: %.120s", raw)
	}
	var ans struct {
		Data struct {
			Device struct {
				Role struct {
					CustomFields map[string]any `json:"custom_fields"`
				} `json:"role"`
				DeviceType struct {
					Model        string         `json:"model"`
					CustomFields map[string]any `json:"custom_fields"`
					Manufacturer struct{ Name string }
				} `json:"device_type"`
				Interfaces []struct {
					Name      string `json:"name"`
					LinkPeers []struct {
						Typename string `json:"__typename"`
						ID       string `json:"id"`
						Name     string `json:"name"`
						LAG      *struct{ Name string }
						Device   *struct {
							Name string
							Role struct{ Slug string }
						}
					} `json:"link_peers"`
				} `json:"interfaces"`
			} `json:"device"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(raw), &ans); err != nil {
		t.Fatal(err)
	}
	d := ans.Data.Device
	if d.Role.CustomFields["device_class"] != want.Role.DeviceClass || d.DeviceType.CustomFields["gpu_type"] != "GB300" ||
		d.DeviceType.Model != want.DeviceType.Model || d.DeviceType.Manufacturer.Name != want.DeviceType.Manufacturer {
		t.Fatalf("role and device type: %+v", d)
	}
	if len(d.Interfaces) != len(want.Interfaces) {
		t.Fatalf("%d interfaces, want %d", len(d.Interfaces), len(want.Interfaces))
	}
	cabled, lagged := 0, 0
	for k, i := range d.Interfaces {
		w := want.Interfaces[k]
		if i.Name != w.Name {
			t.Fatalf("interface %d is %s, want %s", k, i.Name, w.Name)
		}
		if w.Peer == nil {
			if len(i.LinkPeers) != 0 {
				t.Fatalf("%s: peers %+v on an uncabled interface", i.Name, i.LinkPeers)
			}
			continue
		}
		cabled++
		p := i.LinkPeers[0]
		lag := ""
		if p.LAG != nil {
			lag = p.LAG.Name
		}
		if p.Typename != "InterfaceType" || p.Name != w.Peer.Port || p.Device == nil || p.Device.Name != w.Peer.Device ||
			p.Device.Role.Slug != w.Peer.DeviceRole || lag != w.Peer.PortLAG || p.ID == "" {
			t.Fatalf("%s: peer %+v, want %+v", i.Name, p, w.Peer)
		}
		if w.Peer.PortLAG != "" {
			lagged++
		}
	}
	if cabled == 0 || lagged != 1 {
		t.Fatalf("%d cabled interfaces, %d peers in a LAG: nothing compared", cabled, lagged)
	}
}

// What NetBox refuses, it refuses the same way: unknown fields before
// anything runs, an id that does not exist, too many aliases, a malformed
// query — each with data null and the error in errors, HTTP 200.
func TestGraphQLErrors(t *testing.T) {
	_, srv := setup(t, netboxhttp.Options{})
	aliases := "query {"
	for i := 0; i < 11; i++ {
		aliases += fmt.Sprintf(" d%d: device(id: 1) { id }", i)
	}
	aliases += " }"
	for _, tc := range []struct {
		name, query, message string
		path                 []any
	}{
		{"unknown field", `{ device(id: 1) { interfaces { mac_address } } }`, "Cannot query field 'mac_address' on type 'InterfaceType'.", nil},
		{"a union's field outside a fragment", `{ interface(id: 1) { link_peers { id } } }`, "Cannot query field 'id' on type 'LinkPeerType'.", nil},
		{"no such device", `{ device(id: 99999) { id } }`, "Device matching query does not exist.", []any{"device"}},
		{"no such role, under its alias", `{ r: device_role(id: 99999) { slug } }`, "DeviceRole matching query does not exist.", []any{"r"}},
		{"too many aliases", aliases, "11 aliases found. Allowed: 10", nil},
		{"malformed", `{ device(id: 1) { id }`, "Syntax Error: Expected Name, found <EOF>.", nil},
		{"a leaf with a selection", `{ device(id: 1) { name { x } } }`, "Field 'name' must not have a selection since it is a leaf.", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := graphql(t, srv, "Token "+token, tc.query)
			var ans gqlErrors
			if err := json.Unmarshal([]byte(raw), &ans); err != nil {
				t.Fatal(err)
			}
			if status != http.StatusOK || string(ans.Data) != "null" || len(ans.Errors) != 1 || ans.Errors[0].Message != tc.message {
				t.Fatalf("status %d, answer %s; want data null and %q", status, raw, tc.message)
			}
			if tc.path != nil && fmt.Sprint(ans.Errors[0].Path) != fmt.Sprint(tc.path) {
				t.Fatalf("error path %v, want %v", ans.Errors[0].Path, tc.path)
			}
		})
	}
}

// /graphql/ is authenticated, counted and faulted like every other
// request; with GraphQL off it is NetBox's 404.
func TestGraphQLLikeEveryRequest(t *testing.T) {
	site, srv := setup(t, netboxhttp.Options{})
	q := `{ device(id: 1) { __typename } }`
	if status, raw := graphql(t, srv, "", q); status != http.StatusForbidden {
		t.Fatalf("without a token: %d %s", status, raw)
	}
	before := site.Calls()[fakes.SysNetBox]
	graphql(t, srv, "Token "+token, q)
	if got := site.Calls()[fakes.SysNetBox].Reads - before.Reads; got != 1 {
		t.Fatalf("%d reads counted, want 1", got)
	}
	site.Inject(fakes.SysNetBox, "device", 1, hostforge.ErrUnavailable)
	if status, _ := graphql(t, srv, "Token "+token, q); status != http.StatusServiceUnavailable {
		t.Fatalf("an injected outage answered %d", status)
	}
	_, off := setup(t, netboxhttp.Options{NoGraphQL: true})
	if status, raw := graphql(t, off, "Token "+token, q); status != http.StatusNotFound || !strings.Contains(raw, "not enabled") {
		t.Fatalf("GraphQL off: %d %s", status, raw)
	}
}
