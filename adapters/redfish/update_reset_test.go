package redfish_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/internal/realdata"
)

// captureEmu serves a real capture with its firmware side enabled. The
// XCC's push URI stays where the capture has it (/mfwupdate, outside
// /redfish/): the adapter pushes to any path of the BMC's own origin.
func captureEmu(t *testing.T, dir string, clk *clock.Fake) (*redfishemu.Emulator, *fakes.FirmwareBMC, *redfish.Firmware, *httptest.Server) {
	t.Helper()
	e, err := redfishemu.FromDir(realdata.Path(t, dir), redfishemu.Options{Clock: clk, AdminUser: "hostforge", AdminPassword: adminPW})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := e.EnableFirmware(redfishemu.FirmwareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(e)
	t.Cleanup(srv.Close)
	c, _ := serveConnector(t, srv)
	addr := srv.Listener.Addr().String()
	f := &redfish.Firmware{Connector: c, Locate: func(context.Context, string) (string, bmc.Credential, error) {
		return addr, bmc.Credential{Username: "hostforge", Password: adminPW}, nil
	}}
	return e, fb, f, srv
}

// rawReset posts a ResetType to a reset action as any client could.
func rawReset(t *testing.T, srv *httptest.Server, target, resetType string) int {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test's own emulator
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+target, bytes.NewBufferString(`{"ResetType":"`+resetType+`"}`))
	req.SetBasicAuth("hostforge", adminPW)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The emulator enforces each capture's reset ActionInfo: the DGX's
// MegaRAC and the Supermicro refuse FullPowerCycle (the type the adapter
// used to send blind) — and a firmware update whose entry needs a power
// drain still activates on each: the DGX by a power-off held for the
// drain wait (it has no AC cycle at all), the Supermicro by PowerCycle,
// the XCC by its OEM SystemReset, the iDRAC by its PowerCycle. No reset
// the BMC refuses is ever sent.
func TestPowerDrainOnRealCaptures(t *testing.T) {
	cases := []struct {
		dir, vendor, model, comp, matcher, member, to string
		act                                           fakes.Activation
		refusesFull                                   bool
		resets                                        string
	}{
		{"redfish/ami/dgx-h100-megarac", "Nvidia", "DGXH100", "uefi", "^HostBIOS_0$", "HostBIOS_0", "01.02.00", fakes.ActivatePowerCycle, true, "ForceOff On"},
		{"redfish/supermicro/sys-821ge-tnhr", "Supermicro", "SYS-821GE-TNHR", "cpldmb", "^CPLD_Motherboard$", "CPLD_Motherboard", "F5.12.CB", fakes.ActivatePowerCycle, true, "ForceOff ForceOff On On"},
		{"redfish/lenovo/sr670v2-xcc", "Lenovo", "ThinkSystem SR670 V2", "uefi", "^UEFI", "UEFI", "22J-1.60", fakes.ActivateACCycle, true, "ForceOff ACPowerCycle On On"},
		{"redfish/dell/r750-idrac9", "Dell", "PowerEdge R750", "cpldmb", "^Installed-.*__CPLD.Embedded.", "Installed-27763-1.0.5__CPLD.Embedded.1", "1.0.7", fakes.ActivateACCycle, true, "ForceOff ACPowerCycle On On"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			clk := clock.NewFake(clock.Epoch)
			e, fb, client, srv := captureEmu(t, c.dir, clk)
			sys := e.Doc("/redfish/v1/Systems")["Members"].([]any)[0].(map[string]any)["@odata.id"].(string)
			if code := rawReset(t, srv, sys+"/Actions/ComputerSystem.Reset", "FullPowerCycle"); (code == http.StatusBadRequest) != c.refusesFull {
				t.Fatalf("FullPowerCycle answered %d; the capture refuses it: %v", code, c.refusesFull)
			}
			before, sent := len(fb.State().Resets), len(e.Requests())

			dir := t.TempDir()
			image := filepath.Join(dir, "image.bin")
			if err := os.WriteFile(image, []byte("image "+c.to), 0o600); err != nil {
				t.Fatal(err)
			}
			fb.AddImage(filepath.Base(image), fakes.FirmwareImage{Targets: []string{c.member}, Version: c.to, Activation: c.act, TaskTime: time.Minute})
			cat, err := firmware.ParseCatalog("drain.toml", []byte(fmt.Sprintf(`
[host_models.x]
vendor = %q
model = %q
ordering = [%q]
[host_models.x.components.%s]
current_version_reported_as = %q
known_firmware = [ { version = %q, filename = %q, default = true, power_drains_needed = 1 } ]
`, c.vendor, c.model, c.comp, c.comp, c.matcher, c.to, image)))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			store := firmwarefake.NewMemStore()
			exec := &firmware.Executor{Store: store, Hosts: firmwarefake.NewHosts(firmware.Host{MachineID: "m1", State: firmware.HostReady}),
				BMC: client, Catalog: cat, Clock: clk}
			if _, err := store.CreateRequest(ctx, firmware.Request{MachineID: "m1", Initiator: "test", CreatedAt: clk.Now()}); err != nil {
				t.Fatal(err)
			}
			res, err := firmware.Update(ctx, &flow.Local{Steps: exec.Steps(), Clock: clk}, firmware.UpdateInput{MachineID: "m1"})
			if err != nil || res.Outcome != firmware.OutcomeDone {
				u, _, _ := store.Update(ctx, "m1")
				t.Fatalf("the update ended %+v, %v (record %+v)", res, err, u)
			}
			if v := fb.Version(c.member); v != c.to {
				t.Errorf("%s reports %q, want %q: the drain did not activate the image", c.member, v, c.to)
			}
			if got := strings.Join(fb.State().Resets[before:], " "); got != c.resets {
				t.Errorf("resets %q, want %q", got, c.resets)
			}
			push, pushed := e.Doc("/redfish/v1/UpdateService")["MultipartHttpPushUri"].(string), false
			for _, r := range e.Requests()[sent:] {
				if r.Method == http.MethodPost && strings.Contains(r.Path, "/Actions/") && r.Status >= 400 {
					t.Errorf("the update sent an action the BMC refused: %s %s %d", r.Method, r.Path, r.Status)
				}
				pushed = pushed || (r.Method == http.MethodPost && r.Path == push && r.Status/100 == 2)
			}
			if !pushed {
				// XCC's is /mfwupdate, outside /redfish/.
				t.Errorf("the image was not pushed to the capture's MultipartHttpPushUri %q", push)
			}
		})
	}
}

// A BMC reset takes the type the Manager allows: the DGX's MegaRAC lists
// only ForceRestart, in its ActionInfo.
func TestBMCResetOnTheDGXCapture(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	e, fb, client, srv := captureEmu(t, "redfish/ami/dgx-h100-megarac", clk)
	if code := rawReset(t, srv, "/redfish/v1/Managers/BMC/Actions/Manager.Reset", "GracefulRestart"); code != http.StatusBadRequest {
		t.Fatalf("GracefulRestart answered %d; the capture allows ForceRestart only", code)
	}
	if err := client.Reset(context.Background(), "m1", firmware.ResetBMC); err != nil {
		t.Fatalf("BMC reset: %v", err)
	}
	if rs := fb.State().Resets; len(rs) != 1 || rs[0] != "BMCReset" {
		t.Errorf("resets %v, want one BMC reset", rs)
	}
	_ = e
}

// serveConnector is a connector pinned to srv's certificate.
func serveConnector(t *testing.T, srv *httptest.Server) (*redfish.Connector, string) {
	t.Helper()
	sum := sha256.Sum256(srv.Certificate().Raw)
	pin := hex.EncodeToString(sum[:])
	return &redfish.Connector{TLSFor: func(_, _ string) redfish.TLS { return redfish.TLS{FingerprintSHA256: pin} }}, srv.Listener.Addr().String()
}

// Lockdown where the captures show it: XCC's IPMI-over-KCS access (off in
// the capture: lockdown on) and Supermicro's SysLockdown (off in the
// capture); read, changed and read back through the emulator serving the
// capture. The DGX's MegaRAC shows none.
func TestLockdownOnRealCaptures(t *testing.T) {
	for _, c := range []struct {
		dir  string
		want firmware.LockdownState
	}{
		{"redfish/lenovo/sr670v2-xcc", firmware.LockdownEnabled},
		{"redfish/supermicro/sys-821ge-tnhr", firmware.LockdownDisabled},
		{"redfish/ami/dgx-h100-megarac", firmware.LockdownNone},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			clk := clock.NewFake(clock.Epoch)
			e, fb, client, _ := captureEmu(t, c.dir, clk)
			ctx := context.Background()
			got, err := client.Lockdown(ctx, "m1")
			if err != nil || got != c.want {
				t.Fatalf("Lockdown = %q, %v; want %q", got, err, c.want)
			}
			if c.want == firmware.LockdownNone {
				if err := client.SetLockdown(ctx, "m1", true); err != nil || e.Writes() != 0 {
					t.Errorf("SetLockdown on a BMC without lockdown: %v, %d writes", err, e.Writes())
				}
				return
			}
			flip := c.want != firmware.LockdownEnabled
			if err := client.SetLockdown(ctx, "m1", flip); err != nil {
				t.Fatal(err)
			}
			if fb.State().Lockdown != flip {
				t.Errorf("the BMC's lockdown is %v, want %v", fb.State().Lockdown, flip)
			}
			want := map[bool]firmware.LockdownState{true: firmware.LockdownEnabled, false: firmware.LockdownDisabled}[flip]
			if got, err := client.Lockdown(ctx, "m1"); err != nil || got != want {
				t.Errorf("Lockdown after the change = %q, %v; want %q", got, err, want)
			}
		})
	}
}
