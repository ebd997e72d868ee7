package verify

import (
	"bytes"
	"testing"
)

// The decoder-free reading of a [type, "hex"] pair agrees with the JSON
// decoder wherever it accepts a pair, and leaves everything else to it.
func FuzzPairFastAgreesWithTheDecoder(f *testing.F) {
	for _, s := range []string{`[1,"04c47ee0e4553f"]`, `[0,""]`, ` [ 127 , "AbCd" ] `, `[128,"00"]`, `[007,"00"]`, `[1,"0"]`,
		`[1,"0g"]`, `[1.0,"00"]`, `[-1,"00"]`, `[1,"00",2]`, `[1,"\u0030\u0030"]`, `[1,"00"]x`, `[1 "00"]`, `["1","00"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := parsePairFast(b)
		if !ok {
			return
		}
		slow, err := parsePairJSON(b)
		if err != nil {
			t.Fatalf("%q: the fast reading accepts it (%+v), the decoder refuses it: %v", b, fast, err)
		}
		if fast.Type != slow.Type || !bytes.Equal(fast.Value, slow.Value) {
			t.Fatalf("%q: fast %+v, decoder %+v", b, fast, slow)
		}
	})
}

func TestPairFastReadsIPAsShape(t *testing.T) {
	for in, want := range map[string]bool{`[1,"04c47ee0e4553f"]`: true, `[0,""]`: true, ` [ 127 , "AbCd" ] `: true,
		`[128,"00"]`: false, `[007,"00"]`: false, `[1,"0"]`: false, `[1.0,"00"]`: false, `[1,"\u0030\u0030"]`: false, `[1,"00"]x`: false} {
		if _, ok := parsePairFast([]byte(in)); ok != want {
			t.Errorf("%s: fast reading %v, want %v", in, ok, want)
		}
	}
}
