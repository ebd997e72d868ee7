package ssh_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hostforge/hostforge/dhcp"
)

// Round trips of the phase against the in-process SSH+SFTP server: the skip
// path (dial, one hash command) and the changed path (dial, hash, mkdir,
// SFTP upload, config test, restart, status).
func benchPhase(b *testing.B) (*dhcp.Phase, dhcp.Entry) {
	f := newFixture(b)
	dir := b.TempDir()
	cfg := dhcp.Config{Dir: filepath.Join(dir, "hostforge.d"), ConfigTest: "true", Restart: "true", Status: "true"}
	return dhcp.New(f.dialer(b), cfg, nil), dhcp.Entry{Hostname: "bench-01", MAC: "0a:00:00:00:09:01", IP: "10.10.9.1"}
}

func BenchmarkConfigureSkip(b *testing.B) {
	p, e := benchPhase(b)
	ctx := context.Background()
	if _, err := p.Configure(ctx, e); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := p.Configure(ctx, e)
		if err != nil || res.Changed {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}

func BenchmarkConfigureChanged(b *testing.B) {
	p, e := benchPhase(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		e.IP = fmt.Sprintf("10.10.%d.%d", i/250%250, i%250+1)
		res, err := p.Configure(ctx, e)
		if err != nil || !res.Changed {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}
