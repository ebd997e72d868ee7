package sqlstore_test

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/internal/fwsim"
)

// The update manager's pass over a fleet on each engine:
//
//	go test ./adapters/sqlstore -run '^$' -bench FirmwarePass -benchtime 20x
//	HOSTFORGE_POSTGRES_DSN=postgres://... go test ./adapters/sqlstore -run '^$' -bench FirmwarePass -benchtime 20x
//	go test ./adapters/sqlstore -run '^$' -bench FirmwarePass -benchtime 20x -firmware.passhosts 1000
var passHosts = flag.Int("firmware.passhosts", 10000, "managed hosts of BenchmarkFirmwarePass")

// passFleet builds n managed hosts with an observation each (40 % drifted,
// 20 % assigned, 2 % in maintenance) and returns the hosts and the catalog.
func passFleet(b *testing.B, n int, put func([]firmware.Observed)) (*firmwarefake.Hosts, *firmware.Catalog) {
	b.Helper()
	cat, err := firmware.ParseCatalog("fwsim.toml", []byte(fwsim.Catalog))
	if err != nil {
		b.Fatal(err)
	}
	models := cat.Models()
	hosts := firmwarefake.NewHosts()
	obs := make([]firmware.Observed, 0, n)
	for i := range n {
		m := fmt.Sprintf("fw-%05d", i)
		h := firmware.Host{MachineID: m, State: firmware.HostReady}
		if i%5 == 0 {
			h.State, h.InstanceID = firmware.HostAssigned, "inst-"+m
		}
		h.InMaintenance = i%50 == 7
		hosts.Put(h)
		model := models[i%len(models)]
		rep := firmware.Reported{}
		for t, c := range model.Components {
			def, _ := c.Default()
			v := def.Version
			if i%5 < 2 {
				v = "old-" + v
			}
			rep[t] = []firmware.Reading{{ID: fmt.Sprintf("%s-%d", t, i), Version: v}}
		}
		obs = append(obs, firmware.Observed{MachineID: m, Identity: firmware.Identity{Manufacturer: model.Vendor, Model: model.Model}, Reported: rep, At: clock.Epoch})
	}
	put(obs)
	return hosts, cat
}

func benchPass(b *testing.B, store firmware.Store, hosts *firmwarefake.Hosts, cat *firmware.Catalog, clear func()) {
	ctx := context.Background()
	abs := *passHosts / 20
	mgr := &firmware.Manager{Store: store, Hosts: hosts, Catalog: cat, Clock: clock.NewFake(clock.Epoch),
		Settings: firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: &abs}}
	b.Run("starting", func(b *testing.B) {
		started := 0
		for b.Loop() {
			b.StopTimer()
			clear()
			b.StartTimer()
			rep, err := mgr.Pass(ctx)
			if err != nil {
				b.Fatal(err)
			}
			started = len(rep.Started)
		}
		b.ReportMetric(float64(started), "started/pass")
	})
	b.Run("full", func(b *testing.B) {
		if _, err := mgr.Pass(ctx); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			rep, err := mgr.Pass(ctx)
			if err != nil || len(rep.Started) != 0 {
				b.Fatalf("%+v, %v", rep, err)
			}
		}
	})
}

func BenchmarkFirmwarePass(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		s := firmwarefake.NewMemStore()
		hosts, cat := passFleet(b, *passHosts, func(obs []firmware.Observed) {
			for _, o := range obs {
				if err := s.PutObserved(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
		})
		benchPass(b, s, hosts, cat, func() {
			reqs, _ := s.Requests(context.Background())
			for _, r := range reqs {
				_, _ = s.DeleteRequest(context.Background(), r.MachineID, false)
			}
		})
	})
	for _, e := range sqlstoretest.Engines(b) {
		b.Run(e.Name(), func(b *testing.B) {
			db := e.Open(b)
			ctx := context.Background()
			hosts, cat := passFleet(b, *passHosts, func(obs []firmware.Observed) {
				st := sqlstore.NewFirmwareStore(db)
				for _, o := range obs {
					if err := st.PutObserved(ctx, o); err != nil {
						b.Fatal(err)
					}
				}
			})
			benchPass(b, sqlstore.NewFirmwareStore(db), hosts, cat, func() {
				if _, err := db.Exec(ctx, `DELETE FROM firmware_requests`); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
