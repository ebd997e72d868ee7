package wiring

import "testing"

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"512": 512, "16GiB": 16 << 30, "512 MiB": 512 << 20, "64KiB": 64 << 10, "3 B": 3, "1TiB": 1 << 40} {
		var s ByteSize
		if err := s.UnmarshalText([]byte(in)); err != nil || int64(s) != want {
			t.Errorf("%q: %d, %v; want %d", in, s, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "16GB", "1.5GiB", "GiB", "9999999TiB", "16 gib"} {
		var s ByteSize
		if err := s.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("%q: accepted as %d", in, s)
		}
	}
}
