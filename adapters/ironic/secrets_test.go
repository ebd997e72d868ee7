package ironic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/ironic"
)

// echoingIronic refuses node creation and driver_info patches the way
// Ironic does when a value does not validate: the faultstring quotes the
// driver_info it was given, JSON inside the JSON error_message. A node it
// reads back carries the same text as last_error.
func echoingIronic(t *testing.T) string {
	t.Helper()
	var lastError string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.TrimSuffix(r.URL.Path, "/") == "/v1":
			_, _ = w.Write([]byte(`{"version": {"version": "1.87", "min_version": "1.1"}}`))
		case r.Method == http.MethodPost || r.Method == http.MethodPatch:
			var body any
			_ = json.NewDecoder(r.Body).Decode(&body)
			quoted, _ := json.Marshal(body)
			lastError = fmt.Sprintf("Failed to validate driver_info: %s", quoted)
			inner, _ := json.Marshal(map[string]any{"faultstring": "Invalid driver_info: " + string(quoted), "faultcode": "Client", "debuginfo": nil})
			outer, _ := json.Marshal(map[string]string{"error_message": string(inner)})
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(outer)
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"uuid": "u-1", "name": "n1", "provision_state": "enroll", "last_error": lastError, "maintenance_reason": lastError})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Ironic echoes driver_info in its errors; the BMC password the adapter
// sent never reaches the error or the node's text fields.
func TestIronicEchoOfDriverInfoIsScrubbed(t *testing.T) {
	const pw = `Admin"Pw-7\x`
	for _, shared := range []bool{false, true} {
		var sec *hostforge.Secrets
		if shared {
			sec = hostforge.NewSecrets()
		}
		c, err := adapter.New(context.Background(), adapter.Config{Endpoint: echoingIronic(t), Secrets: sec})
		if err != nil {
			t.Fatal(err)
		}
		_, cerr := c.CreateNode(context.Background(), ironic.NodeCreate{Name: "n1", Driver: "redfish",
			DriverInfo: map[string]any{"redfish_address": "https://10.0.0.1", "redfish_username": "admin", "redfish_password": pw}})
		_, perr := c.UpdateNode(context.Background(), "n1", []ironic.PatchOp{{Op: "add", Path: "/driver_info/redfish_password", Value: pw}})
		n, gerr := c.GetNode(context.Background(), "n1")
		if gerr != nil {
			t.Fatal(gerr)
		}
		for name, text := range map[string]string{"create": errText(cerr), "patch": errText(perr), "last_error": n.LastError, "maintenance_reason": n.MaintenanceReason} {
			for _, v := range hostforge.Variants(pw) {
				if strings.Contains(text, v) {
					t.Fatalf("shared=%v %s: the password reached %q", shared, name, text)
				}
			}
		}
		if !errors.Is(cerr, hostforge.ErrInvalid) || !strings.Contains(cerr.Error(), "Invalid driver_info") || !strings.Contains(cerr.Error(), "redfish_username") {
			t.Fatalf("Ironic's reason was lost: %v", cerr)
		}
		if shared && !sec.Contains(pw) {
			t.Fatal("the sent password was not registered in the process's set")
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
