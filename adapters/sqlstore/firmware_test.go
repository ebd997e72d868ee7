package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/firmware/firmwaretest"
	"github.com/hostforge/hostforge/internal/fwsim"
)

// The SQL firmware store passes the firmware.Store contract on SQLite and,
// under make integration, on PostgreSQL.
func TestFirmwareStoreContract(t *testing.T) {
	for _, e := range sqlstoretest.Engines(t) {
		t.Run(e.Name(), func(t *testing.T) {
			firmwaretest.Run(t, func(t *testing.T) firmware.Store { return sqlstore.NewFirmwareStore(e.Open(t)) })
		})
	}
}

// Several workers' passes on one database never start more than the
// ceiling: the pass lock (an advisory lock on PostgreSQL) lets one through
// at a time.
func TestFirmwarePassLockOnSQL(t *testing.T) {
	for _, e := range sqlstoretest.Engines(t) {
		t.Run(e.Name(), func(t *testing.T) {
			db := e.Open(t)
			ctx := context.Background()
			store := sqlstore.NewFirmwareStore(db)
			cat, err := firmware.ParseCatalog("fwsim.toml", []byte(fwsim.Catalog))
			if err != nil {
				t.Fatal(err)
			}
			m, _ := cat.Model("Dell", "PowerEdge R750")
			hosts := firmwarefake.NewHosts()
			for i := range 40 {
				id := fmt.Sprintf("m%02d", i)
				hosts.Put(firmware.Host{MachineID: id, State: firmware.HostReady})
				rep := firmware.Reported{firmware.UEFI: {{ID: "Installed-159-1.8.2__BIOS.Setup.1-1", Version: "1.8.2"}}}
				if err := store.PutObserved(ctx, firmware.Observed{MachineID: id, Identity: firmware.Identity{Manufacturer: m.Vendor, Model: m.Model}, Reported: rep, At: clock.Epoch}); err != nil {
					t.Fatal(err)
				}
			}
			ceiling := 7
			locked := &lockSpy{Store: store}
			slow := slowHosts{Hosts: hosts}
			var wg sync.WaitGroup
			errs := make(chan error, 6)
			for w := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Each worker has its own connection pool, as separate processes would.
					mgr := &firmware.Manager{Store: locked, Hosts: slow, Catalog: cat, Clock: clock.NewFake(clock.Epoch), Holder: fmt.Sprintf("w%d", w),
						Settings: firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: &ceiling}}
					for range 3 {
						if _, err := mgr.Pass(ctx); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			reqs, err := store.Requests(ctx)
			if err != nil || len(reqs) != ceiling {
				t.Fatalf("%d requests (%v), ceiling %d", len(reqs), err, ceiling)
			}
			if locked.peak.Load() != 1 || locked.passes.Load() == 0 {
				t.Fatalf("%d passes held the lock at once (of %d that got it)", locked.peak.Load(), locked.passes.Load())
			}
		})
	}
}

// lockSpy counts the passes inside the pass lock at once.
type lockSpy struct {
	firmware.Store
	inside, peak, passes atomic.Int32
}

func (l *lockSpy) LockPass(ctx context.Context, holder string, now time.Time, lease time.Duration) (func(), bool, error) {
	release, ok, err := l.Store.LockPass(ctx, holder, now, lease)
	if !ok || err != nil {
		return release, ok, err
	}
	l.passes.Add(1)
	n := l.inside.Add(1)
	for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
	}
	return func() { l.inside.Add(-1); release() }, true, nil
}

// slowHosts widens the pass so that workers overlap.
type slowHosts struct{ firmware.Hosts }

func (s slowHosts) List(ctx context.Context) ([]firmware.Host, error) {
	time.Sleep(5 * time.Millisecond)
	return s.Hosts.List(ctx)
}
