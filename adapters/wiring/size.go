package wiring

import (
	"fmt"

	"github.com/hostforge/hostforge/internal/bytesize"
)

// ByteSize is a size in the config: a whole number of bytes, or one with a
// binary unit — 16GiB, 512 MiB, 64KiB. It caps what a download may bring
// in (firmware.artifact_max_bytes, extensions.asset_max_bytes); left out,
// the cap is the component's default.
type ByteSize int64

// UnmarshalText reads "N", "N B", "N KiB", "N MiB", "N GiB" or "N TiB".
func (s *ByteSize) UnmarshalText(b []byte) error {
	n, err := bytesize.Parse(string(b))
	if err != nil {
		return fmt.Errorf("%v (leave the key out for the default)", err)
	}
	*s = ByteSize(n)
	return nil
}

// String is the size in the largest binary unit that divides it ("64 MiB").
func (s ByteSize) String() string { return bytesize.Format(int64(s)) }
