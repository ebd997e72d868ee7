package bytesize_test

import (
	"testing"

	"github.com/hostforge/hostforge/internal/bytesize"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"512": 512, "16GiB": 16 << 30, "512 MiB": 512 << 20, "64KiB": 64 << 10, "3 B": 3, "1TiB": 1 << 40} {
		if got, err := bytesize.Parse(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "16GB", "1.5GiB", "GiB", "9999999TiB", "16 gib"} {
		if got, err := bytesize.Parse(in); err == nil {
			t.Errorf("%q: accepted as %d", in, got)
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{16 << 30: "16 GiB", 512 << 20: "512 MiB", 16 << 10: "16 KiB", 1000: "1000 bytes", 1536: "1536 bytes", 3 << 40: "3 TiB"} {
		if got := bytesize.Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}
