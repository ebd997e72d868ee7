package nunjucks

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Values are JavaScript values, because Nunjucks templates run on
// JavaScript's semantics: a template value is one of
//
//	undefinedValue  JavaScript undefined (a name or member that does not exist)
//	nil             null
//	bool, float64   booleans and numbers (every number is a double, as in JavaScript)
//	string          strings
//	*Array, *Object arrays and objects, by reference
//	callable        functions: globals, bound methods, macros, joiners
//
// Data handed to Render is converted into these with [FromJSON] or
// [FromGo].

// undefinedValue is JavaScript's undefined.
type undefinedValue struct{}

// undef is the one undefined value.
var undef any = undefinedValue{}

func isUndef(v any) bool { _, ok := v.(undefinedValue); return ok }

// isNullish reports undefined or null.
func isNullish(v any) bool { return v == nil || isUndef(v) }

// Array is a JavaScript array. An array that came with the data (from
// FromJSON or FromGo) is read-only to templates, so concurrent renders of
// one payload never see each other's changes.
type Array struct {
	Items  []any
	frozen bool
}

// Object is a JavaScript object: string keys in JavaScript's own-property
// order (array-index keys first in ascending order, then the other keys in
// insertion order), which is the order dump and for-loops use.
type Object struct {
	keys []string
	vals map[string]any
	nIdx int // how many leading keys are array indices
}

// NewObject returns an empty object with room for n keys.
func NewObject(n int) *Object {
	return &Object{keys: make([]string, 0, n), vals: make(map[string]any, n)}
}

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Keys returns the keys in order. The slice must not be modified.
func (o *Object) Keys() []string { return o.keys }

// Get returns the value of key.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Set sets key to v, keeping JavaScript's key order.
func (o *Object) Set(key string, v any) {
	if _, ok := o.vals[key]; ok {
		o.vals[key] = v
		return
	}
	o.vals[key] = v
	if idx, ok := arrayIndex(key); ok {
		// Insert among the leading index keys, in ascending order.
		i := 0
		for i < o.nIdx {
			j, _ := arrayIndex(o.keys[i])
			if j > idx {
				break
			}
			i++
		}
		o.keys = append(o.keys, "")
		copy(o.keys[i+1:], o.keys[i:])
		o.keys[i] = key
		o.nIdx++
		return
	}
	o.keys = append(o.keys, key)
}

// Delete removes key.
func (o *Object) Delete(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			if i < o.nIdx {
				o.nIdx--
			}
			return
		}
	}
}

// arrayIndex reports whether key is a canonical array index ("0", "17",
// not "017" or "-1") below 2^32-1, as JavaScript orders object keys.
func arrayIndex(key string) (uint64, bool) {
	if key == "" || len(key) > 10 || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n < 1<<32-1
}

// typeOf is JavaScript's typeof.
func typeOf(v any) string {
	switch v.(type) {
	case undefinedValue:
		return "undefined"
	case nil, *Array, *Object, *loopInfo, *cycler:
		return "object"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case callable:
		return "function"
	}
	return "object"
}

// truthy is JavaScript's ToBoolean.
func truthy(v any) bool {
	switch x := v.(type) {
	case undefinedValue, nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

// toString is JavaScript's String(v).
func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case undefinedValue:
		return "undefined"
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return formatNumber(x)
	case *Array:
		return joinArray(x, ",")
	case *regExp:
		return x.String()
	case *safeString:
		return x.s
	case callable:
		return "function () { [native code] }"
	}
	return "[object Object]"
}

// joinArray is Array.prototype.join, for printing an array: see joinInto.
// It never builds more than maxOutput bytes: past that (an array holding
// many references to one large value) it aborts the render, which is
// also what happens to an array nested deeper than maxJoinDepth.
func joinArray(a *Array, sep string) string {
	b := bounded{max: maxOutput}
	s := joinInto(&b, a, sep)
	if b.over {
		panic(abort{&Error{Msg: fmt.Sprintf("an array printed as text would be longer than %d bytes", maxOutput), Cause: ErrBudget}})
	}
	return s
}

// maxJoinDepth bounds how deeply nested arrays are printed (JavaScript
// runs out of stack a little deeper).
const maxJoinDepth = 10_000

// joinInto is Array.prototype.join, built in b (b.over when it did not
// fit): null and undefined elements are empty, nested arrays print
// comma-joined, and an array met again inside itself prints empty, as V8
// prints a cyclic array.
func joinInto(b *bounded, a *Array, sep string) string {
	switch len(a.Items) {
	case 0:
		return ""
	case 1:
		switch x := a.Items[0].(type) {
		case string:
			b.over = len(x) > b.max
			return x
		case float64:
			return formatNumber(x)
		}
	}
	j := arrayJoin{b: b}
	j.join(a, sep)
	return b.String()
}

type arrayJoin struct {
	b     *bounded
	stack []*Array // the arrays being joined, outermost first
}

func (j *arrayJoin) join(a *Array, sep string) {
	for _, s := range j.stack {
		if s == a {
			return
		}
	}
	if len(j.stack) >= maxJoinDepth {
		panic(abort{&Error{Msg: fmt.Sprintf("RangeError: arrays nested deeper than %d cannot be printed", maxJoinDepth)}})
	}
	j.stack = append(j.stack, a)
	for i, it := range a.Items {
		if j.b.over {
			break
		}
		if i > 0 {
			j.b.WriteString(sep)
		}
		switch x := it.(type) {
		case nil, undefinedValue:
		case string:
			j.b.WriteString(x)
		case *Array:
			j.join(x, ",")
		default:
			j.b.WriteString(toString(x))
		}
	}
	j.stack = j.stack[:len(j.stack)-1]
}

// isPrimitive reports a value ToPrimitive leaves alone.
func isPrimitive(v any) bool {
	switch v.(type) {
	case undefinedValue, nil, bool, float64, string:
		return true
	}
	return false
}

// toPrimitive converts arrays, objects and functions to their string form
// (valueOf of a plain object is the object itself, so toString is used).
func toPrimitive(v any) any {
	if isPrimitive(v) {
		return v
	}
	return toString(v)
}

// toNumber is JavaScript's Number(v).
func toNumber(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case undefinedValue:
		return math.NaN()
	case nil:
		return 0
	case bool:
		if x {
			return 1
		}
		return 0
	case string:
		return stringToNumber(x)
	}
	return stringToNumber(toString(v))
}

// add is JavaScript's binary +.
func add(a, b any) any {
	pa, pb := toPrimitive(a), toPrimitive(b)
	sa, aStr := pa.(string)
	sb, bStr := pb.(string)
	if aStr || bStr {
		if !aStr {
			sa = toString(pa)
		}
		if !bStr {
			sb = toString(pb)
		}
		return sa + sb
	}
	return toNumber(pa) + toNumber(pb)
}

// strictEqual is JavaScript's ===.
func strictEqual(a, b any) bool {
	switch x := a.(type) {
	case undefinedValue:
		return isUndef(b)
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case *Array:
		y, ok := b.(*Array)
		return ok && x == y
	case *Object:
		y, ok := b.(*Object)
		return ok && x == y
	case *loopInfo:
		y, ok := b.(*loopInfo)
		return ok && x == y
	case *cycler:
		y, ok := b.(*cycler)
		return ok && x == y
	case *regExp:
		y, ok := b.(*regExp)
		return ok && x == y
	case *safeString:
		y, ok := b.(*safeString)
		return ok && x == y
	}
	return false // functions are never equal to anything we can compare
}

// jsType is the specification type of v: null is its own type, unlike typeof.
func jsType(v any) string {
	if v == nil {
		return "null"
	}
	return typeOf(v)
}

// looseEqual is JavaScript's == (the abstract equality comparison).
func looseEqual(a, b any) bool {
	ta, tb := jsType(a), jsType(b)
	if ta == tb {
		return strictEqual(a, b)
	}
	if isNullish(a) || isNullish(b) {
		return isNullish(a) && isNullish(b)
	}
	switch {
	case ta == "number" && tb == "string":
		return a.(float64) == stringToNumber(b.(string))
	case ta == "string" && tb == "number":
		return stringToNumber(a.(string)) == b.(float64)
	case ta == "boolean":
		return looseEqual(toNumber(a), b)
	case tb == "boolean":
		return looseEqual(a, toNumber(b))
	case !isPrimitive(a) && isPrimitive(b):
		return looseEqual(toPrimitive(a), b)
	case isPrimitive(a) && !isPrimitive(b):
		return looseEqual(a, toPrimitive(b))
	}
	return false
}

// less is JavaScript's abstract relational comparison a < b; ok is
// false when the result is undefined (a NaN was involved), which makes
// every relational operator false.
func less(a, b any) (lt bool, ok bool) {
	pa, pb := toPrimitive(a), toPrimitive(b)
	sa, aStr := pa.(string)
	sb, bStr := pb.(string)
	if aStr && bStr {
		return compareUTF16(sa, sb) < 0, true
	}
	x, y := toNumber(pa), toNumber(pb)
	if math.IsNaN(x) || math.IsNaN(y) {
		return false, false
	}
	return x < y, true
}

// relational evaluates <, >, <= and >= as JavaScript does.
func relational(op string, a, b any) bool {
	switch op {
	case "<":
		lt, _ := less(a, b)
		return lt
	case ">":
		gt, _ := less(b, a)
		return gt
	case "<=":
		gt, ok := less(b, a)
		return ok && !gt
	case ">=":
		lt, ok := less(a, b)
		return ok && !lt
	}
	return false
}

// compareUTF16 orders strings by UTF-16 code units, as JavaScript does.
func compareUTF16(a, b string) int {
	if isASCII(a) && isASCII(b) {
		return strings.Compare(a, b)
	}
	ua, ub := encodeUTF16(a), encodeUTF16(b)
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// jsString is a string addressed by UTF-16 code unit, as JavaScript
// indexes strings.
type jsString struct {
	s     string
	ascii bool
	units []uint16
}

func newJSString(s string) jsString {
	if isASCII(s) {
		return jsString{s: s, ascii: true}
	}
	return jsString{s: s, units: encodeUTF16(s)}
}

func (j jsString) len() int {
	if j.ascii {
		return len(j.s)
	}
	return len(j.units)
}

// slice returns code units [i, k).
func (j jsString) slice(i, k int) string {
	if k <= i {
		return ""
	}
	if j.ascii {
		return j.s[i:k]
	}
	return decodeUTF16(j.units[i:k])
}

// at returns the code unit at i as a string.
func (j jsString) at(i int) string { return j.slice(i, i+1) }

// indexOf is String.prototype.indexOf from position from.
func (j jsString) indexOf(sub string, from int) int {
	n := j.len()
	from = max(0, min(from, n))
	if j.ascii && isASCII(sub) {
		i := strings.Index(j.s[from:], sub)
		if i < 0 {
			return -1
		}
		return i + from
	}
	su := encodeUTF16(sub)
	units := j.units
	if j.ascii {
		units = encodeUTF16(j.s)
	}
	for i := from; i+len(su) <= len(units); i++ {
		match := true
		for k := range su {
			if units[i+k] != su[k] {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// lastIndexOf is String.prototype.lastIndexOf.
func (j jsString) lastIndexOf(sub string, from int) int {
	if j.ascii && isASCII(sub) {
		end := min(from+len(sub), len(j.s))
		if end < 0 {
			return -1
		}
		return strings.LastIndex(j.s[:end], sub)
	}
	best := -1
	for i := 0; ; {
		k := j.indexOf(sub, i)
		if k < 0 || k > from {
			return best
		}
		best = k
		i = k + 1
	}
}

// isJSSpace reports the characters JavaScript's trim and \s treat as white
// space (WhiteSpace and LineTerminator).
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func trimJS(s string) string      { return strings.TrimFunc(s, isJSSpace) }
func trimLeftJS(s string) string  { return strings.TrimLeftFunc(s, isJSSpace) }
func trimRightJS(s string) string { return strings.TrimRightFunc(s, isJSSpace) }

// toInteger is ToIntegerOrInfinity.
func toInteger(v any) float64 {
	f := toNumber(v)
	if math.IsNaN(f) {
		return 0
	}
	return math.Trunc(f)
}

// clampIndex turns a relative index (negative counts from the end) into
// [0, n], as slice and substring arguments are resolved.
func clampIndex(f float64, n int) int {
	if f < 0 {
		f += float64(n)
		if f < 0 {
			return 0
		}
	}
	if f > float64(n) {
		return n
	}
	return int(f)
}
