package netbox_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/enrollment"
)

// A slow NetBox is an unavailable NetBox: the HTTP client's timeout, with
// the caller's context still live, is NETBOX_UNAVAILABLE (retryable) after
// the retries, not CANCELLED — which stays reserved for a caller that gave
// up. It holds whether NetBox stalls before its headers or in its body.
func TestClientTimeoutIsUnavailableNotCancelled(t *testing.T) {
	tests := []struct {
		name string
		// body: NetBox sends headers and part of the body, then stalls.
		body                 bool
		timeout, callerAfter time.Duration
		want                 *hostforge.Spec
	}{
		{"stalls before headers, caller still waiting", false, 100 * time.Millisecond, time.Minute, enrollment.NetBoxUnavailable},
		{"stalls in the body, caller still waiting", true, 100 * time.Millisecond, time.Minute, enrollment.NetBoxUnavailable},
		{"caller's context ends first", false, time.Minute, 200 * time.Millisecond, hostforge.Cancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stop := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.body {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusOK)
					_, _ = w.Write([]byte(`{"count": 1, "results": [`))
					w.(http.Flusher).Flush()
				}
				select {
				case <-stop:
				case <-r.Context().Done():
				}
			}))
			defer srv.Close()
			defer close(stop)
			c, err := netbox.New(netbox.Config{URL: srv.URL, Token: "tok", Timeout: tt.timeout, RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tt.callerAfter)
			defer cancel()
			_, err = c.Device(ctx, "h1")
			if tt.want != hostforge.Cancelled && (!errors.Is(err, hostforge.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)) {
				t.Fatalf("Device: %v; want ErrUnavailable without a context error in the chain", err)
			}
			_, err = (&enrollment.Executor{NetBox: c}).ReadIntent(ctx, enrollment.ReadIntentIn{Device: "h1"})
			f, ok := hostforge.AsFailure(hostforge.Classified(err))
			if !ok || f.Code != tt.want.Code || !f.Retryable {
				t.Fatalf("ReadIntent on a stalled NetBox: %v, want %s (retryable)", err, tt.want.Code)
			}
		})
	}
}
