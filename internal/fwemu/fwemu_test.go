package fwemu_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/internal/fwemu"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}

// The emulators never see more pushes in flight than there are upload
// slots, though every host is ready to upload at once: the slot is held
// until the push has finished.
func TestUploadsInFlightNeverExceedMaxUploads(t *testing.T) {
	cases := []struct {
		name                 string
		hosts, slots, workes int
	}{
		{"one worker", 9, 3, 1},
		{"three workers sharing the store", 9, 2, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := fwemu.Run(context.Background(), fwemu.Config{Hosts: c.hosts, MaxUploads: c.slots, Workers: c.workes, UploadHold: 60 * time.Millisecond, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Compliant != c.hosts || rep.Pushes != c.hosts {
				t.Errorf("compliant %d, pushes %d; want %d each", rep.Compliant, rep.Pushes, c.hosts)
			}
			if rep.Peak > c.slots {
				t.Errorf("peak %d pushes in flight with %d slots", rep.Peak, c.slots)
			}
			if rep.Peak < 2 {
				t.Errorf("peak %d: the pushes never overlapped, so the test shows nothing", rep.Peak)
			}
			if rep.Took < rep.Limit {
				t.Errorf("took %s, below the back-to-back limit %s: uploads were not serialised by the slots", rep.Took, rep.Limit)
			}
		})
	}
}
