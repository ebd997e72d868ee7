package netbox_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/enrolltest/netboxtest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "0123456789abcdef0123456789abcdef01234567"

// serve starts the emulator over site and returns a client for it. A page
// size of 5 makes every list in the suite span several pages.
func serve(t *testing.T, site *fakes.Site, opts netboxhttp.Options, cfg netbox.Config) (*netbox.Client, *netboxhttp.Server) {
	t.Helper()
	if opts.Token == "" {
		opts.Token = token
	}
	emu := netboxhttp.New(site.NetBox, opts)
	srv := httptest.NewServer(emu)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	if cfg.URL == "" {
		cfg.URL = srv.URL
	}
	if cfg.Token == "" {
		cfg.Token = token
	}
	if cfg.RetryWaitMin == 0 {
		cfg.RetryWaitMin, cfg.RetryWaitMax = time.Millisecond, 5*time.Millisecond
	}
	c, err := netbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, emu
}

// The adapter over the REST emulator passes the same contract suite as the
// in-memory fake.
func TestContractOverEmulator(t *testing.T) {
	netboxtest.Run(t, func(t *testing.T, site *fakes.Site) netboxtest.Harness {
		c, _ := serve(t, site, netboxhttp.Options{MaxPageSize: 5}, netbox.Config{PageSize: 1000, RetryMax: 2})
		return netboxtest.Harness{Client: c}
	})
}
