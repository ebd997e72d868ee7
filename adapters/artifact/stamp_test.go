package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/artifact"
	"github.com/hostforge/hostforge/firmware"
)

// A verified file is not hashed again while it is unchanged (device,
// inode, size, modification time); a file rewritten in place, or renamed
// over, is — and one that no longer matches is refused.
func TestResolveHashesAnUnchangedFileOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bios.exe")
	image := []byte("BIOS image 1.13.2")
	if err := os.WriteFile(p, image, 0o600); err != nil {
		t.Fatal(err)
	}
	c := &artifact.Cache{Dir: filepath.Join(dir, "cache")}
	a := firmware.Artifact{Filename: p, SHA256: sum(image)}
	ctx := context.Background()
	for range 5 {
		if _, err := c.Resolve(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.Hashes(); n != 1 {
		t.Fatalf("%d hashes for 5 resolutions of an unchanged file, want 1", n)
	}
	// Rewritten in place with other bytes: its time changed, it is hashed
	// and refused.
	later := time.Now().Add(time.Minute)
	if err := os.WriteFile(p, []byte("BIOS image 6.66.6"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(p, later, later)
	if _, err := c.Resolve(ctx, a); !firmware.ArtifactMissing.Is(err) {
		t.Fatalf("a changed file: %v; want FIRMWARE_ARTIFACT_MISSING", err)
	}
	// Renamed over by the right bytes again: hashed, and good.
	tmp := filepath.Join(dir, "new")
	if err := os.WriteFile(tmp, image, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resolve(ctx, a); err != nil {
		t.Fatal(err)
	}
	if n := c.Hashes(); n != 3 {
		t.Errorf("%d hashes, want 3 (first, changed, renamed over)", n)
	}
}
