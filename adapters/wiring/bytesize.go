package wiring

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ByteSize is a number of bytes in the config file: a plain integer, or a
// number with a binary unit: "64MiB", "512 KiB", "1.5GiB".
type ByteSize int64

// byteUnits are the units ByteSize accepts.
var byteUnits = []struct {
	name string
	n    float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1},
}

// UnmarshalText reads "64MiB", "65536" or "1.5 GiB".
func (b *ByteSize) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	num, mult := s, 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.name) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(s, u.name)), u.n
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || num == "" || strings.ContainsAny(num, "eEpPxX_") {
		return fmt.Errorf("invalid size %q (want bytes, or a number with KiB, MiB, GiB or TiB: 64MiB)", s)
	}
	n := f * mult
	if n > math.MaxInt64/2 || n < -math.MaxInt64/2 || n != math.Trunc(n) {
		return fmt.Errorf("invalid size %q: not a whole number of bytes in range", s)
	}
	*b = ByteSize(n)
	return nil
}

// MarshalText writes the size in the largest binary unit it is a whole
// number of.
func (b ByteSize) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// String is "64MiB", "1536KiB" or "100".
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.n == 0 {
			return strconv.FormatInt(int64(b)/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10)
}
