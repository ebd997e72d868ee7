package netboxhttp_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
)

// An event rule's webhook goes out as NetBox sends it: after the change,
// the context as the body, signed with the webhook's secret; a device
// deleted sends its last state and no postchange.
func TestEventRulesSendSignedWebhooks(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	var sigs []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies, sigs = append(bodies, b), append(sigs, r.Header.Get("X-Hook-Signature"))
		mu.Unlock()
		if r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
			t.Errorf("%s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer recv.Close()
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	clk := clock.NewFake(time.Date(2026, 3, 6, 15, 11, 23, 503186000, time.UTC))
	emu := netboxhttp.New(site.NetBox, netboxhttp.Options{Token: token, Clock: clk, Username: "ops"})
	srv := httptest.NewServer(emu)
	defer srv.Close()
	emu.AddEventRule(netboxhttp.EventRule{Name: "to-hostforge", ObjectTypes: []string{"dcim.device"},
		Events: []string{"object_updated", "object_deleted"}, PayloadURL: recv.URL + "/netbox/events", Secret: "s3cret-of-the-hook"})
	emu.AddEventRule(netboxhttp.EventRule{Name: "creations only", ObjectTypes: []string{"dcim.device"}, Events: []string{"object_created"}, PayloadURL: recv.URL})

	id := 0
	site.NetBox.View(func(st *fakes.NetBoxState) {
		for _, d := range st.Devices {
			if d.Name == "h1" {
				id = d.ID
			}
		}
	})
	path := "/api/dcim/devices/" + strconv.Itoa(id) + "/"
	if code, _ := get(t, srv, http.MethodPatch, path, "Token "+token, `{"status": "decommissioning"}`); code != http.StatusOK {
		t.Fatalf("PATCH: %d", code)
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+path, nil)
	req.Header.Set("Authorization", "Token "+token)
	resp, err := srv.Client().Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	if code, _ := get(t, srv, http.MethodGet, path, "Token "+token, ""); code != http.StatusNotFound {
		t.Fatalf("the deleted device answers %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := emu.WaitEvents(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("%d webhooks, want the update's and the deletion's", len(bodies))
	}
	for i, want := range []struct{ event, status, was string }{{"updated", "decommissioning", "staged"}, {"deleted", "decommissioning", "decommissioning"}} {
		m := hmac.New(sha512.New, []byte("s3cret-of-the-hook"))
		m.Write(bodies[i])
		if sigs[i] != hex.EncodeToString(m.Sum(nil)) {
			t.Errorf("webhook %d: X-Hook-Signature %q is not the body's HMAC-SHA512", i, sigs[i])
		}
		var body struct {
			Event, Timestamp, Model, Username, RequestID string
			Data                                         map[string]any
			Snapshots                                    struct{ Prechange, Postchange map[string]any }
		}
		dec := json.NewDecoder(strings.NewReader(strings.ReplaceAll(string(bodies[i]), `"request_id"`, `"RequestID"`)))
		if err := dec.Decode(&body); err != nil {
			t.Fatal(err)
		}
		status, _ := body.Data["status"].(map[string]any)
		if body.Event != want.event || body.Model != "device" || body.Username != "ops" || len(body.RequestID) != 36 ||
			body.Timestamp != "2026-03-06T15:11:23.503186+00:00" || body.Data["name"] != "h1" || status["value"] != want.status ||
			body.Snapshots.Prechange["status"] != want.was {
			t.Errorf("webhook %d: %s", i, bodies[i])
		}
		if want.event == "deleted" && body.Snapshots.Postchange != nil {
			t.Errorf("a deletion's postchange %v, want null", body.Snapshots.Postchange)
		}
	}
	if d := emu.EventDeliveries(); len(d) != 2 || d[0].Status != http.StatusAccepted || d[0].Rule != "to-hostforge" {
		t.Errorf("deliveries %+v", d)
	}
}
