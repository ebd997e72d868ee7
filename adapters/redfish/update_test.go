package redfish_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwaretest"
	"github.com/hostforge/hostforge/internal/realdata"
)

// fwRig is the Redfish firmware client against one emulated BMC.
type fwRig struct {
	emu    *redfishemu.Emulator
	fb     *fakes.FirmwareBMC
	client *redfish.Firmware
	clk    *clock.Fake
	dir    string
	logs   *bytes.Buffer
}

func newFWRig(t *testing.T, e *redfishemu.Emulator, clk *clock.Fake, o redfishemu.FirmwareOptions) *fwRig {
	t.Helper()
	fb, err := e.EnableFirmware(o)
	if err != nil {
		t.Fatal(err)
	}
	c, addr := serve(t, e)
	logs := &bytes.Buffer{}
	user := e.AdminUser()
	f := &redfish.Firmware{Connector: c, Log: slog.New(slog.NewTextHandler(logs, nil)),
		Locate: func(_ context.Context, machine string) (string, bmc.Credential, error) {
			return addr, bmc.Credential{Username: user, Password: adminPW}, nil
		}}
	return &fwRig{emu: e, fb: fb, client: f, clk: clk, dir: t.TempDir(), logs: logs}
}

// artifact writes an image file and registers what it installs.
func (r *fwRig) artifact(t *testing.T, name string, img fakes.FirmwareImage) firmware.UploadRequest {
	t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, []byte("firmware image "+name+strings.Repeat("\x00\xff", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	if img.Version != "" || img.Targets != nil {
		r.fb.AddImage(name, img)
	}
	return firmware.UploadRequest{Artifact: firmware.Artifact{Filename: p}, Path: p, Count: 1}
}

func TestFirmwareContractOverEmulator(t *testing.T) {
	firmwaretest.RunBMC(t, func(t *testing.T) firmwaretest.BMCHarness {
		clk := clock.NewFake(clock.Epoch)
		r := newFWRig(t, newEmu(t, "dell", clk), clk, redfishemu.FirmwareOptions{Members: firmwaretest.DellMembers})
		return firmwaretest.BMCHarness{Client: r.client, Machine: "m1", FW: r.fb, Clock: clk, Artifact: r.artifact}
	})
}

// The inventory the adapter reads live from the emulator serving a real
// capture equals what the offline reader finds in the same capture.
func TestFirmwareInventoryOfRealCaptures(t *testing.T) {
	for _, dir := range []string{"redfish/dell/r750-idrac9", "redfish/lenovo/sr670v2-xcc", "redfish/ami/dgx-h100-megarac", "redfish/supermicro/sys-821ge-tnhr"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			path := realdata.Path(t, dir)
			clk := clock.NewFake(clock.Epoch)
			e, err := redfishemu.FromDir(path, redfishemu.Options{Clock: clk, AdminUser: "hostforge", AdminPassword: adminPW})
			if err != nil {
				t.Fatal(err)
			}
			r := newFWRig(t, e, clk, redfishemu.FirmwareOptions{})
			live, err := r.client.Inventory(context.Background(), "m1")
			if err != nil {
				t.Fatal(err)
			}
			saved, err := firmware.ReadSavedTree(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(live, saved.Inventory) {
				t.Errorf("live inventory\n %+v\nsaved tree\n %+v", live, saved.Inventory)
			}
			if len(live.Entries) < 10 {
				t.Errorf("only %d entries", len(live.Entries))
			}
		})
	}
}

func TestFirmwarePushCarriesTargetsOnlyWhenInstallOnlySpecified(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	r := newFWRig(t, newEmu(t, "dell", clk), clk, redfishemu.FirmwareOptions{Members: firmwaretest.DellMembers})
	ctx := context.Background()
	bios := firmwaretest.DellMembers[0].ID
	img := fakes.FirmwareImage{Targets: []string{bios}, Version: "1.13.2", Activation: fakes.ActivateHostReboot}
	plain := r.artifact(t, "bios.exe", img)
	plain.Targets = []string{bios} // ignored without install_only_specified
	if _, err := r.client.Upload(ctx, "m1", plain); err != nil {
		t.Fatal(err)
	}
	only := r.artifact(t, "bios2.exe", img)
	only.InstallOnlySpecified, only.Targets = true, []string{bios}
	if _, err := r.client.Upload(ctx, "m1", only); err != nil {
		t.Fatal(err)
	}
	ps := r.emu.UpdateParameters()
	if len(ps) != 2 {
		t.Fatalf("pushes %d", len(ps))
	}
	if _, ok := ps[0]["Targets"]; ok {
		t.Errorf("a plain push carried Targets: %v", ps[0])
	}
	want := []any{"/redfish/v1/UpdateService/FirmwareInventory/" + bios}
	if !reflect.DeepEqual(ps[1]["Targets"], want) {
		t.Errorf("Targets %v, want %v", ps[1]["Targets"], want)
	}
	for _, req := range r.emu.Requests() {
		if strings.Contains(req.Path, "SimpleUpdate") {
			t.Errorf("SimpleUpdate used on a BMC with a multipart push: %+v", req)
		}
	}
}

func TestFirmwareSimpleUpdateOnlyWithoutMultipart(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	r := newFWRig(t, newEmu(t, "ami", clk), clk, redfishemu.FirmwareOptions{NoMultipart: true, Members: []fakes.FirmwareMember{{ID: "HostBIOS_0", Version: "01.01.03"}}})
	r.fb.AddImage("dgx-bios.bin", fakes.FirmwareImage{Targets: []string{"HostBIOS_0"}, Version: "01.02.00", Activation: fakes.ActivateHostReboot})
	ctx := context.Background()
	cases := []struct {
		name    string
		req     firmware.UploadRequest
		refused bool
	}{
		{"a URL the BMC fetches", firmware.UploadRequest{Artifact: firmware.Artifact{URL: "https://user:secret@fw.example.net/dgx/dgx-bios.bin?token=abc"}}, false},
		{"a local file only", firmware.UploadRequest{Artifact: firmware.Artifact{Filename: "/srv/fw/dgx-bios.bin"}, Path: "/srv/fw/dgx-bios.bin"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task, err := r.client.Upload(ctx, "m1", c.req)
			if c.refused {
				if !firmware.BMCRefused.Is(err) {
					t.Fatalf("Upload = %q, %v; want FIRMWARE_BMC_REFUSED", task, err)
				}
				return
			}
			if err != nil || task == "" {
				t.Fatalf("Upload = %q, %v", task, err)
			}
			logs := r.logs.String()
			if !strings.Contains(logs, "SimpleUpdate") || strings.Contains(logs, "secret") || strings.Contains(logs, "token=") {
				t.Errorf("the fallback is not logged, or the log carries the URL's secrets:\n%s", logs)
			}
		})
	}
}

func TestFirmwareMissingArtifactFile(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	r := newFWRig(t, newEmu(t, "dell", clk), clk, redfishemu.FirmwareOptions{Members: firmwaretest.DellMembers})
	_, err := r.client.Upload(context.Background(), "m1", firmware.UploadRequest{Artifact: firmware.Artifact{Filename: filepath.Join(r.dir, "absent.exe")}})
	if !firmware.ArtifactMissing.Is(err) {
		t.Fatalf("Upload of a missing file: %v; want FIRMWARE_ARTIFACT_MISSING", err)
	}
	if r.emu.Pushes() != 0 {
		t.Error("something was pushed")
	}
}

func TestFirmwareLockdownOnlyWhereTheVendorHasIt(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	r := newFWRig(t, newEmu(t, "ami", clk), clk, redfishemu.FirmwareOptions{Members: []fakes.FirmwareMember{{ID: "HostBMC_0", Version: "23.11.21"}}})
	if got, err := r.client.Lockdown(context.Background(), "m1"); err != nil || got != firmware.LockdownNone {
		t.Fatalf("Lockdown of a MegaRAC = %q, %v; want none", got, err)
	}
	if err := r.client.SetLockdown(context.Background(), "m1", false); err != nil {
		t.Fatal(err)
	}
	if r.emu.Writes() != 0 {
		t.Errorf("lockdown on a BMC without it wrote %d times", r.emu.Writes())
	}
}

// On a real AMI MegaRAC capture, whose TaskService keeps nine Computer
// Reset tasks, the adapter lists them as no firmware update; a push whose
// connection dropped after the BMC took it is told apart from them and
// from an earlier push (firmware.PushTask), and a SimpleUpdate's task
// names its image.
func TestLostPushOnARealTaskService(t *testing.T) {
	path := realdata.Path(t, "redfish/ami/dgx-h100-megarac")
	clk := clock.NewFake(clock.Epoch)
	e, err := redfishemu.FromDir(path, redfishemu.Options{Clock: clk, AdminUser: "hostforge", AdminPassword: adminPW})
	if err != nil {
		t.Fatal(err)
	}
	r := newFWRig(t, e, clk, redfishemu.FirmwareOptions{})
	ctx := context.Background()
	l, err := r.client.Tasks(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Tasks) != 9 || l.Now.IsZero() {
		t.Fatalf("the capture's tasks: %+v (BMC clock %s); want its nine", l.Tasks, l.Now)
	}
	for _, x := range l.Tasks {
		if x.Update || x.Name != "Computer Reset" {
			t.Errorf("capture task %+v read as a firmware update", x)
		}
	}
	inv, err := r.client.Inventory(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	target := inv.Entries[0]
	earlier := r.artifact(t, "hgx-a.fwpkg", fakes.FirmwareImage{Targets: []string{target.ID}, Version: "9.9.9", Activation: fakes.ActivateHostReboot})
	if _, err := r.client.Upload(ctx, "m1", earlier); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	if l, err = r.client.Tasks(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	p := firmware.Push{MachineID: "m1", ID: "1-upload-2-0", Component: firmware.HGXBMC, Version: "9.9.10", Image: "hgx-b.fwpkg", At: clk.Now(), Listed: true}
	for _, x := range l.Tasks {
		p.Seen = append(p.Seen, firmware.SeenTask{ID: x.ID, Start: x.Start})
	}
	lost := r.artifact(t, "hgx-b.fwpkg", fakes.FirmwareImage{Targets: []string{target.ID}, Version: "9.9.10", Activation: fakes.ActivateHostReboot})
	r.fb.FailLost("upload", 1, fmt.Errorf("the connection dropped after the image was taken: %w", hostforge.ErrUnavailable))
	if _, err := r.client.Upload(ctx, "m1", lost); err == nil {
		t.Fatal("the lost push reported no error")
	}
	clk.Advance(30 * time.Second)
	if l, err = r.client.Tasks(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	got, ok := firmware.PushTask(p, l, clk.Now())
	if !ok || len(l.Tasks) != 11 {
		t.Fatalf("PushTask over %d tasks = %+v, %v; want the lost push's", len(l.Tasks), got, ok)
	}
	if st, err := r.client.Task(ctx, "m1", got.ID); err != nil || st.State != firmware.TaskRunning {
		t.Fatalf("the found task %s polls %+v, %v", got.ID, st, err)
	}
	if got.ID == l.Tasks[9].ID {
		t.Fatalf("PushTask took the earlier push's task %s", got.ID)
	}
}

// A SimpleUpdate's task carries its request as the payload: the adapter
// reads the image's file name from it.
func TestSimpleUpdateTaskNamesItsImage(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	r := newFWRig(t, newEmu(t, "ami", clk), clk, redfishemu.FirmwareOptions{NoMultipart: true, Members: []fakes.FirmwareMember{{ID: "HostBIOS_0", Version: "01.01.03"}}})
	r.fb.AddImage("dgx-bios.bin", fakes.FirmwareImage{Targets: []string{"HostBIOS_0"}, Version: "01.02.00", Activation: fakes.ActivateHostReboot})
	ctx := context.Background()
	id, err := r.client.Upload(ctx, "m1", firmware.UploadRequest{Artifact: firmware.Artifact{URL: "https://fw.example.net/dgx/dgx-bios.bin?token=abc"}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := r.client.Tasks(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range l.Tasks {
		if x.ID == id {
			if !x.Update || x.Image != "dgx-bios.bin" {
				t.Fatalf("the SimpleUpdate's task = %+v; want an update naming dgx-bios.bin", x)
			}
			return
		}
	}
	t.Fatalf("task %s not listed: %+v", id, l.Tasks)
}
