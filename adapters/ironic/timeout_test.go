package ironic_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/ironic"
)

// stallingIronic answers the API version document (so New connects) and
// holds every other request until the test ends; with stallRoot it holds
// the version document too.
func stallingIronic(t *testing.T, stallRoot bool) string {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !stallRoot && strings.TrimSuffix(r.URL.Path, "/") == "/v1" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"version": {"version": "1.87", "min_version": "1.1"}}`))
			return
		}
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		close(stop)
		srv.Close()
	})
	return srv.URL
}

var stallSpec = ironic.NodeSpec{
	Name: "cpu-r1-u10", Driver: "redfish", BMCAddress: "10.0.0.10",
	Interfaces: map[string]string{"raid": "agent"},
	NICs:       []ironic.NIC{{Name: "eth0", MAC: "0a:00:00:00:00:10"}},
}

// A slow Ironic is an unavailable Ironic: the HTTP client's timeout, with
// the caller's context still live, is IRONIC_UNAVAILABLE (retryable), not
// CANCELLED — which stays reserved for a caller that gave up.
func TestClientTimeoutIsUnavailableNotCancelled(t *testing.T) {
	tests := []struct {
		name string
		// timeout is the client's; callerAfter ends the caller's context.
		timeout, callerAfter time.Duration
		want                 *hostforge.Spec
	}{
		{"client timeout, caller still waiting", 200 * time.Millisecond, time.Minute, ironic.Unavailable},
		{"caller's context ends first", time.Minute, 200 * time.Millisecond, hostforge.Cancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := adapter.New(context.Background(), adapter.Config{Endpoint: stallingIronic(t, false), Timeout: tt.timeout})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tt.callerAfter)
			defer cancel()
			_, err = (&ironic.Phases{Client: c}).Prelude(ctx, stallSpec)
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != tt.want.Code {
				t.Fatalf("Prelude on a stalled Ironic: %v, want %s", err, tt.want.Code)
			}
			if !f.Retryable {
				t.Fatalf("%s is not retryable", f.Code)
			}
		})
	}
}

func TestClientTimeoutErrorsAreNotContextErrors(t *testing.T) {
	// Even the first request, inside New.
	_, err := adapter.New(context.Background(), adapter.Config{Endpoint: stallingIronic(t, true), Timeout: 200 * time.Millisecond})
	if !errors.Is(err, hostforge.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || hostforge.Settled(err) {
		t.Fatalf("New on a stalled Ironic: %v; want ErrUnavailable without a context error in the chain", err)
	}
	c, err := adapter.New(context.Background(), adapter.Config{Endpoint: stallingIronic(t, false), Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetNode(context.Background(), "n1")
	if !errors.Is(err, hostforge.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetNode on a stalled Ironic: %v; want ErrUnavailable, not context.DeadlineExceeded", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.GetNode(ctx, "n1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetNode with a cancelled context: %v, want context.Canceled", err)
	}
}
