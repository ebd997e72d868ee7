package redfish

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hostforge/hostforge/firmware"
)

func openImage(t *testing.T, b []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "image.bin")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func digestOf(b []byte) firmware.Digest {
	s := sha256.Sum256(b)
	return firmware.Digest{Algorithm: "sha256", Sum: s[:]}
}

// The verified image reads whole, also after the client rewinds the body
// to resend it; another image reads all but its last byte, then fails.
func TestVerifiedFileWithholdsTheLastByte(t *testing.T) {
	image := bytes.Repeat([]byte("0123456789"), 1000)
	good := &verifiedFile{f: openImage(t, image), size: int64(len(image)), want: digestOf(image), h: sha256.New()}
	for range 2 {
		got, err := io.ReadAll(good)
		if err != nil || !bytes.Equal(got, image) {
			t.Fatalf("read %d bytes, %v", len(got), err)
		}
		if _, err := good.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := good.Seek(5, io.SeekStart); err == nil {
		t.Error("a rewind to the middle was accepted")
	}

	other := append([]byte(nil), image...)
	other[len(other)-1] = 'X'
	bad := &verifiedFile{f: openImage(t, other), size: int64(len(other)), want: digestOf(image), h: sha256.New()}
	got, err := io.ReadAll(bad)
	if err == nil || bad.bad == nil {
		t.Fatal("another image read without an error")
	}
	if len(got) != len(other)-1 {
		t.Errorf("handed out %d of %d bytes, want all but the last", len(got), len(other))
	}

	empty := &verifiedFile{f: openImage(t, nil), size: 0, want: digestOf(image), h: sha256.New()}
	if _, err := io.ReadAll(empty); err == nil {
		t.Error("an empty file passed for the image")
	}
	emptyOK := &verifiedFile{f: openImage(t, nil), size: 0, want: digestOf(nil), h: sha256.New()}
	if b, err := io.ReadAll(emptyOK); err != nil || len(b) != 0 {
		t.Errorf("an empty image with its own digest: %q, %v", b, err)
	}
}
