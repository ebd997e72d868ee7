// Package fwemu brings a fleet of drifted hosts to compliance through the
// real Redfish firmware route: every host is a Redfish emulator served over
// HTTPS, updated by the firmware package's explorer, update manager and
// update workflow (on flow.Local, the wall clock) through
// adapters/redfish. The emulators count the multipart pushes in flight
// across the fleet, so a run shows whether the upload slots (max_uploads)
// really bound the uploads: the slot is held until the push has finished.
//
// The unit tests run a small fleet; BenchmarkFleet runs 100 hosts with
// max_uploads = 4 (see BENCHMARKS.md).
package fwemu

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
)

// Config is one run.
type Config struct {
	// Hosts is the fleet's size.
	Hosts int
	// MaxUploads is the site's upload slots.
	MaxUploads int
	// UploadHold is how long each BMC takes to receive a push.
	UploadHold time.Duration
	// Store is shared by every worker (nil: an in-memory store).
	Store firmware.Store
	// Workers is how many executors share the store and the fleet's
	// updates (default 1): with a shared store they share the slots.
	Workers int
	// Dir holds the artifact (default a temporary directory).
	Dir string
}

// Report is what a run measured.
type Report struct {
	Hosts      int           `json:"hosts"`
	MaxUploads int           `json:"max_uploads"`
	Workers    int           `json:"workers"`
	UploadHold time.Duration `json:"upload_hold"`
	// Took is the time from the first request to the last host handed
	// back compliant.
	Took time.Duration `json:"took"`
	// Limit is the same work done with max_uploads pushes back to back and
	// nothing else: ceil(hosts / max_uploads) × upload hold.
	Limit time.Duration `json:"limit"`
	// Peak is the most pushes ever in flight across the fleet's BMCs.
	Peak int `json:"peak_uploads_in_flight"`
	// Pushes counts the pushes the BMCs received.
	Pushes int `json:"pushes"`
	// Compliant counts the hosts handed back at their defaults.
	Compliant int `json:"compliant"`
}

const catalog = `
[host_models.r750]
vendor = "Dell"
model = "PowerEdge R750"
ordering = ["uefi"]
[host_models.r750.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
[[host_models.r750.components.uefi.known_firmware]]
version = "1.13.2"
default = true
files = [ { filename = "%s", sha256 = "%s" } ]
`

const biosID = "Installed-159-1.8.2__BIOS.Setup.1-1"

const adminPassword = "Emulated-Admin-1"

// settings make the workflow's waits short: the emulated BMCs finish
// their tasks in milliseconds.
func settings(maxUploads int) firmware.Settings {
	return firmware.Settings{MaxUploads: maxUploads, TaskPoll: 20 * time.Millisecond, InventoryPoll: 20 * time.Millisecond,
		NewFirmwareWait: 5 * time.Second, Recheck: 50 * time.Millisecond, RetryInterval: time.Second, UploadLease: 10 * time.Minute}.WithDefaults()
}

// Run brings the fleet to compliance and reports.
func Run(ctx context.Context, cfg Config) (Report, error) {
	rep := Report{Hosts: cfg.Hosts, MaxUploads: cfg.MaxUploads, Workers: max(cfg.Workers, 1), UploadHold: cfg.UploadHold}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "fwemu-")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	image := []byte("BIOS 1.13.2 image" + string(make([]byte, 64<<10)))
	art := filepath.Join(dir, "r750-bios-1.13.2.exe")
	if err := os.WriteFile(art, image, 0o600); err != nil {
		return rep, err
	}
	sum := sha256.Sum256(image)
	cat, err := firmware.ParseCatalog("fwemu.toml", []byte(fmt.Sprintf(catalog, art, hex.EncodeToString(sum[:]))))
	if err != nil {
		return rep, err
	}
	store := cfg.Store
	if store == nil {
		store = firmwarefake.NewMemStore()
	}
	counter := &redfishemu.PushCounter{}
	hosts := firmwarefake.NewHosts()
	addrs := map[string]string{}
	var pin string
	for i := range cfg.Hosts {
		e, err := redfishemu.New("dell", redfishemu.Options{Clock: clock.Real{}, AdminPassword: adminPassword})
		if err != nil {
			return rep, err
		}
		fb, err := e.EnableFirmware(redfishemu.FirmwareOptions{UploadHold: cfg.UploadHold, Counter: counter,
			Members: []fakes.FirmwareMember{{ID: biosID, Name: "BIOS", Version: "1.8.2", State: "Enabled"}}})
		if err != nil {
			return rep, err
		}
		fb.AddImage(filepath.Base(art), fakes.FirmwareImage{Targets: []string{biosID}, Version: "1.13.2", Activation: fakes.ActivateHostReboot, TaskTime: 10 * time.Millisecond})
		srv := httptest.NewTLSServer(e)
		defer srv.Close()
		s := sha256.Sum256(srv.Certificate().Raw)
		pin = hex.EncodeToString(s[:])
		m := fmt.Sprintf("r750-%03d", i)
		addrs[m] = srv.Listener.Addr().String()
		hosts.Put(firmware.Host{MachineID: m, State: firmware.HostReady})
	}
	user := "root" // the Dell tree's administrator
	conn := &redfish.Connector{TLSFor: func(_, _ string) redfish.TLS { return redfish.TLS{FingerprintSHA256: pin} }}
	client := &redfish.Firmware{Connector: conn, Locate: func(_ context.Context, m string) (string, bmc.Credential, error) {
		return addrs[m], bmc.Credential{Username: user, Password: adminPassword}, nil
	}}
	s := settings(cfg.MaxUploads)
	all := cfg.Hosts
	s.AutoUpdate, s.MaxConcurrentAbsolute = true, &all
	// Read every inventory, then let the update manager select the fleet.
	x := &firmware.Explorer{Store: store, Hosts: hosts, BMC: client, Catalog: cat, Clock: clock.Real{}, Concurrency: 16}
	if xr, err := x.Explore(ctx); err != nil || len(xr.Failed) > 0 {
		return rep, fmt.Errorf("explore: %v %v", err, xr.Failed)
	}
	start := time.Now()
	mgr := &firmware.Manager{Store: store, Hosts: hosts, Catalog: cat, Settings: s, Clock: clock.Real{}}
	pass, err := mgr.Pass(ctx)
	if err != nil {
		return rep, err
	}
	if len(pass.Started) != cfg.Hosts {
		return rep, fmt.Errorf("the pass started %d of %d drifted hosts: %+v", len(pass.Started), cfg.Hosts, pass)
	}
	execs := make([]*flow.Local, rep.Workers)
	for w := range execs {
		e := &firmware.Executor{Store: store, Hosts: hosts, BMC: client, Catalog: cat, Settings: s, Clock: clock.Real{}}
		execs[w] = &flow.Local{Steps: e.Steps(), Clock: clock.Real{}, Subject: fmt.Sprintf("worker-%d", w)}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i, m := range pass.Started {
		wg.Add(1)
		go func(rt *flow.Local, m string) {
			defer wg.Done()
			res, err := firmware.Update(ctx, rt, firmware.UpdateInput{MachineID: m})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && firstErr == nil:
				firstErr = fmt.Errorf("%s: %w", m, err)
			case err == nil && res.Outcome == firmware.OutcomeDone:
				rep.Compliant++
			}
		}(execs[i%len(execs)], m)
	}
	wg.Wait()
	rep.Took = time.Since(start)
	rounds := (cfg.Hosts + cfg.MaxUploads - 1) / cfg.MaxUploads
	rep.Limit = time.Duration(rounds) * cfg.UploadHold
	rep.Peak, rep.Pushes = counter.Peak(), counter.Total()
	if firstErr != nil {
		return rep, firstErr
	}
	// Every host reports the default now.
	for m := range addrs {
		inv, err := client.Inventory(ctx, m)
		if err != nil {
			return rep, err
		}
		if r := firmware.Drift(cat, inv); r.Drifted {
			return rep, fmt.Errorf("%s is still drifted after its update", m)
		}
	}
	return rep, nil
}
