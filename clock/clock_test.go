package clock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
)

func TestFakeSleepAdvances(t *testing.T) {
	c := clock.NewFake(clock.Epoch)
	ctx := context.Background()
	if err := c.Sleep(ctx, 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	c.Advance(-time.Hour) // never backwards
	if got := c.Now().Sub(clock.Epoch); got != 15*time.Minute {
		t.Fatalf("advanced %s", got)
	}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _ = c.Sleep(ctx, time.Second) }()
	}
	wg.Wait()
	if got := c.Now().Sub(clock.Epoch); got != 15*time.Minute+10*time.Second {
		t.Fatalf("concurrent sleeps advanced to %s", got)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Sleep(cctx, time.Hour); err == nil {
		t.Fatal("sleep on a cancelled context succeeded")
	}
	if got := c.Now().Sub(clock.Epoch); got != 15*time.Minute+10*time.Second {
		t.Fatal("a cancelled sleep moved the clock")
	}
}

func TestRealSleep(t *testing.T) {
	var c clock.Clock = clock.Real{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on a cancelled context = %v", err)
	}
	if err := c.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := c.Sleep(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if c.Now().IsZero() {
		t.Fatal("zero time")
	}
}
