package wiring_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/extensions"
)

// The extensions: section's render limits reach the dispatcher; values
// out of range are CONFIG_INVALID naming the key.
func TestRenderLimitsFromTheConfig(t *testing.T) {
	r := newRig(t, fakeIronicRoot(t, "1.82"))
	defs := t.TempDir()
	sys, err := r.open(t, context.Background(), r.cfg+"extensions:\n  definitions: "+defs+"\n  render_budget: 16MiB\n  render_timeout: 500ms\n", wiring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sys.Extensions.Limits; got != (extensions.RenderLimits{Budget: 16 << 20, Timeout: 500 * time.Millisecond}) {
		t.Fatalf("dispatcher limits %+v, want the config's", got)
	}
	sys, err = r.open(t, context.Background(), r.cfg+"extensions:\n  definitions: "+defs+"\n", wiring.Options{})
	if err != nil || sys.Extensions.Limits != (extensions.RenderLimits{}) {
		t.Fatalf("without the keys: %v, limits %+v; want the defaults (zero)", err, sys.Extensions.Limits)
	}
	for _, tc := range []struct{ section, want string }{
		{"  render_budget: -1\n", `extensions.render_budget: "-1": want more than 0`},
		{"  render_budget: 2GiB\n", "extensions.render_budget: 2 GiB: want more than 0 and at most 1 GiB (default 64 MiB)"},
		{"  render_budget: lots\n", `extensions.render_budget`},
		{"  render_timeout: 5m\n", "extensions.render_timeout: 5m0s: want more than 0 and at most 1m0s (default 2s)"},
		{"  render_timeout: -1s\n", "extensions.render_timeout: -1s"},
	} {
		_, err := r.open(t, context.Background(), r.cfg+"extensions:\n  definitions: "+defs+"\n"+tc.section, wiring.Options{})
		if f, ok := hostforge.AsFailure(err); !ok || f.Code != wiring.ConfigInvalid.Code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %s containing %q", tc.section, err, wiring.ConfigInvalid.Code, tc.want)
		}
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]wiring.ByteSize{
		"65536": 65536, "64MiB": 64 << 20, "512 KiB": 512 << 10, "1GiB": 1 << 30, "100 B": 100,
	} {
		var b wiring.ByteSize
		if err := b.UnmarshalText([]byte(in)); err != nil || b != want {
			t.Errorf("%q: %d, %v; want %d", in, b, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "lots", "1e9", "0x10", "1.5", "64 Mib", "NaN", "9999999999GiB", "2KB"} {
		var b wiring.ByteSize
		if err := b.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q accepted as %d", bad, b)
		}
	}
	if s := wiring.ByteSize(64 << 20).String(); s != "64 MiB" {
		t.Errorf("String() = %q", s)
	}
}
