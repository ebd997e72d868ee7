package firmware_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hostforge/hostforge/firmware"
)

// lostClear is managed hosts whose ClearUpdateReport takes effect and
// loses its answer the first n times.
type lostClear struct {
	firmware.Hosts
	n int
}

func (h *lostClear) ClearUpdateReport(ctx context.Context, m string) error {
	err := h.Hosts.ClearUpdateReport(ctx, m)
	if h.n > 0 {
		h.n--
		return errors.New("connection reset after the write")
	}
	return err
}

// inventorySpy records, at each inventory read, whether the host carried
// its update report.
type inventorySpy struct {
	firmware.BMCClient
	hosts    firmware.Hosts
	reported []bool
}

func (b *inventorySpy) Inventory(ctx context.Context, m string) (firmware.Inventory, error) {
	h, _, _ := b.hosts.Get(ctx, m)
	b.reported = append(b.reported, h.UpdateReport)
	return b.BMCClient.Inventory(ctx, m)
}

// A hand-back that removed the update report and then failed (its answers
// lost past the error budget) leaves the host unprotected; the retry sets
// the report again before it reads anything — the host is never updated,
// nor checked, while it could be allocated.
func TestRetryAfterAFailedHandBackProtectsTheHostAgain(t *testing.T) {
	w := newWorld(t, firmware.Settings{MaxTransientErrors: 2, MaxRetries: 3})
	w.dell("d1", firmware.HostReady)
	hosts := &lostClear{Hosts: w.hosts, n: 3}
	spy := &inventorySpy{BMCClient: w.bmcs, hosts: w.hosts}
	w.exec.Hosts, w.exec.BMC = hosts, spy
	w.request("d1")
	res, err := w.update("d1")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("= %+v, %v", res, err)
	}
	retried := false
	for _, e := range w.events {
		retried = retried || e.Step == firmware.StepFailedFirmwareUpgrade
	}
	if !retried {
		t.Fatal("the hand-back never failed: the test does not test anything")
	}
	for i, on := range spy.reported {
		if !on {
			t.Errorf("inventory read %d of %d with the host out of its update report: %v", i+1, len(spy.reported), spy.reported)
			break
		}
	}
	w.handedBack("d1")
}
