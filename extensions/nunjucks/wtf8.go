package nunjucks

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// JavaScript strings are UTF-16 and may hold a surrogate without its
// other half (a lone surrogate): "😀".charAt(0), or "\ud83d" in a JSON
// payload. Go strings are UTF-8, which cannot encode one, so templates'
// strings are WTF-8: UTF-8 plus a lone surrogate U+D800–U+DFFF written as
// the three bytes UTF-8 would give it (ED A0..BF 80..BF). JSON.stringify
// (dump) writes a lone surrogate as \udxxx, as JavaScript does, and the
// rendered text, like a file Node writes, has U+FFFD in its place.

// surrogateAt decodes a WTF-8 surrogate at s[i:], or returns ok false.
func surrogateAt(s string, i int) (u uint16, ok bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F), true
	}
	return 0, false
}

// hasSurrogates reports whether s holds a WTF-8 surrogate.
func hasSurrogates(s string) bool {
	for i := strings.IndexByte(s, 0xED); i >= 0; {
		if _, ok := surrogateAt(s, i); ok {
			return true
		}
		j := strings.IndexByte(s[i+1:], 0xED)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// appendSurrogate writes the WTF-8 bytes of a lone surrogate.
func appendSurrogate(b []byte, u uint16) []byte {
	return append(b, 0xED, 0xA0|byte(u>>6)&0x1F, 0x80|byte(u)&0x3F)
}

// encodeUTF16 is s as JavaScript's UTF-16 code units.
func encodeUTF16(s string) []uint16 {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	units := make([]uint16, 0, n)
	for i := 0; i < len(s); {
		if u, ok := surrogateAt(s, i); ok {
			units = append(units, u)
			i += 3
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			units = append(units, uint16(r1), uint16(r2))
			continue
		}
		units = append(units, uint16(r))
	}
	return units
}

// decodeUTF16 is units as a WTF-8 string: pairs become their character,
// a lone surrogate stays one.
func decodeUTF16(units []uint16) string {
	return string(appendUTF16(make([]byte, 0, len(units)), units, appendSurrogate))
}

// appendUTF16 appends units to b as UTF-8: a surrogate pair becomes its
// character, a lone surrogate whatever lone appends for it.
func appendUTF16(b []byte, units []uint16, lone func(b []byte, u uint16) []byte) []byte {
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case u < 0xD800 || u > 0xDFFF:
			b = utf8.AppendRune(b, rune(u))
		case u < 0xDC00 && i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] <= 0xDFFF:
			b = utf8.AppendRune(b, utf16.DecodeRune(rune(u), rune(units[i+1])))
			i++
		default:
			b = lone(b, u)
		}
	}
	return b
}

// toUTF8 is s as text leaves a render: a surrogate pair written as two
// halves becomes its character, a lone surrogate U+FFFD.
func toUTF8(s string) string {
	if !hasSurrogates(s) {
		return s
	}
	replace := func(b []byte, _ uint16) []byte { return utf8.AppendRune(b, utf8.RuneError) }
	return string(appendUTF16(make([]byte, 0, len(s)), encodeUTF16(s), replace))
}

// joinHalves concatenates a and b as JavaScript strings: a high surrogate
// ending a and a low one starting b make one character.
func joinHalves(a, b string) string {
	if len(a) >= 3 && len(b) >= 3 {
		if hi, ok := surrogateAt(a, len(a)-3); ok && hi < 0xDC00 {
			if lo, ok := surrogateAt(b, 0); ok && lo >= 0xDC00 {
				return a[:len(a)-3] + string(utf16.DecodeRune(rune(hi), rune(lo))) + b[3:]
			}
		}
	}
	return a + b
}

// hasLoneSurrogate reports a surrogate without its other half.
func hasLoneSurrogate(s string) bool {
	return hasSurrogates(toWellFormed(s))
}

// toWellFormed joins split pairs, leaving only lone surrogates in WTF-8.
func toWellFormed(s string) string {
	if !hasSurrogates(s) {
		return s
	}
	return decodeUTF16(encodeUTF16(s))
}

// mapRunes applies f to each character of s, keeping WTF-8 surrogates as
// they are (strings.Map would turn their bytes into U+FFFD).
func mapRunes(s string, f func(string) string) string {
	if !hasSurrogates(s) {
		return f(s)
	}
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); {
		if _, ok := surrogateAt(s, i); ok {
			b.WriteString(f(s[start:i]))
			b.WriteString(s[i : i+3])
			i += 3
			start = i
			continue
		}
		i++
	}
	b.WriteString(f(s[start:]))
	return b.String()
}
