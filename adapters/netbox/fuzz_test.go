package netbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/internal/realdata"
)

// Fuzzing the NetBox adapter's decoding: Device reads one host's intent
// from a NetBox whose device object and interface list are arbitrary
// bytes. Whatever NetBox answers, Device returns an intent that holds
// together or an error a phase can classify — never a panic, never an
// endless walk of pages. Seeds: real NetBox answers (the pynetbox
// fixtures) and the REST emulator's own shapes.

// memTransport serves requests from a handler in memory.
type memTransport struct{ h http.Handler }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// maxFuzzRequests bounds one Device call's requests: six for the intent,
// and pages of a few hundred interfaces at most.
const maxFuzzRequests = 64

// fuzzedNetBox answers the device list with device, the interface list with
// interfaces, and the device type and role plausibly.
type fuzzedNetBox struct {
	device, interfaces []byte
	// graphql, when set, answers /graphql/ (else 404: no GraphQL API).
	graphql  []byte
	requests atomic.Int64
}

func (n *fuzzedNetBox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if n.requests.Add(1) > maxFuzzRequests {
		http.Error(w, `{"detail":"too many requests"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	q := r.URL.Query()
	switch p := r.URL.Path; {
	case p == "/graphql/" && n.graphql != nil:
		_, _ = w.Write(n.graphql)
	case p == "/api/dcim/devices/" && q.Get("name") != "":
		_, _ = io.WriteString(w, `{"count":1,"next":null,"previous":null,"results":[`+string(n.device)+`]}`)
	case p == "/api/dcim/interfaces/" && q.Get("device_id") != "":
		_, _ = w.Write(n.interfaces)
	case p == "/api/dcim/devices/" || p == "/api/dcim/interfaces/":
		_, _ = io.WriteString(w, `{"count":0,"next":null,"previous":null,"results":[]}`)
	case strings.HasPrefix(p, "/api/dcim/device-types/"):
		_, _ = io.WriteString(w, `{"id":1,"model":"m","slug":"m","custom_fields":{"gpu_type":null}}`)
	case strings.HasPrefix(p, "/api/dcim/device-roles/"):
		_, _ = io.WriteString(w, `{"id":1,"custom_fields":{"device_class":"CPU_BAREMETAL"}}`)
	default:
		http.Error(w, `{"detail":"Not found."}`, http.StatusNotFound)
	}
}

// emulatorShapes are the REST emulator's answers for one host: its device
// object and its interface list.
func emulatorShapes(t testing.TB) (device, interfaces []byte) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1", NICs: 3, GPUType: "H100", Class: intent.ClassGPUCompute})
	emu := netboxhttp.New(site.NetBox, netboxhttp.Options{})
	get := func(path string) []byte {
		rec := httptest.NewRecorder()
		emu.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("emulator %s: %d", path, rec.Code)
		}
		return rec.Body.Bytes()
	}
	var devs struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(get("/api/dcim/devices/?name=h1"), &devs); err != nil || len(devs.Results) != 1 {
		t.Fatalf("emulator device list: %v", err)
	}
	var id struct {
		ID int `json:"id"`
	}
	_ = json.Unmarshal(devs.Results[0], &id)
	return devs.Results[0], get("/api/dcim/interfaces/?device_id=" + itoa(id.ID))
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// classifiable: an error a phase turns into a Failure — a Failure already,
// or one of hostforge's system errors.
func classifiable(err error) bool {
	if _, ok := hostforge.AsFailure(err); ok {
		return true
	}
	for _, s := range []error{hostforge.ErrNotFound, hostforge.ErrUnauthorized, hostforge.ErrUnavailable, hostforge.ErrConflict, hostforge.ErrInvalid} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// emulatorGraphQL is the emulator's answer to the query Device sends for
// a cabled host, as Device sent it.
func emulatorGraphQL(t testing.TB) []byte {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1", NICs: 3, GPUType: "H100", Class: intent.ClassGPUCompute})
	emu := netboxhttp.New(site.NetBox, netboxhttp.Options{})
	var answer []byte
	rec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/graphql/" {
			emu.ServeHTTP(w, r)
			return
		}
		out := httptest.NewRecorder()
		emu.ServeHTTP(out, r)
		answer = out.Body.Bytes()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})
	c, err := netbox.New(netbox.Config{URL: "http://netbox.fuzz.invalid", Token: token, Transport: memTransport{rec}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Device(context.Background(), "h1"); err != nil || answer == nil {
		t.Fatalf("Device over the emulator: %v (GraphQL answered: %v)", err, answer != nil)
	}
	return answer
}

// FuzzNetBoxDeviceGraphQL: the device and its interfaces as the emulator
// renders them, and an arbitrary answer to the GraphQL query. Device
// returns an intent that holds together (read over REST when the answer is
// refused) or an error a phase can classify.
func FuzzNetBoxDeviceGraphQL(f *testing.F) {
	device, interfaces := emulatorShapes(f)
	f.Add(emulatorGraphQL(f))
	f.Add([]byte(`{"data":null,"errors":[{"message":"Cannot query field 'link_peers' on type 'InterfaceType'."}]}`))
	f.Add([]byte(`{"data":{"device":{"role":{"custom_fields":{"device_class":7}},"device_type":{"custom_fields":null},"interfaces":[{"link_peers":[{"__typename":"InterfaceType","id":"x"}]}]}}}`))
	f.Add([]byte(`{"data":{"device":null}}`))
	f.Fuzz(func(t *testing.T, answer []byte) {
		h := &fuzzedNetBox{device: device, interfaces: interfaces, graphql: answer}
		c, err := netbox.New(netbox.Config{URL: "http://netbox.fuzz.invalid", Token: token, Transport: memTransport{h}, RetryMax: -1, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		d, err := c.Device(ctx, "h1")
		if err != nil {
			if !classifiable(err) {
				t.Fatalf("an error no phase can classify: %v", err)
			}
			if f, ok := hostforge.AsFailure(err); ok && f.Code == hostforge.Unclassified.Code {
				t.Fatalf("UNCLASSIFIED: %v", err)
			}
			return
		}
		if d.Name != "h1" || d.ID <= 0 || len(d.Interfaces) == 0 {
			t.Fatalf("an intent without name, id or interfaces: %+v", d)
		}
		for _, i := range d.Interfaces {
			if i.Peer != nil && (i.Peer.Kind == "" || i.Peer.Port == "") {
				t.Fatalf("%s: a peer without kind or port: %+v", i.Name, i.Peer)
			}
		}
	})
}

func FuzzNetBoxDevice(f *testing.F) {
	realDevice := realdata.Read(f, "netbox", "pynetbox-legacy", "dcim", "device.json")
	realInterfaces := realdata.Read(f, "netbox", "pynetbox-legacy", "dcim", "interfaces.json")
	emuDevice, emuInterfaces := emulatorShapes(f)
	f.Add(emuDevice, emuInterfaces)
	f.Add(realDevice, realInterfaces)
	f.Add(emuDevice, realInterfaces)
	f.Add(realDevice, emuInterfaces)
	f.Add([]byte(`{"id":1,"status":{"value":"staged"},"role":{"id":2},"device_type":{"id":3},"config_context":[]}`), []byte(`{"count":1,"results":[{"id":0}]}`))
	f.Fuzz(func(t *testing.T, device, interfaces []byte) {
		h := &fuzzedNetBox{device: device, interfaces: interfaces}
		c, err := netbox.New(netbox.Config{URL: "http://netbox.fuzz.invalid", Token: token, Transport: memTransport{h}, RetryMax: -1, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		d, err := c.Device(ctx, "fz-1")
		if n := h.requests.Load(); n > maxFuzzRequests {
			t.Fatalf("one Device call made more than %d requests", maxFuzzRequests)
		}
		if err != nil {
			if !classifiable(err) {
				t.Fatalf("an error no phase can classify: %v", err)
			}
			if f, ok := hostforge.AsFailure(err); ok && f.Code == hostforge.Unclassified.Code {
				t.Fatalf("UNCLASSIFIED: %v", err)
			}
			return
		}
		if d.Name != "fz-1" || d.ID <= 0 || d.Status == "" {
			t.Fatalf("an intent without name, id or status: %+v", d)
		}
		for k, i := range d.Interfaces {
			if i.Name == "" || i.Type == "" || i.ID <= 0 {
				t.Fatalf("interface %d has no name, type or id: %+v", k, i)
			}
			if k > 0 && intent.NaturalLess(i.Name, d.Interfaces[k-1].Name) {
				t.Fatalf("interfaces out of order: %s after %s", i.Name, d.Interfaces[k-1].Name)
			}
		}
	})
}
