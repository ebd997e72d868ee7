package nunjucks

// safeString is Nunjucks' SafeString: what escape, safe and forceescape
// return, and what a macro call and caller() return. It marks text as
// already escaped, so escape leaves it as it is ({{ "<b>" | escape |
// escape }} is &lt;b&gt;, escaped once).
//
// It is a JavaScript object, not a string, and templates see it so: it is
// true in a condition even when empty; == compares its text, === its
// identity; its own properties are val and length (dump prints
// {"val":...,"length":n}, and x[0] is undefined); string methods work on
// its text and return plain strings; the filters Nunjucks applies
// copySafeness in return a SafeString again.
type safeString struct{ s string }

func markSafe(s string) *safeString { return &safeString{s: s} }

func (x *safeString) member(key string) any {
	switch key {
	case "val":
		return x.s
	case "length":
		return float64(utf16Len(x.s))
	}
	if _, ok := stringMethods[key]; ok {
		return &boundMethod{recv: x.s, name: key}
	}
	return undef
}

// object is the SafeString's own properties, as for-in loops and dump see
// them.
func (x *safeString) object() *Object {
	o := NewObject(2)
	o.Set("val", x.s)
	o.Set("length", float64(utf16Len(x.s)))
	return o
}

// stringLike is a string or a SafeString's text.
func stringLike(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case *safeString:
		return x.s, true
	}
	return "", false
}

// keepSafeness wraps a string filter as Nunjucks' copySafeness does: given
// a SafeString, the filter works on its text and its string result is a
// SafeString again.
func keepSafeness(f filterFunc) filterFunc {
	return func(r *renderer, in any, args []any, kw *Object) (any, error) {
		x, ok := in.(*safeString)
		if !ok {
			return f(r, in, args, kw)
		}
		v, err := f(r, x.s, args, kw)
		if s, isStr := v.(string); isStr && err == nil {
			return markSafe(s), nil
		}
		return v, err
	}
}

// escapeFilter is escape (and e): a SafeString is returned as it is,
// anything else is HTML-escaped and marked safe.
func escapeFilter(_ *renderer, in any, _ []any, _ *Object) (any, error) {
	if x, ok := in.(*safeString); ok {
		return x, nil
	}
	return forceEscape(in), nil
}

// forceEscape is forceescape: escaped even when already safe.
func forceEscape(in any) *safeString {
	if isNullish(in) {
		return markSafe("")
	}
	return markSafe(escapeReplacer.Replace(toString(in)))
}

// safeFilter is safe: the value's text marked safe.
func safeFilter(_ *renderer, in any, _ []any, _ *Object) (any, error) {
	if x, ok := in.(*safeString); ok {
		return x, nil
	}
	if isNullish(in) {
		return markSafe(""), nil
	}
	return markSafe(toString(in)), nil
}
