package wiring

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ByteSize is a size in the config: a whole number of bytes, or one with a
// binary unit — 16GiB, 512 MiB, 64KiB. It caps what a download may bring
// in (firmware.artifact_max_bytes, extensions.asset_max_bytes); left out,
// the cap is the component's default.
type ByteSize int64

var byteUnits = []struct {
	name  string
	shift uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// UnmarshalText reads "N", "N B", "N KiB", "N MiB", "N GiB" or "N TiB".
func (s *ByteSize) UnmarshalText(b []byte) error {
	text := strings.TrimSpace(string(b))
	num, shift := text, uint(0)
	for _, u := range byteUnits {
		if strings.HasSuffix(text, u.name) {
			num, shift = strings.TrimSpace(strings.TrimSuffix(text, u.name)), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err != nil:
		return fmt.Errorf("%q: want a size in bytes, or with a unit: KiB, MiB, GiB, TiB (16GiB)", text)
	case n <= 0:
		return fmt.Errorf("%q: want more than 0 (leave the key out for the default)", text)
	case n > math.MaxInt64>>shift:
		return fmt.Errorf("%q: too large", text)
	}
	*s = ByteSize(n << shift)
	return nil
}
