package netbox_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/intent"
)

// NetBox's error text that quotes the token (a proxy that echoes the
// Authorization header) or another secret the process holds never reaches
// the error.
func TestNetBoxErrorTextIsScrubbed(t *testing.T) {
	const token = "0123456789abcdef-netbox-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"detail": "refused ` + r.Header.Get("Authorization") + ` for vault-pw-42"}`))
	}))
	defer srv.Close()
	sec := hostforge.NewSecrets("vault-pw-42")
	c, err := netbox.New(netbox.Config{URL: srv.URL, Token: token, RetryMax: -1, Secrets: sec})
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"read":  func() error { _, err := c.Device(context.Background(), "n1"); return err }(),
		"write": c.SetStatus(context.Background(), 7, intent.StatusActive),
	} {
		if err == nil || strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "vault-pw-42") || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
