package hostforge

import (
	"fmt"
	"regexp"
	"sort"
	"sync"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]*Spec{}
	codeRE     = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// Declare registers a failure code and returns its Spec. Call it once per code,
// at package level, with literal field values: the catalogue generator reads
// those declarations from the source. Declaring a code twice, an invalid code,
// or a Spec without owner or action panics at init, so a bad declaration can
// never ship.
func Declare(s Spec) *Spec {
	if !codeRE.MatchString(s.Code) {
		panic(fmt.Sprintf("hostforge: invalid failure code %q", s.Code))
	}
	if s.Owner == "" || s.Action == "" || s.Phase == "" {
		panic(fmt.Sprintf("hostforge: failure code %s needs a phase, an owner and an action", s.Code))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[s.Code]; dup {
		panic(fmt.Sprintf("hostforge: failure code %s declared twice", s.Code))
	}
	p := &s
	registry[s.Code] = p
	return p
}

// Codes returns every code declared by the packages linked into this program,
// sorted by code.
func Codes() []Spec {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Spec, 0, len(registry))
	for _, s := range registry {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// Lookup returns the Spec of a declared code.
func Lookup(code string) (Spec, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	s, ok := registry[code]
	if !ok {
		return Spec{}, false
	}
	return *s, true
}
