package netbox_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/intent"
)

// One host's intent, custom fields of its device type and role and its
// cable peers' LAGs and roles included, costs at most four requests, the
// same with 2 and with 32 interfaces: list endpoints with filters and one
// GraphQL query, never one request per interface.
func TestDeviceRequestCount(t *testing.T) {
	counts := map[int]int{}
	for _, nics := range []int{2, 32} {
		site := fakes.NewSite()
		site.AddHost(fakes.HostSpec{Name: "h1", NICs: nics, GPUType: "GB300"})
		c, emu := serve(t, site, netboxhttp.Options{}, netbox.Config{})
		d, err := c.Device(context.Background(), "h1")
		if err != nil {
			t.Fatal(err)
		}
		if got := len(d.Interfaces); got != nics+2 {
			t.Fatalf("%d interfaces read, want %d", got, nics+2)
		}
		want, err := site.NetBox.Device(context.Background(), "h1")
		if err != nil {
			t.Fatal(err)
		}
		if d.DeviceType.GPUType != "GB300" || d.Role.DeviceClass == "" || d.Role.DeviceClass != want.Role.DeviceClass {
			t.Fatalf("custom fields: gpu_type %q, device_class %q (want GB300, %q)", d.DeviceType.GPUType, d.Role.DeviceClass, want.Role.DeviceClass)
		}
		peers := 0
		for k, i := range d.Interfaces {
			if i.Peer != nil {
				peers++
				if w := want.Interfaces[k].Peer; w == nil || *i.Peer != *w || i.Peer.DeviceRole == "" {
					t.Fatalf("%s: peer %+v, want %+v", i.Name, i.Peer, w)
				}
			}
		}
		if peers != nics {
			t.Fatalf("%d cabled interfaces read, want %d", peers, nics)
		}
		counts[nics] = len(emu.Requests())
		t.Logf("%d NICs: %d requests: %v", nics, counts[nics], emu.Requests())
	}
	if counts[2] != counts[32] {
		t.Errorf("requests: %d for 2 interfaces, %d for 32; want equal", counts[2], counts[32])
	}
	if counts[2] > 4 || counts[32] > 4 {
		t.Errorf("requests per host = %d and %d, want at most 4", counts[2], counts[32])
	}
}

// A NetBox that serves no GraphQL API (GRAPHQL_ENABLED off: 404) is read
// over REST alone — the same intent in six requests — and the client
// remembers it: the next host costs no refused GraphQL request.
func TestDeviceWithoutGraphQL(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1", GPUType: "GB300"})
	site.AddHost(fakes.HostSpec{Name: "h2"})
	c, emu := serve(t, site, netboxhttp.Options{NoGraphQL: true}, netbox.Config{})
	for k, name := range []string{"h1", "h2"} {
		emu.ResetRequests()
		d, err := c.Device(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := site.NetBox.Device(context.Background(), name)
		if !reflect.DeepEqual(d, want) {
			t.Fatalf("%s over REST:\n%+v\nwant\n%+v", name, d, want)
		}
		graphql := 0
		for _, r := range emu.Requests() {
			if strings.HasPrefix(r, "POST /graphql/") {
				graphql++
			}
		}
		if wantGQL := 1 - k; graphql != wantGQL || len(emu.Requests()) != 6+wantGQL {
			t.Fatalf("%s: requests %v, want 6 REST reads and %d GraphQL", name, emu.Requests(), wantGQL)
		}
	}
}

// An answer with errors: a schema that does not take the query is read
// over REST from then on, a passing error only for that read, and a device
// deleted between the requests is not found.
func TestDeviceGraphQLErrors(t *testing.T) {
	for _, tc := range []struct {
		name, message string
		again         bool // the next read tries GraphQL again
		notFound      bool
	}{
		{"schema", "Cannot query field 'link_peers' on type 'InterfaceType'.", false, false},
		{"passing", "connection to server at \"db\" failed", true, false},
		{"deleted", "Device matching query does not exist.", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := fakes.NewSite()
			site.AddHost(fakes.HostSpec{Name: "h1", GPUType: "GB300"})
			emu := netboxhttp.New(site.NetBox, netboxhttp.Options{Token: token})
			gql := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/graphql/" {
					gql++
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"data": null, "errors": [{"message": %q, "locations": [{"line": 1, "column": 9}]}]}`, tc.message)
					return
				}
				emu.ServeHTTP(w, r)
			}))
			defer srv.Close()
			c, err := netbox.New(netbox.Config{URL: srv.URL, Token: token})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				d, err := c.Device(context.Background(), "h1")
				if tc.notFound {
					if !errors.Is(err, hostforge.ErrNotFound) {
						t.Fatalf("Device = %v, want ErrNotFound", err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if d.DeviceType.GPUType != "GB300" || d.Role.DeviceClass == "" {
					t.Fatalf("read over REST without its custom fields: %+v", d)
				}
			}
			if want := map[bool]int{true: 2, false: 1}[tc.again]; gql != want {
				t.Fatalf("%d GraphQL requests over two reads, want %d", gql, want)
			}
		})
	}
}

func TestRetriesHonourRetryAfterThenSucceed(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	c, emu := serve(t, site, netboxhttp.Options{}, netbox.Config{RetryMax: 3, RetryWaitMin: 50 * time.Second, RetryWaitMax: 50 * time.Second})
	// Retry-After: 0 must win over the 50s backoff, or this test hangs.
	emu.FailNext(1, http.StatusTooManyRequests, "0")
	emu.FailNext(1, http.StatusServiceUnavailable, "0")
	emu.FailNext(1, http.StatusBadGateway, "0")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Device(ctx, "h1"); err != nil {
		t.Fatalf("Device after three retryable failures: %v", err)
	}
	if n := len(emu.Requests()); n != 3+3 {
		t.Errorf("%d requests, want 6 (3 + 3 retries)", n)
	}
}

func TestRetryAfterIsCapped(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	c, emu := serve(t, site, netboxhttp.Options{}, netbox.Config{RetryMax: 1, MaxRetryAfter: time.Millisecond})
	emu.FailNext(1, http.StatusServiceUnavailable, "3600")
	start := time.Now()
	if _, err := c.Device(context.Background(), "h1"); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %s: Retry-After 3600 was not capped", el)
	}
}

func TestStatusErrors(t *testing.T) {
	tests := []struct {
		status  int
		retries int
		want    error
	}{
		{http.StatusUnauthorized, 1, hostforge.ErrUnauthorized},
		{http.StatusForbidden, 1, hostforge.ErrUnauthorized},
		{http.StatusInternalServerError, 1, hostforge.ErrUnavailable}, // not retried
		{http.StatusServiceUnavailable, 3, hostforge.ErrUnavailable},  // burst past RetryMax=2
		{http.StatusGatewayTimeout, 3, hostforge.ErrUnavailable},
		{http.StatusConflict, 1, hostforge.ErrConflict},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			site := fakes.NewSite()
			site.AddHost(fakes.HostSpec{Name: "h1"})
			c, emu := serve(t, site, netboxhttp.Options{}, netbox.Config{RetryMax: 2})
			emu.FailNext(tc.retries, tc.status, "")
			_, err := c.Device(context.Background(), "h1")
			if !errors.Is(err, tc.want) {
				t.Fatalf("Device = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), `"h1"`) || !strings.Contains(err.Error(), "dcim/devices") {
				t.Errorf("error %q does not name the device and the request", err)
			}
			if got := len(emu.Requests()); got != tc.retries {
				t.Errorf("%d requests, want %d", got, tc.retries)
			}
		})
	}
}

func TestWrongTokenIsUnauthorizedAndNeverLogged(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	var logs bytes.Buffer
	const secret = "wrong-token-0000000000000000000000000000"
	c, _ := serve(t, site, netboxhttp.Options{}, netbox.Config{Token: secret, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	_, err := c.Device(context.Background(), "h1")
	if !errors.Is(err, hostforge.ErrUnauthorized) {
		t.Fatalf("Device with a wrong token = %v, want ErrUnauthorized", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
		t.Error("the token leaked into an error or a log")
	}
}

func TestTLS(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	srv := httptest.NewTLSServer(netboxhttp.New(site.NetBox, netboxhttp.Options{Token: token}))
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	t.Run("UntrustedByDefault", func(t *testing.T) {
		c, err := netbox.New(netbox.Config{URL: srv.URL, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Device(context.Background(), "h1")
		if !netbox.TLSUntrusted.Is(err) {
			t.Fatalf("Device against an unknown CA = %v, want %s", err, netbox.TLSUntrusted.Code)
		}
	})
	t.Run("CustomCA", func(t *testing.T) {
		c, err := netbox.New(netbox.Config{URL: srv.URL, Token: token, CACertPEM: caPEM})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Device(context.Background(), "h1"); err != nil {
			t.Fatalf("Device with the CA configured: %v", err)
		}
	})
	t.Run("OptInSkipIsLogged", func(t *testing.T) {
		var logs bytes.Buffer
		c, err := netbox.New(netbox.Config{URL: srv.URL, Token: token, InsecureSkipVerify: true, Log: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Device(context.Background(), "h1"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "opt-in") {
			t.Errorf("skipping verification was not logged: %q", logs.String())
		}
	})
	srv.CloseClientConnections()
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []netbox.Config{
		{Token: token},
		{URL: "ftp://netbox", Token: token},
		{URL: "https://netbox.example"},
		{URL: "https://netbox.example", Token: token, CACertPEM: []byte("not pem")},
	} {
		if _, err := netbox.New(cfg); !errors.Is(err, hostforge.ErrInvalid) {
			t.Errorf("New(%+v) = %v, want ErrInvalid", cfg, err)
		}
	}
}

// A server whose answers do not have NetBox's shape gives NETBOX_DATA_INVALID
// naming the device and the field.
func TestMalformedPayloads(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(st *fakes.NetBoxState)
		wantField string
	}{
		{"ConfigContextIsAList", func(st *fakes.NetBoxState) {}, "config_context"},
		{"PlatformClassIsANumber", func(st *fakes.NetBoxState) {
			st.DeviceByName("h1").CustomFields["platform_class"] = 42
		}, "custom_fields.platform_class"},
		{"GPUTypeIsAList", func(st *fakes.NetBoxState) {
			st.DeviceTypes[st.DeviceByName("h1").DeviceTypeID].CustomFields["gpu_type"] = []any{"GB300"}
		}, "device_type.custom_fields.gpu_type"},
		{"DeviceClassIsABool", func(st *fakes.NetBoxState) {
			st.Roles[st.DeviceByName("h1").RoleID].CustomFields["device_class"] = true
		}, "role.custom_fields.device_class"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			site := fakes.NewSite()
			site.AddHost(fakes.HostSpec{Name: "h1"})
			_ = site.NetBox.Update(func(st *fakes.NetBoxState) error { tc.mutate(st); return nil })
			handler := http.Handler(netboxhttp.New(site.NetBox, netboxhttp.Options{Token: token}))
			if tc.name == "ConfigContextIsAList" {
				handler = rewrite(handler, `"config_context":{`, `"config_context":["x"],"ignored":{`)
			}
			srv := httptest.NewServer(handler)
			defer srv.Close()
			c, err := netbox.New(netbox.Config{URL: srv.URL, Token: token})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Device(context.Background(), "h1")
			if !enrollment.DataInvalid.Is(err) {
				t.Fatalf("Device = %v, want %s", err, enrollment.DataInvalid.Code)
			}
			if msg := err.Error(); !strings.Contains(msg, "h1") || !strings.Contains(msg, tc.wantField) {
				t.Errorf("failure %q does not name device h1 and field %s", msg, tc.wantField)
			}
			srv.CloseClientConnections()
		})
	}
}

// rewrite replaces text in every answer of h.
func rewrite(h http.Handler, old, new string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write([]byte(strings.Replace(rec.Body.String(), old, new, 1)))
	})
}

// A converged host costs no write: tags already present are not re-PATCHed.
func TestAddTagsWritesNothingWhenPresent(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	c, emu := serve(t, site, netboxhttp.Options{}, netbox.Config{})
	ctx := context.Background()
	d, err := c.Device(ctx, "h1")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddTags(ctx, d.ID, intent.DefaultIronicTag); err != nil {
		t.Fatal(err)
	}
	emu.ResetRequests()
	before := site.Calls()
	if err := c.AddTags(ctx, d.ID, intent.DefaultIronicTag); err != nil {
		t.Fatal(err)
	}
	if w := site.Calls().Sub(before).Writes(); w != 0 {
		t.Errorf("re-adding a present tag made %d writes: %v", w, emu.Requests())
	}
}
