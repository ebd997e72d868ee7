package nunjucks

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of parsed JSON and of dumped values.
const maxDepth = 512

// FromJSON parses JSON text into template values exactly as JavaScript's
// JSON.parse does: numbers become doubles, object keys keep JavaScript's
// order, and a repeated key keeps its first position and its last value.
func FromJSON(b []byte) (any, error) {
	p := jsonParser{b: b}
	p.skip()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i != len(p.b) {
		return nil, p.errf("unexpected %q after the JSON value", p.b[p.i])
	}
	return v, nil
}

// FromGo converts a Go value (structs with json tags, maps, slices,
// scalars) into template values through its JSON encoding.
func FromGo(v any) (any, error) {
	switch x := v.(type) {
	case *Object, *Array, string, float64, bool, nil:
		return x, nil
	case json.RawMessage:
		return FromJSON(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return FromJSON(b)
}

type jsonParser struct {
	b []byte
	i int
}

func (p *jsonParser) errf(format string, args ...any) error {
	return fmt.Errorf("JSON at offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *jsonParser) skip() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("nested deeper than %d", maxDepth)
	}
	if p.i >= len(p.b) {
		return nil, p.errf("unexpected end of JSON")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		o := NewObject(8)
		p.skip()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return o, nil
		}
		for {
			p.skip()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return nil, p.errf("expected a string key")
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.skip()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, p.errf("expected ':' after a key")
			}
			p.i++
			p.skip()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			o.Set(k, v)
			p.skip()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == '}' {
				p.i++
				return o, nil
			}
			return nil, p.errf("expected ',' or '}' in an object")
		}
	case c == '[':
		p.i++
		a := &Array{frozen: true}
		p.skip()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			a.Items = []any{}
			return a, nil
		}
		for {
			p.skip()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a.Items = append(a.Items, v)
			p.skip()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == ']' {
				p.i++
				return a, nil
			}
			return nil, p.errf("expected ',' or ']' in an array")
		}
	case c == '"':
		return p.str()
	case c == 't':
		return p.lit("true", true)
	case c == 'f':
		return p.lit("false", false)
	case c == 'n':
		return p.lit("null", nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.num()
	}
	return nil, p.errf("unexpected %q", p.b[p.i])
}

func (p *jsonParser) lit(word string, v any) (any, error) {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return nil, p.errf("invalid literal")
	}
	p.i += len(word)
	return v, nil
}

func (p *jsonParser) num() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.errf("invalid number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errf("invalid number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errf("invalid number")
		}
	}
	f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return nil, p.errf("invalid number")
		}
	}
	return f, nil
}

func (p *jsonParser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			if !utf8.ValidString(s) {
				s = strings.ToValidUTF8(s, "\uFFFD")
			}
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errf("control character in a string")
		}
		p.i++
	}
	// With escapes: the text between them is checked as UTF-8 run by
	// run, so that the lone surrogates escapes give (in WTF-8) survive.
	var b strings.Builder
	b.WriteString(validUTF8(p.b[start:p.i]))
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.errf("control character in a string")
		case c != '\\':
			j := p.i
			for j < len(p.b) && p.b[j] != '"' && p.b[j] != '\\' && p.b[j] >= 0x20 {
				j++
			}
			b.WriteString(validUTF8(p.b[p.i:j]))
			p.i = j
			continue
		}
		p.i++
		if p.i >= len(p.b) {
			break
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errf("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A pair forms one character; a lone half stays one,
				// in WTF-8 (see wtf8.go), as JSON.parse keeps it.
				if r < 0xdc00 && p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if r2, ok := p.hex4(); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
						b.WriteRune(utf16.DecodeRune(r, r2))
						continue
					}
					p.i = save
				}
				b.Write(appendSurrogate(nil, uint16(r)))
				continue
			}
			b.WriteRune(r)
		default:
			return "", p.errf("invalid escape \\%c", e)
		}
	}
	return "", p.errf("unterminated string")
}

// validUTF8 is b as a string, its invalid bytes replaced by U+FFFD.
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

// Dump is JSON.stringify(v, null, indent), as the dump filter writes it:
// ok is false when JavaScript would return undefined (v is undefined or a
// function).
func Dump(v any, indent string) (s string, ok bool, err error) { return stringify(v, indent) }

// stringify is JSON.stringify(v, null, indent): ok is false when
// JavaScript would return undefined (undefined, a function).
func stringify(v any, indent string) (string, bool, error) {
	b := bounded{max: maxInt}
	if _, ok := v.(*Object); ok {
		b.Grow(4096) // a payload object: skip the first doublings
	}
	ok, err := writeJSON(&b, v, indent, "", 0)
	return b.String(), ok, err
}

// omitted reports values JSON.stringify leaves out of objects.
func omitted(v any) bool {
	switch v.(type) {
	case undefinedValue, callable:
		return true
	}
	return false
}

func writeJSON(b *bounded, v any, indent, cur string, depth int) (bool, error) {
	if depth > maxDepth {
		return false, fmt.Errorf("dump: value nested deeper than %d (circular?)", maxDepth)
	}
	switch x := v.(type) {
	case undefinedValue, callable:
		return false, nil
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null")
		} else {
			b.WriteString(formatNumber(x))
		}
	case string:
		quoteJSON(b, x)
	case *Array:
		if len(x.Items) == 0 {
			b.WriteString("[]")
			return true, nil
		}
		inner := cur + indent
		b.WriteByte('[')
		for i, it := range x.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			if indent != "" {
				b.WriteByte('\n')
				b.WriteString(inner)
			}
			ok, err := writeJSON(b, it, indent, inner, depth+1)
			if err != nil || b.over {
				return false, err
			}
			if !ok {
				b.WriteString("null")
			}
		}
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(cur)
		}
		b.WriteByte(']')
	default:
		o := asObject(v)
		inner := cur + indent
		n := 0
		b.WriteByte('{')
		for _, k := range o.keys {
			val := o.vals[k]
			if omitted(val) {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			if indent != "" {
				b.WriteByte('\n')
				b.WriteString(inner)
			}
			quoteJSON(b, k)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			if _, err := writeJSON(b, val, indent, inner, depth+1); err != nil || b.over {
				return false, err
			}
		}
		if n > 0 && indent != "" {
			b.WriteByte('\n')
			b.WriteString(cur)
		}
		b.WriteByte('}')
	}
	return true, nil
}

// asObject views object-like values (objects, loop and cycler objects) as
// an *Object.
func asObject(v any) *Object {
	switch x := v.(type) {
	case *Object:
		return x
	case *loopInfo:
		return x.object()
	case *cycler:
		o := NewObject(1)
		o.Set("current", x.current)
		return o
	case *safeString:
		return x.object()
	}
	return NewObject(0)
}

const hexDigits = "0123456789abcdef"

// quoteJSON writes s as JSON.stringify quotes strings: a lone surrogate
// as \udxxx (well-formed JSON.stringify, ES2019).
func quoteJSON(b *bounded, s string) {
	b.WriteByte('"')
	start := 0
	if !needsEscape(s) {
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	s = toWellFormed(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0xED {
			if u, ok := surrogateAt(s, i); ok {
				b.WriteString(s[start:i])
				b.WriteString(`\u`)
				for sh := 12; sh >= 0; sh -= 4 {
					b.WriteByte(hexDigits[u>>sh&0xf])
				}
				i += 2
				start = i + 1
			}
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// MarshalJSON encodes the object as JSON.stringify does.
func (o *Object) MarshalJSON() ([]byte, error) {
	s, _, err := stringify(o, "")
	return []byte(s), err
}

// MarshalJSON encodes the array as JSON.stringify does.
func (a *Array) MarshalJSON() ([]byte, error) {
	s, _, err := stringify(a, "")
	return []byte(s), err
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == 0xED {
			return true
		}
	}
	return false
}
