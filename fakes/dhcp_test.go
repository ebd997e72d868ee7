package fakes_test

import (
	"context"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/dhcp/dhcptest"
	"github.com/hostforge/hostforge/fakes"
)

func TestDHCPServerContract(t *testing.T) {
	dhcptest.Run(t, func(t *testing.T) dhcptest.Target {
		site := fakes.NewSite()
		site.DHCP.Mkdir("/srv/contract")
		cfg := dhcp.Config{Dir: "/srv/dhcp/hosts"}
		site.DHCP.Mkdir(cfg.Dir)
		if err := site.DHCP.UseConfig(cfg); err != nil {
			t.Fatal(err)
		}
		// The contract's service: a config test or restart takes 20 ms, so
		// that unserialised ones would overlap.
		site.DHCP.DuringRestart(func() { time.Sleep(20 * time.Millisecond) })
		r, err := site.DHCP.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return dhcptest.Target{
			Remote: r,
			Dir:    "/srv/contract",
			Dialer: site.DHCP,
			Service: dhcptest.Service{
				Config:       site.DHCP.Config(),
				FailRestarts: func(_ *testing.T, n int) { site.DHCP.FailRestarts(n) },
				State: func(*testing.T) dhcptest.ServiceState {
					st := dhcptest.ServiceState{Running: site.DHCP.Active(), Restarts: site.DHCP.Restarts(), Overlaps: site.DHCP.Overlaps(), Loaded: map[string]string{}}
					for p, sum := range site.DHCP.Loaded() {
						st.Loaded[path.Base(p)] = sum
					}
					return st
				},
			},
		}
	})
}

func TestDHCPServerValidatorRejectsMalformedFiles(t *testing.T) {
	good, err := dhcp.RenderISC(dhcp.Entry{Hostname: "node-01", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := dhcp.RenderISC(dhcp.Entry{Hostname: "node-02", MAC: "0a:00:00:00:00:02", IP: "10.0.0.2"})
	sameIP, _ := dhcp.RenderISC(dhcp.Entry{Hostname: "node-03", MAC: "0a:00:00:00:00:03", IP: "10.0.0.1"})
	keaGood, _ := dhcp.RenderKea(dhcp.Entry{Hostname: "node-01", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"})
	tests := []struct {
		name    string
		flavour dhcp.Flavour
		files   map[string]string
		wantOK  bool
	}{
		{"isc rendered", dhcp.ISC, map[string]string{"node-01.conf": string(good), "node-02.conf": string(other)}, true},
		{"isc garbage", dhcp.ISC, map[string]string{"node-01.conf": "host node-01 { oops\n"}, false},
		{"isc bad mac", dhcp.ISC, map[string]string{"node-01.conf": strings.Replace(string(good), "0a:00:00:00:00:01", "zz:00:00:00:00:01", 1)}, false},
		{"isc duplicate address", dhcp.ISC, map[string]string{"node-01.conf": string(good), "node-03.conf": string(sameIP)}, false},
		{"isc ignores other suffixes", dhcp.ISC, map[string]string{"node-01.conf": string(good), "node-09.conf.rejected": "garbage"}, true},
		{"kea rendered", dhcp.Kea, map[string]string{"node-01.json": string(keaGood)}, true},
		{"kea unknown key", dhcp.Kea, map[string]string{"node-01.json": `{"hw-address":"0a:00:00:00:00:01","ip-address":"10.0.0.1","nope":1}`}, false},
		{"kea ipv6", dhcp.Kea, map[string]string{"node-01.json": `{"hw-address":"0a:00:00:00:00:01","ip-address":"fe80::1"}`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := fakes.NewSite()
			if err := site.DHCP.UseConfig(dhcp.Config{Flavour: tt.flavour}); err != nil {
				t.Fatal(err)
			}
			cfg := site.DHCP.Config()
			for name, content := range tt.files {
				site.DHCP.PutFile(cfg.Dir+"/"+name, []byte(content))
			}
			r, err := site.DHCP.Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			test, err := r.Run(context.Background(), cfg.ConfigTest)
			if err != nil {
				t.Fatal(err)
			}
			restart, err := r.Run(context.Background(), cfg.Restart)
			if err != nil {
				t.Fatal(err)
			}
			status, _ := r.Run(context.Background(), cfg.Status)
			if got := test.Exit == 0; got != tt.wantOK {
				t.Fatalf("config test exit %d (%s), want ok=%v", test.Exit, test.Output, tt.wantOK)
			}
			if got := restart.Exit == 0 && status.Exit == 0; got != tt.wantOK {
				t.Fatalf("restart exit %d, status exit %d, want ok=%v", restart.Exit, status.Exit, tt.wantOK)
			}
			wantRestarts := 0
			if tt.wantOK {
				wantRestarts = 1
			}
			if site.DHCP.Restarts() != wantRestarts {
				t.Fatalf("restarts = %d, want %d", site.DHCP.Restarts(), wantRestarts)
			}
		})
	}
}

func TestDHCPServerCountsCallsAndHonoursFaults(t *testing.T) {
	site := fakes.NewSite()
	ctx := context.Background()
	site.Inject(fakes.SysDHCP, "connect", 1, dhcp.ErrHostKey)
	if _, err := site.DHCP.Dial(ctx); dhcp.KindOf(err) != dhcp.KindHostKey {
		t.Fatalf("Dial with an injected host-key fault: %v", err)
	}
	r, err := site.DHCP.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	site.Inject(fakes.SysDHCP, "upload", 1, hostforge.ErrUnavailable)
	if err := r.Upload(ctx, "/x.conf", []byte("x")); err == nil {
		t.Fatal("Upload with an injected fault succeeded")
	}
	if _, err := r.Hash(ctx, "/x.conf"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, "true"); err != nil {
		t.Fatal(err)
	}
	got := site.Calls()[fakes.SysDHCP]
	if got.Reads != 3 || got.Writes != 2 || got.Ops["connect"] != 2 || got.Ops["hash"] != 1 || got.Ops["upload"] != 1 || got.Ops["run"] != 1 {
		t.Fatalf("calls = %+v", got)
	}
	if _, ok := site.DHCP.File("/x.conf"); ok {
		t.Fatal("a failed upload wrote the file")
	}
	_ = r.Close()
	if _, err := r.Run(ctx, "true"); dhcp.KindOf(err) != dhcp.KindTransport {
		t.Fatalf("Run on a closed session: %v, want a transport failure", err)
	}
}
