package hostforge

import (
	"net"
	"strings"
	"testing"
)

// The canonical-form shortcut gives what parsing and printing give.
func FuzzNormalizeMACShortcut(f *testing.F) {
	for _, s := range []string{"aa:bb:cc:dd:ee:ff", "AA:BB:CC:DD:EE:FF", " 0a:1b:2c:3d:4e:5f ", "aa-bb-cc-dd-ee-ff", "aabb.ccdd.eeff", "aa:bb:cc:dd:ee:fg", "aa:bb:cc:dd:ee:f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := NormalizeMAC(s)
		want, wantOK := strings.ToLower(strings.TrimSpace(s)), false
		if hw, err := net.ParseMAC(strings.TrimSpace(s)); err == nil {
			want, wantOK = hw.String(), true
		}
		if got != want || ok != wantOK {
			t.Fatalf("NormalizeMAC(%q) = %q %v, parsing gives %q %v", s, got, ok, want, wantOK)
		}
	})
}
