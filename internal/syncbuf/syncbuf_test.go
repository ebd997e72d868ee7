package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/hostforge/hostforge/internal/syncbuf"
)

// Writers on several goroutines and a reader meanwhile (run with -race):
// every write lands whole, and Bytes is a copy the buffer does not change.
func TestConcurrentWritesAndReads(t *testing.T) {
	var b syncbuf.Buffer
	if b.Bytes() != nil || b.String() != "" {
		t.Fatalf("an empty buffer reads %q", b.Bytes())
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				_, _ = b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	snap := b.Bytes()
	_, _ = b.Write([]byte("more"))
	if strings.Count(string(snap), "line\n") != 400 || len(snap) != 400*len("line\n") {
		t.Fatalf("read %d bytes, want 400 whole lines", len(snap))
	}
	if !strings.HasSuffix(b.String(), "line\nmore") {
		t.Fatalf("the buffer ends %q", b.String()[len(b.String())-10:])
	}
}
