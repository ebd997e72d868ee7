package firmwarefake

import (
	"sort"
	"strings"

	"github.com/hostforge/hostforge/firmware"
)

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// sortOverrides orders overrides oldest first, ties by their key.
func sortOverrides(o []firmware.Override) {
	sort.SliceStable(o, func(i, j int) bool {
		a, b := o[i], o[j]
		if !a.UpdatedAt.Equal(b.UpdatedAt) {
			return a.UpdatedAt.Before(b.UpdatedAt)
		}
		ka := a.Vendor + "\x00" + a.Model + "\x00" + string(a.Component) + "\x00" + a.Entry.Version
		kb := b.Vendor + "\x00" + b.Model + "\x00" + string(b.Component) + "\x00" + b.Entry.Version
		return ka < kb
	})
}
