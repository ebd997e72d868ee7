package nunjucks

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// regExp is a JavaScript RegExp object. A regular-expression literal
// (r/body/flags) makes a new one each time it is evaluated, as the
// JavaScript Nunjucks compiles it to does, so lastIndex (which test and
// exec advance on a global expression) belongs to one evaluation.
//
// The body is JavaScript's syntax, translated to Go's (RE2) when the
// template is parsed: \s and \S, ".", \uXXXX, \cX and identity escapes
// mean what they mean in JavaScript. What RE2 cannot do is refused at
// parse time with the position: backreferences, lookahead and lookbehind,
// and the sticky flag y. Known differences that remain: matching is by
// character, not UTF-16 unit (only astral characters differ); with m, ^
// and $ see only \n as a line end; with i, case folding is Unicode's
// simple folding rather than JavaScript's toUpperCase.
type regExp struct {
	source, flags string
	re            *regexp.Regexp
	global        bool
	lastIndex     int // in UTF-16 units
}

// regexExpr is a regular-expression literal.
type regexExpr struct {
	source, flags string
	re            *regexp.Regexp
	base
}

func (e *regexExpr) eval(*renderer) (any, error) {
	return &regExp{source: e.source, flags: e.flags, re: e.re, global: strings.Contains(e.flags, "g")}, nil
}

// regexp compiles a literal the lexer found.
func (c *compiler) regexp(lit regexLiteral, p pos) (expr, error) {
	src := "/" + lit.body + "/" + lit.flags
	if strings.Contains(lit.flags, "y") {
		return nil, c.errf(p, "regular expression %s: the sticky flag y is not supported", src)
	}
	for _, f := range lit.flags {
		if strings.Count(lit.flags, string(f)) > 1 {
			return nil, c.errf(p, "SyntaxError: Invalid flags supplied to RegExp constructor '%s'", lit.flags)
		}
	}
	goSrc, err := translateRegExp(lit.body)
	if err != nil {
		return nil, c.errf(p, "regular expression %s: %v", src, err)
	}
	prefix := ""
	if strings.Contains(lit.flags, "i") {
		prefix += "i"
	}
	if strings.Contains(lit.flags, "m") {
		prefix += "m"
	}
	if prefix != "" {
		goSrc = "(?" + prefix + ")" + goSrc
	}
	re, err := regexp.Compile(goSrc)
	if err != nil {
		return nil, c.errf(p, "SyntaxError: Invalid regular expression: %s: %v", src, err)
	}
	source := lit.body
	if source == "" {
		source = "(?:)"
	}
	return &regexExpr{source: source, flags: canonicalFlags(lit.flags), re: re, base: base{p, src}}, nil
}

// canonicalFlags orders flags as RegExp.prototype.flags does.
func canonicalFlags(f string) string {
	var b strings.Builder
	for _, c := range "dgimsuvy" {
		if strings.ContainsRune(f, c) {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// jsSpaceClass is JavaScript's \s as the inside of a character class.
const jsSpaceClass = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// translateRegExp rewrites a JavaScript regular expression (without the u
// flag, as Nunjucks makes them) in Go's syntax.
func translateRegExp(body string) (string, error) {
	var b strings.Builder
	inClass := false
	classStart := false // just after [ or [^
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			if i+1 == len(body) {
				return "", fmt.Errorf("\\ at end of pattern")
			}
			n, err := translateEscape(&b, body[i+1:], inClass)
			if err != nil {
				return "", err
			}
			i += 1 + n
			classStart = false
			continue
		case inClass:
			switch {
			case c == ']' && classStart:
				// [] matches nothing, [^] anything.
				s := b.String()
				if strings.HasSuffix(s, "[^") {
					b.Reset()
					b.WriteString(s[:len(s)-2] + `(?s:.)`)
				} else {
					b.Reset()
					b.WriteString(s[:len(s)-1] + `[^\x00-\x{10FFFF}]`)
				}
				inClass = false
			case c == ']':
				b.WriteByte(']')
				inClass = false
			case c == '[':
				b.WriteString(`\[`) // literal in JavaScript, a POSIX class opener in Go
			default:
				b.WriteByte(c)
			}
			classStart = false
			i++
			continue
		}
		switch c {
		case '[':
			inClass, classStart = true, true
			b.WriteByte('[')
			if i+1 < len(body) && body[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
		case '.':
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		case '(':
			if strings.HasPrefix(body[i:], "(?") {
				switch {
				case strings.HasPrefix(body[i:], "(?:"):
				case strings.HasPrefix(body[i:], "(?<") && !strings.HasPrefix(body[i:], "(?<=") && !strings.HasPrefix(body[i:], "(?<!"):
				default:
					return "", fmt.Errorf("lookahead and lookbehind are not supported")
				}
			}
			b.WriteByte('(')
		default:
			b.WriteByte(c)
		}
		i++
	}
	if inClass {
		return "", fmt.Errorf("unterminated character class")
	}
	return b.String(), nil
}

// translateEscape writes the escape that starts s (after the backslash)
// and returns how many bytes of s it used.
func translateEscape(b *strings.Builder, s string, inClass bool) (int, error) {
	c := s[0]
	switch c {
	case 'd', 'D', 'w', 'W', 'n', 'r', 't', 'f', 'v':
		b.WriteByte('\\')
		b.WriteByte(c)
		return 1, nil
	case 'b', 'B':
		if inClass {
			if c == 'b' {
				b.WriteString(`\x08`) // backspace, inside a class
				return 1, nil
			}
			b.WriteByte('B')
			return 1, nil
		}
		b.WriteByte('\\')
		b.WriteByte(c)
		return 1, nil
	case 's':
		if inClass {
			b.WriteString(jsSpaceClass)
		} else {
			b.WriteString("[" + jsSpaceClass + "]")
		}
		return 1, nil
	case 'S':
		if inClass {
			return 0, fmt.Errorf(`\S inside a character class is not supported`)
		}
		b.WriteString("[^" + jsSpaceClass + "]")
		return 1, nil
	case '0':
		if len(s) > 1 && s[1] >= '0' && s[1] <= '9' {
			return 0, fmt.Errorf("octal escapes are not supported")
		}
		b.WriteString(`\x00`)
		return 1, nil
	case 'x':
		if len(s) >= 3 && isHex(s[1:3]) {
			b.WriteString(`\x{` + s[1:3] + `}`)
			return 3, nil
		}
	case 'u':
		if len(s) >= 5 && isHex(s[1:5]) {
			n, _ := strconv.ParseUint(s[1:5], 16, 32)
			if n >= 0xd800 && n <= 0xdfff {
				return 0, fmt.Errorf(`\u%s: surrogates are not supported`, s[1:5])
			}
			b.WriteString(`\x{` + s[1:5] + `}`)
			return 5, nil
		}
	case 'c':
		if len(s) >= 2 && (s[1] >= 'a' && s[1] <= 'z' || s[1] >= 'A' && s[1] <= 'Z') {
			fmt.Fprintf(b, `\x{%x}`, s[1]%32)
			return 2, nil
		}
		b.WriteString(`\\c`)
		return 1, nil
	case 'k':
		if len(s) > 1 && s[1] == '<' {
			return 0, fmt.Errorf("backreferences are not supported")
		}
	}
	if c >= '1' && c <= '9' {
		return 0, fmt.Errorf("backreferences are not supported")
	}
	// Any other escaped character stands for itself: punctuation stays
	// escaped (Go accepts that, and inside a class \- must not become a
	// range), a letter or digit is written as the character it is.
	if c < utf8.RuneSelf && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
		b.WriteByte('\\')
		b.WriteByte(c)
		return 1, nil
	}
	r, n := utf8.DecodeRuneInString(s)
	b.WriteString(regexp.QuoteMeta(string(r)))
	return n, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return true
}

// String is RegExp.prototype.toString: /source/flags.
func (x *regExp) String() string { return "/" + x.source + "/" + x.flags }

func (x *regExp) member(key string) any {
	switch key {
	case "source":
		return x.source
	case "flags":
		return x.flags
	case "global":
		return x.global
	case "ignoreCase":
		return strings.Contains(x.flags, "i")
	case "multiline":
		return strings.Contains(x.flags, "m")
	case "sticky", "unicode", "dotAll", "hasIndices":
		return false
	case "lastIndex":
		return float64(x.lastIndex)
	case "test", "exec", "toString":
		return &boundMethod{recv: x, name: key}
	}
	return undef
}

// utf16Len is the length of s in UTF-16 units.
func utf16Len(s string) int {
	if isASCII(s) {
		return len(s)
	}
	return newJSString(s).len()
}

// byteOffset is the byte offset of UTF-16 unit i of s (len(s) past the
// end).
func byteOffset(s string, i int) int {
	if isASCII(s) {
		return min(i, len(s))
	}
	n := 0
	for off, r := range s {
		if n >= i {
			return off
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return len(s)
}

// exec is RegExp.prototype.exec's search: the first match at or after
// lastIndex (global) or anywhere (otherwise), as byte offsets of the
// match and its groups; nil when there is none. A global expression's
// lastIndex moves past the match, or back to 0.
func (x *regExp) exec(s string) []int {
	from := 0
	if x.global {
		if x.lastIndex > utf16Len(s) {
			x.lastIndex = 0
			return nil
		}
		from = byteOffset(s, x.lastIndex)
	}
	var m []int
	for _, cand := range x.re.FindAllStringSubmatchIndex(s, -1) {
		if cand[0] >= from {
			m = cand
			break
		}
	}
	if x.global {
		if m == nil {
			x.lastIndex = 0
		} else {
			x.lastIndex = utf16Len(s[:m[1]])
		}
	}
	return m
}

// groups lists a match's text and its groups (undefined for a group that
// did not take part), as exec's result array holds them.
func groups(s string, m []int) *Array {
	out := &Array{Items: make([]any, len(m)/2)}
	for g := range out.Items {
		if m[2*g] < 0 {
			out.Items[g] = undef
		} else {
			out.Items[g] = s[m[2*g]:m[2*g+1]]
		}
	}
	return out
}

var regExpMethods = map[string]methodFunc[*regExp]{
	"test": func(_ *renderer, x *regExp, args []any) (any, error) {
		return x.exec(toString(arg(args, 0))) != nil, nil
	},
	"exec": func(_ *renderer, x *regExp, args []any) (any, error) {
		s := toString(arg(args, 0))
		m := x.exec(s)
		if m == nil {
			return nil, nil
		}
		return groups(s, m), nil
	},
	"toString": func(_ *renderer, x *regExp, _ []any) (any, error) { return x.String(), nil },
}

// replaceRegExp is String.prototype.replace (or replaceAll) with a
// regular expression: the first match, or every match of a global one;
// repl is a string with $ patterns ($$, $&, $`, $', $1..$99, $<name>) or
// a function (a macro) given the match, its groups, the offset and s.
func replaceRegExp(r *renderer, s string, x *regExp, repl any) (any, error) {
	var ms [][]int
	if x.global {
		ms = x.re.FindAllStringSubmatchIndex(s, -1)
		x.lastIndex = 0
	} else if m := x.re.FindStringSubmatchIndex(s); m != nil {
		ms = [][]int{m}
	}
	fn, isFn := repl.(callable)
	rs := ""
	if !isFn {
		rs = toString(repl)
	}
	b := r.builder()
	last := 0
	for _, m := range ms {
		if b.over {
			break
		}
		b.WriteString(s[last:m[0]])
		if isFn {
			args := append(groups(s, m).Items, float64(utf16Len(s[:m[0]])), s)
			v, err := r.call(fn, nil, args, nil, pos{})
			if err != nil {
				return nil, err
			}
			b.WriteString(toString(v))
		} else {
			expandRegExpReplacement(&b, rs, s, m, x.re)
		}
		last = m[1]
	}
	b.WriteString(s[last:])
	if b.over {
		return nil, r.overflow(&b)
	}
	return b.String(), nil
}

// expandRegExpReplacement writes repl for match m of s (GetSubstitution).
func expandRegExpReplacement(b *bounded, repl, s string, m []int, re *regexp.Regexp) {
	ngroups := len(m)/2 - 1
	group := func(g int) string {
		if m[2*g] < 0 {
			return ""
		}
		return s[m[2*g]:m[2*g+1]]
	}
	for i := 0; i < len(repl); i++ {
		if repl[i] != '$' || i+1 == len(repl) {
			b.WriteByte(repl[i])
			continue
		}
		switch c := repl[i+1]; {
		case c == '$':
			b.WriteByte('$')
			i++
		case c == '&':
			b.WriteString(group(0))
			i++
		case c == '`':
			b.WriteString(s[:m[0]])
			i++
		case c == '\'':
			b.WriteString(s[m[1]:])
			i++
		case c >= '0' && c <= '9':
			// $nn when it names a group, else $n, else the text itself.
			if i+2 < len(repl) && repl[i+2] >= '0' && repl[i+2] <= '9' {
				if g := int(c-'0')*10 + int(repl[i+2]-'0'); g >= 1 && g <= ngroups {
					b.WriteString(group(g))
					i += 2
					continue
				}
			}
			if g := int(c - '0'); g >= 1 && g <= ngroups {
				b.WriteString(group(g))
				i++
				continue
			}
			b.WriteByte('$')
		case c == '<':
			end := strings.IndexByte(repl[i+2:], '>')
			names := re.SubexpNames()
			hasNames := false
			for _, n := range names {
				hasNames = hasNames || n != ""
			}
			if !hasNames || end < 0 {
				b.WriteByte('$')
				continue
			}
			name := repl[i+2 : i+2+end]
			if g := re.SubexpIndex(name); g > 0 {
				b.WriteString(group(g))
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
}

// matchRegExp is String.prototype.match: exec's result, or for a global
// expression every match's text (null when there is none).
func matchRegExp(s string, x *regExp) any {
	if !x.global {
		m := x.exec(s)
		if m == nil {
			return nil
		}
		return groups(s, m)
	}
	x.lastIndex = 0
	ms := x.re.FindAllStringIndex(s, -1)
	if len(ms) == 0 {
		return nil
	}
	out := &Array{Items: make([]any, len(ms))}
	for i, m := range ms {
		out.Items[i] = s[m[0]:m[1]]
	}
	return out
}

// splitRegExp is String.prototype.split with a regular expression: the
// pieces between matches, with each match's groups spliced in; an empty
// match where the previous piece ended splits nothing.
func splitRegExp(s string, x *regExp, limit uint64) *Array {
	out := &Array{Items: []any{}}
	if limit == 0 {
		return out
	}
	push := func(v any) bool {
		out.Items = append(out.Items, v)
		return uint64(len(out.Items)) >= limit
	}
	if s == "" {
		if x.re.FindStringIndex(s) == nil {
			out.Items = append(out.Items, s)
		}
		return out
	}
	p := 0
	for _, m := range x.re.FindAllStringSubmatchIndex(s, -1) {
		if m[0] >= len(s) || m[1] == p {
			continue
		}
		if push(s[p:m[0]]) {
			return out
		}
		for _, g := range groups(s, m).Items[1:] {
			if push(g) {
				return out
			}
		}
		p = m[1]
	}
	push(s[p:])
	return out
}

// searchRegExp is String.prototype.search: the UTF-16 index of the first
// match, -1 when there is none.
func searchRegExp(s string, x *regExp) float64 {
	m := x.re.FindStringIndex(s)
	if m == nil {
		return -1
	}
	return float64(utf16Len(s[:m[0]]))
}

// asRegExp is the regular expression match and search use: the argument,
// or a new one made from its text (undefined matches the empty string).
func asRegExp(v any) (*regExp, error) {
	if x, ok := v.(*regExp); ok {
		return x, nil
	}
	body := ""
	if !isUndef(v) {
		body = toString(v)
	}
	goSrc, err := translateRegExp(body)
	if err == nil {
		var re *regexp.Regexp
		if re, err = regexp.Compile(goSrc); err == nil {
			return &regExp{source: body, re: re}, nil
		}
	}
	return nil, fmt.Errorf("SyntaxError: Invalid regular expression: /%s/: %v", body, err)
}
