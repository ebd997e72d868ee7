// Package bytesize reads and writes the sizes of the config and of the
// messages that name a cap: a whole number of bytes, or one with a binary
// unit (16GiB, 512 MiB).
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var units = []struct {
	name  string
	shift uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// Parse reads "N", "N B", "N KiB", "N MiB", "N GiB" or "N TiB"; N is a
// whole number above 0.
func Parse(s string) (int64, error) {
	text := strings.TrimSpace(s)
	num, shift := text, uint(0)
	for _, u := range units {
		if strings.HasSuffix(text, u.name) {
			num, shift = strings.TrimSpace(strings.TrimSuffix(text, u.name)), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q: want a size in bytes, or with a unit: KiB, MiB, GiB, TiB (16GiB)", text)
	case n <= 0:
		return 0, fmt.Errorf("%q: want more than 0", text)
	case n > math.MaxInt64>>shift:
		return 0, fmt.Errorf("%q: too large", text)
	}
	return n << shift, nil
}

// Format writes n in the largest binary unit that divides it ("16 GiB",
// "1000 bytes").
func Format(n int64) string {
	for _, u := range units[:len(units)-1] {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
