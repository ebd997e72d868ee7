package extensions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/internal/realdata"
)

func TestFireServerRegisteredBuildsTheEventFromNetBoxAndIronic(t *testing.T) {
	inv := realdata.Read(t, "ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json")
	host := extensions.Enrolled{Device: "cpu-r3-u17", Instance: "ironic-cpu", Node: "6f1e3a52-node", Run: "enroll/cpu-r3-u17/run-7"}
	dev := intent.Device{ID: 4711, Name: host.Device, DeviceType: intent.DeviceType{Manufacturer: "Dell", Model: "PowerEdge R7615"}}

	tests := []struct {
		name      string
		defs      [][]byte
		setup     func(*extensionsfake.Servers)
		wantCode  string
		wantTasks string
		wantReads int
	}{
		{"bound tasks run on the mapped server", [][]byte{def("notify", "", "hook:webhook")}, func(s *extensionsfake.Servers) {
			s.PutDevice(dev)
			s.PutInventory(host.Instance, host.Node, inv)
		}, "", "notify/hook=succeeded", 2},
		{"nothing bound reads nothing", [][]byte{def("draft", "draft", "hook:webhook")}, func(*extensionsfake.Servers) {}, "", "", 0},
		{"a device NetBox lacks", [][]byte{def("notify", "", "hook:webhook")}, func(*extensionsfake.Servers) {}, extensions.SourceMissing.Code, "", 1},
		{"no inventory", [][]byte{def("notify", "", "hook:webhook")}, func(s *extensionsfake.Servers) { s.PutDevice(dev) }, extensions.SourceMissing.Code, "", 2},
		{"NetBox down is retried, then reported", [][]byte{def("notify", "", "hook:webhook")}, func(s *extensionsfake.Servers) {
			s.Fail(fmt.Errorf("netbox: 503: %w", hostforge.ErrUnavailable))
		}, extensions.SourceUnavailable.Code, "", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.defs...)
			src := extensionsfake.NewServers()
			tc.setup(src)
			w.d.Servers = src
			rep, err := extensions.FireServerRegistered(context.Background(), w.rt, host)
			if got := hostforge.CodeOf(err); got != tc.wantCode {
				t.Fatalf("error %v, want code %q", err, tc.wantCode)
			}
			if got := summary(rep); got != tc.wantTasks {
				t.Errorf("deliveries %q, want %q", got, tc.wantTasks)
			}
			if src.Reads() != tc.wantReads {
				t.Errorf("%d reads of NetBox and Ironic, want %d", src.Reads(), tc.wantReads)
			}
			if rep.EventID != extensions.ServerRegisteredEventID(host.Run) {
				t.Errorf("event %s", rep.EventID)
			}
			if tc.wantTasks == "" {
				return
			}
			req := w.runner.Requests()[0]
			if req.DeliveryID != extensions.DeliveryID(rep.EventID, "notify", "hook") || req.Body == "" {
				t.Errorf("request %+v", req)
			}
		})
	}
}

func TestFireServerRegisteredWithoutASource(t *testing.T) {
	w := newWorld(t, def("notify", "", "hook:webhook"))
	_, err := extensions.FireServerRegistered(context.Background(), w.rt, extensions.Enrolled{Device: "d", Instance: "i", Node: "n", Run: "r"})
	if !extensions.RunnerConfigInvalid.Is(err) {
		t.Fatalf("error %v, want %s", err, extensions.RunnerConfigInvalid.Code)
	}
}

// An enrollment that names no run cannot be an event: refused before
// anything is read.
func TestFireServerRegisteredNeedsTheRun(t *testing.T) {
	w := newWorld(t, def("notify", "", "hook:webhook"))
	src := extensionsfake.NewServers()
	w.d.Servers = src
	_, err := extensions.FireServerRegistered(context.Background(), w.rt, extensions.Enrolled{Device: "d", Instance: "i", Node: "n"})
	if !extensions.EventInvalid.Is(err) || src.Reads() != 0 || len(w.runner.Requests()) != 0 {
		t.Fatalf("error %v after %d reads and %d deliveries, want %s and nothing done", err, src.Reads(), len(w.runner.Requests()), extensions.EventInvalid.Code)
	}
}

// An enrollment whose BMC phase set the BMC's hostname, on a device with a
// BMC address, fires serverCreateDNS after serverRegistered, as an event
// of the run's own; the DNS event alone reads NetBox and not Ironic, and a
// run whose BMC phase did not run, or a device without an out-of-band
// address, fires none.
func TestFireServerRegisteredAlsoFiresServerCreateDNS(t *testing.T) {
	inv := realdata.Read(t, "ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json")
	host := extensions.Enrolled{Device: "CPU-R3-U17", Instance: "ironic-cpu", Node: "6f1e3a52-node", Run: "run-7", BMCHostname: true}
	dev := intent.Device{ID: 4711, Name: host.Device, Serial: "SN-17", OOBIP: "10.0.3.17"}
	dnsDef := []byte(strings.Replace(string(def("dns", "", "add:webhook")), `"stage": "serverRegistered"`, `"stage": "serverCreateDNS"`, 1))
	dnsDef = []byte(strings.Replace(string(dnsDef), `"requestTemplate": "{\"serial\": \"{{ server.serialNumber }}\", \"task\": \"add\"}"`,
		`"requestTemplate": "{{ serverDNSRecordSet | dump }}"`, 1))

	w := newWorld(t, def("notify", "", "hook:webhook"), dnsDef)
	src := extensionsfake.NewServers()
	src.PutDevice(dev)
	src.PutInventory(host.Instance, host.Node, inv)
	w.d.Servers = src
	rep, err := extensions.FireServerRegistered(context.Background(), w.rt, host)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(rep); got != "notify/hook=succeeded dns/add=succeeded" {
		t.Fatalf("deliveries %s", got)
	}
	if d := rep.Deliveries[1]; d.EventID != "serverCreateDNS/run-7" || d.Stage != extensions.ServerCreateDNS {
		t.Errorf("the DNS delivery names event %s stage %s", d.EventID, d.Stage)
	}
	if body := w.runner.Requests()[1].Body; body != `{"hostname":"cpu-r3-u17","ip":{"ip":"10.0.3.17","status":"allocated"},"managementAddress":"10.0.3.17","netboxDevice":"CPU-R3-U17","operation":"create","serialNumber":"SN-17","serverId":4711}` {
		t.Errorf("serverDNSRecordSet %s", body)
	}

	only := newWorld(t, dnsDef)
	src2 := extensionsfake.NewServers()
	src2.PutDevice(dev)
	only.d.Servers = src2
	rep, err = extensions.FireServerRegistered(context.Background(), only.rt, host)
	if err != nil || summary(rep) != "dns/add=succeeded" || src2.Reads() != 1 {
		t.Fatalf("DNS only: %s, %v, %d reads (want NetBox's only)", summary(rep), err, src2.Reads())
	}

	unset := newWorld(t, dnsDef)
	src4 := extensionsfake.NewServers()
	src4.PutDevice(dev)
	unset.d.Servers = src4
	noHost := host
	noHost.BMCHostname = false
	rep, err = extensions.FireServerRegistered(context.Background(), unset.rt, noHost)
	if err != nil || len(rep.Deliveries) != 0 || src4.Reads() != 0 {
		t.Fatalf("a run whose BMC phase did not set the hostname: %s, %v, %d reads", summary(rep), err, src4.Reads())
	}

	noBMC := newWorld(t, dnsDef)
	src3 := extensionsfake.NewServers()
	src3.PutDevice(intent.Device{ID: 1, Name: "no-oob"})
	noBMC.d.Servers = src3
	rep, err = extensions.FireServerRegistered(context.Background(), noBMC.rt, extensions.Enrolled{Device: "no-oob", Instance: "i", Node: "n", Run: "r", BMCHostname: true})
	if err != nil || len(rep.Deliveries) != 0 {
		t.Fatalf("a device without a BMC address: %s, %v", summary(rep), err)
	}
}
