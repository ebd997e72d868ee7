package redfish_test

import (
	"context"
	"crypto/md5" //nolint:gosec // the catalog's legacy checksum of a local file is MD5
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwaretest"
)

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// The upload step resolves (downloads, verifies) an artifact, then the
// adapter opens the file again to push it: bytes changed in between —
// rewritten in place, or another file renamed over the path — were pushed
// as if verified. The push hashes what it sends and withholds the last
// byte unless the digest matches, so the BMC never receives a whole image
// that is not the verified one.
func TestFirmwarePushSendsOnlyTheVerifiedBytes(t *testing.T) {
	verified := []byte("firmware image bios.exe" + strings.Repeat("\x00\xff", 64<<10))
	tampered := append([]byte("FIRMWARE IMAGE BIOS.EXE"), verified[23:]...)
	md := md5.Sum(verified) //nolint:gosec
	cases := []struct {
		name   string
		digest firmware.Artifact
		swap   func(t *testing.T, p string)
	}{
		{"rewritten in place", firmware.Artifact{SHA256: sha256Hex(verified)}, func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.WriteAt(tampered[:23], 0)
			_ = f.Close()
		}},
		{"renamed over", firmware.Artifact{SHA256: sha256Hex(verified)}, func(t *testing.T, p string) {
			other := p + ".other"
			if err := os.WriteFile(other, tampered, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, p); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", firmware.Artifact{SHA256: sha256Hex(verified)}, func(t *testing.T, p string) {
			if err := os.Truncate(p, int64(len(verified)/2)); err != nil {
				t.Fatal(err)
			}
		}},
		{"grown", firmware.Artifact{SHA256: sha256Hex(verified)}, func(t *testing.T, p string) {
			if err := os.WriteFile(p, append(append([]byte(nil), verified...), "trailer"...), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"a local file's legacy MD5", firmware.Artifact{Checksum: hex.EncodeToString(md[:])}, func(t *testing.T, p string) {
			if err := os.WriteFile(p, tampered, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewFake(clock.Epoch)
			r := newFWRig(t, newEmu(t, "dell", clk), clk, redfishemu.FirmwareOptions{Members: firmwaretest.DellMembers})
			r.fb.AddImage("bios.exe", fakes.FirmwareImage{Targets: []string{firmwaretest.DellMembers[0].ID}, Version: "1.13.2", Activation: fakes.ActivateHostReboot})
			p := filepath.Join(r.dir, "bios.exe")
			if err := os.WriteFile(p, verified, 0o600); err != nil {
				t.Fatal(err)
			}
			a := c.digest
			a.Filename = p
			req := firmware.UploadRequest{Artifact: a, Path: p, Count: 1}
			// Unchanged, it is pushed.
			if _, err := r.client.Upload(context.Background(), "m1", req); err != nil {
				t.Fatalf("the verified file: %v", err)
			}
			c.swap(t, p)
			task, err := r.client.Upload(context.Background(), "m1", req)
			if !firmware.ArtifactMissing.Is(err) || !strings.Contains(err.Error(), "bios.exe") {
				t.Fatalf("Upload of a changed file = %q, %v; want FIRMWARE_ARTIFACT_MISSING", task, err)
			}
			if n := r.emu.Pushes(); n != 1 {
				t.Errorf("the BMC accepted %d pushes, want the verified one only", n)
			}
		})
	}
}

// An artifact the catalog gives no digest (a local file) is pushed as it
// is, as before.
func TestFirmwarePushWithoutDigest(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	r := newFWRig(t, newEmu(t, "dell", clk), clk, redfishemu.FirmwareOptions{Members: firmwaretest.DellMembers})
	req := r.artifact(t, "bios.exe", fakes.FirmwareImage{Targets: []string{firmwaretest.DellMembers[0].ID}, Version: "1.13.2", Activation: fakes.ActivateHostReboot})
	if _, err := r.client.Upload(context.Background(), "m1", req); err != nil || r.emu.Pushes() != 1 {
		t.Fatalf("Upload = %v, pushes %d", err, r.emu.Pushes())
	}
}
