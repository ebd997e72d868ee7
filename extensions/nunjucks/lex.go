package nunjucks

import (
	"strings"
)

// source is a template prepared for gonja's lexer, with what Nunjucks
// lexes differently from gonja taken out beforehand. Every replacement
// keeps the byte length and the line breaks of what it replaces, so that
// the positions gonja reports are the template's own.
type source struct {
	text string
	// strict marks the strict operators === and !==, which gonja's lexer
	// does not know: they become == and != plus a space, and compare
	// strictly (by the operator's offset).
	strict map[int]bool
	// strings are the string literals as Nunjucks reads them (backslash
	// escapes: \n, \t and \r are control characters, any other escaped
	// character stands for itself), by the offset of the opening quote.
	// gonja sees a quoted filler instead: its lexer ends a string at any
	// quote after a backslash, so "end\\" and '\\"' would not lex.
	strings map[int]string
	// regexps are the regular-expression literals (r/body/flags), each
	// replaced by a quoted filler: by the filler's offset.
	regexps map[int]regexLiteral
	// raws are the raw and verbatim blocks' text, each block replaced by a
	// comment: by the comment's offset.
	raws map[int]string
}

type regexLiteral struct{ body, flags string }

// delimChars are the characters that end a name in Nunjucks' lexer; "r/"
// after one of them (or white space) starts a regular expression.
const delimChars = "()[]{}%*-+~/#,:|.<>=!"

// prepare lexes what Nunjucks lexes differently from gonja: string
// literals, regular expressions, raw and verbatim blocks, === and !==.
// Carriage returns become crMark (gonja folds CR LF, Nunjucks keeps both).
func prepare(src string) *source {
	src = strings.ReplaceAll(src, "\r", string(crMark))
	b := []byte(src)
	s := &source{}
	for i := 0; i+1 < len(b); {
		switch string(b[i : i+2]) {
		case "{#":
			end := strings.Index(string(b[i+2:]), "#}")
			if end < 0 {
				i = len(b)
				continue
			}
			i += end + 4
		case "{%":
			if next, ok := s.rawBlock(b, i); ok {
				i = next
				continue
			}
			i = s.code(b, i+2, "%}")
		case "{{":
			i = s.code(b, i+2, "}}")
		default:
			i++
		}
	}
	s.text = string(b)
	return s
}

// code scans a tag's code from i to its closer and returns the offset
// after the closer.
func (s *source) code(b []byte, i int, closer string) int {
	start := i
	for i+1 < len(b) && string(b[i:i+2]) != closer {
		switch c := b[i]; {
		case c == '"' || c == '\'':
			i = s.stringLiteral(b, i)
			continue
		case c == 'r' && i+1 < len(b) && b[i+1] == '/' && tokenStart(b, start, i):
			i = s.regexLiteral(b, i)
			continue
		case (c == '=' || c == '!') && i+2 < len(b) && b[i+1] == '=' && b[i+2] == '=':
			if s.strict == nil {
				s.strict = map[int]bool{}
			}
			s.strict[i] = true
			b[i+2] = ' '
			i += 3
			continue
		}
		i++
	}
	return i + 2
}

// tokenStart reports whether a token of Nunjucks' lexer starts at i: at
// the start of the tag's code, or after white space or a delimiter.
func tokenStart(b []byte, start, i int) bool {
	if i == start {
		return true
	}
	p := b[i-1]
	return p == ' ' || p == '\t' || p == '\n' || strings.IndexByte(delimChars, p) >= 0
}

// stringLiteral reads the literal whose quote is at i as Nunjucks' lexer
// does and returns the offset after it. An unterminated literal is left
// for gonja to report.
func (s *source) stringLiteral(b []byte, i int) int {
	quote := b[i]
	var v strings.Builder
	j := i + 1
	for ; j < len(b) && b[j] != quote; j++ {
		if b[j] != '\\' || j+1 == len(b) {
			v.WriteByte(b[j])
			continue
		}
		j++
		switch b[j] {
		case 'n':
			v.WriteByte('\n')
		case 't':
			v.WriteByte('\t')
		case 'r':
			v.WriteByte('\r')
		default:
			v.WriteByte(b[j])
		}
	}
	if j >= len(b) {
		return len(b)
	}
	if s.strings == nil {
		s.strings = map[int]string{}
	}
	s.strings[i] = restoreCR(v.String())
	fill(b[i+1 : j])
	return j + 1
}

// regexLiteral reads r/body/flags at i as Nunjucks' lexer does (a slash
// ends the body unless the character before it is a backslash; the flags
// are g, i, m and y), replaces it by a quoted filler and returns the
// offset after it.
func (s *source) regexLiteral(b []byte, i int) int {
	j := i + 2
	for ; j < len(b); j++ {
		if b[j] == '/' && b[j-1] != '\\' {
			break
		}
	}
	if j >= len(b) {
		return len(b)
	}
	body := string(b[i+2 : j])
	j++
	k := j
	for k < len(b) && strings.IndexByte("gimy", b[k]) >= 0 {
		k++
	}
	if s.regexps == nil {
		s.regexps = map[int]regexLiteral{}
	}
	s.regexps[i] = regexLiteral{body: restoreCR(body), flags: string(b[j:k])}
	b[i], b[k-1] = '"', '"'
	fill(b[i+1 : k-1])
	return k
}

// rawBlock recognises a raw or verbatim block at i ({% raw %} ...
// {% endraw %}, nested blocks of the same kind included, as Nunjucks'
// parseRaw finds them) and replaces it by a comment of the same length,
// keeping the start tag's whitespace control; without its end tag only
// the start tag is replaced, and its text is empty (Nunjucks then goes on
// lexing after the start tag). ok is false when no such block starts here.
func (s *source) rawBlock(b []byte, i int) (next int, ok bool) {
	j := i + 2
	trimLeft := j < len(b) && b[j] == '-'
	if trimLeft {
		j++
	}
	for j < len(b) && isJSSpaceByte(b[j]) {
		j++
	}
	var name string
	for _, n := range []string{"verbatim", "raw"} {
		if strings.HasPrefix(string(b[j:]), n) {
			name = n
			break
		}
	}
	if name == "" {
		return 0, false
	}
	j += len(name)
	if j < len(b) && !isJSSpaceByte(b[j]) && strings.IndexByte(delimChars, b[j]) < 0 {
		return 0, false // a longer name: rawx
	}
	for j < len(b) && isJSSpaceByte(b[j]) {
		j++
	}
	trimRight := j < len(b) && b[j] == '-'
	if trimRight {
		j++
	}
	if !strings.HasPrefix(string(b[j:]), "%}") {
		return 0, false // arguments: gonja's parser refuses them
	}
	tagEnd := j + 2
	text, end, found := rawText(b[tagEnd:], name)
	blockEnd := tagEnd + end
	if !found {
		text, blockEnd = "", tagEnd
	}
	if s.raws == nil {
		s.raws = map[int]string{}
	}
	s.raws[i] = restoreCR(text)
	fill(b[i:blockEnd])
	copy(b[i:], "{#")
	if trimLeft {
		b[i+2] = '-'
	}
	copy(b[blockEnd-2:], "#}")
	if trimRight {
		b[blockEnd-3] = '-'
	}
	return blockEnd, true
}

// rawText finds the end of a raw block's text in b: the tag
// {% endNAME %} (white space inside, no whitespace control) that closes
// the block, counting nested {% NAME %} tags. end is the offset after the
// end tag.
func rawText(b []byte, name string) (text string, end int, found bool) {
	level := 1
	for off := 0; ; {
		k := strings.Index(string(b[off:]), "{%")
		if k < 0 {
			return "", 0, false
		}
		at := off + k
		j := at + 2
		for j < len(b) && isJSSpaceByte(b[j]) {
			j++
		}
		var tag string
		switch {
		case strings.HasPrefix(string(b[j:]), "end"+name):
			tag = "end" + name
		case strings.HasPrefix(string(b[j:]), name):
			tag = name
		}
		if tag != "" {
			e := j + len(tag)
			for e < len(b) && isJSSpaceByte(b[e]) {
				e++
			}
			if strings.HasPrefix(string(b[e:]), "%}") {
				if tag == name {
					level++
				} else if level--; level == 0 {
					return string(b[:at]), e + 2, true
				}
				off = e + 2
				continue
			}
		}
		off = at + 2
	}
}

func isJSSpaceByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f':
		return true
	}
	return false
}

// fill overwrites text gonja must not read with x, keeping line breaks and
// the bytes of non-ASCII characters (so columns stay the same).
func fill(b []byte) {
	for k, c := range b {
		if c < 0x80 && c != '\n' {
			b[k] = 'x'
		}
	}
}
