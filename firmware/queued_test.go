package firmware_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/flow"
)

// countingResolver counts the artifact resolutions (a download and a
// hash each in the real cache).
type countingResolver struct{ n atomic.Int32 }

func (c *countingResolver) Resolve(_ context.Context, a firmware.Artifact) (string, error) {
	c.n.Add(1)
	return a.Filename, nil
}

// slotRuntime frees the slot another worker holds after some of the
// body's sleeps: the host waits for a slot meanwhile.
type slotRuntime struct {
	*flow.Local
	store  firmware.Store
	sleeps int
	free   int
}

func (r *slotRuntime) Sleep(ctx context.Context, d time.Duration) error {
	r.sleeps++
	if r.sleeps == r.free {
		if err := r.store.ReleaseUploadSlot(ctx, "another-host"); err != nil {
			return err
		}
	}
	return r.Local.Sleep(ctx, d)
}

// A host queued behind max_uploads resolves (downloads, hashes) its
// artifact once per upload, after it took its slot — not at every look
// for a free slot (a queued host used to hash it at each one: 242 times
// for 2 uploads).
func TestArtifactResolvedOncePerUploadWhenQueued(t *testing.T) {
	w := newWorld(t, firmware.Settings{MaxUploads: 1})
	res := &countingResolver{}
	w.exec.Artifacts = res
	ctx := context.Background()
	w.dell("d1", firmware.HostReady)
	w.request("d1")
	got, err := w.store.AcquireUploadSlot(ctx, "another-host", 1, w.clk.Now(), 24*time.Hour)
	if err != nil || !got {
		t.Fatal(got, err)
	}
	rt := &slotRuntime{Local: w.runtime(), store: w.store, free: 40}
	r, err := firmware.Update(ctx, rt, firmware.UpdateInput{MachineID: "d1"})
	if err != nil || r.Outcome != firmware.OutcomeDone {
		t.Fatalf("= %+v, %v", r, err)
	}
	if rt.sleeps < 40 {
		t.Fatalf("the host never waited for a slot (%d sleeps)", rt.sleeps)
	}
	if n := res.n.Load(); int(n) != r.Uploads || n != 2 {
		t.Errorf("%d resolutions for %d uploads (uefi and bmc), want one each", n, r.Uploads)
	}
	w.handedBack("d1")
}
