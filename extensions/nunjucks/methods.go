package nunjucks

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// callable is a value templates can call: a global, a bound method, a
// macro, a joiner.
type callable interface {
	call(r *renderer, args []any, kw *Object) (any, error)
}

func arg(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return undef
}

// builtin is a global function.
type builtin func(r *renderer, args []any, kw *Object) (any, error)

func (b builtin) call(r *renderer, args []any, kw *Object) (any, error) { return b(r, args, kw) }

// globals are Nunjucks' global functions.
var globals = map[string]any{
	"range": builtin(func(r *renderer, args []any, _ *Object) (any, error) {
		start, stop, step := arg(args, 0), arg(args, 1), arg(args, 2)
		if isUndef(stop) {
			start, stop, step = 0.0, start, 1.0
		} else if !truthy(step) {
			step = 1.0
		}
		a, b, s := toNumber(start), toNumber(stop), toNumber(step)
		out := &Array{Items: []any{}}
		if s > 0 {
			for i := a; i < b; i += s {
				if len(out.Items) >= maxIterations {
					return nil, fmt.Errorf("range: more than %d elements", maxIterations)
				}
				out.Items = append(out.Items, i)
			}
		} else {
			for i := a; i > b; i += s {
				if len(out.Items) >= maxIterations {
					return nil, fmt.Errorf("range: more than %d elements", maxIterations)
				}
				out.Items = append(out.Items, i)
			}
		}
		return out, nil
	}),
	"cycler": builtin(func(r *renderer, args []any, _ *Object) (any, error) {
		return &cycler{items: append([]any(nil), args...), index: -1}, nil
	}),
	"joiner": builtin(func(r *renderer, args []any, _ *Object) (any, error) {
		sep := arg(args, 0)
		if !truthy(sep) {
			sep = ","
		}
		return &joiner{sep: toString(sep), first: true}, nil
	}),
}

// cycler is the object cycler(...) returns.
type cycler struct {
	items   []any
	index   int
	current any
}

// joiner is the function joiner(sep) returns.
type joiner struct {
	sep   string
	first bool
}

func (j *joiner) call(*renderer, []any, *Object) (any, error) {
	if j.first {
		j.first = false
		return "", nil
	}
	return j.sep, nil
}

// macro is a {% macro %} bound to the render that defined it, or the
// caller of a {% call %} (closure set: the call site's bound variables).
type macro struct {
	def     *macroStmt
	closure map[string]any
}

func (m *macro) call(r *renderer, args []any, kw *Object) (any, error) {
	if r.depth >= maxMacroDepth {
		return nil, fmt.Errorf("macro %s: calls nested deeper than %d", m.def.name, maxMacroDepth)
	}
	var argNames, kwNames []macroParamC
	for _, p := range m.def.params {
		if p.def == nil {
			argNames = append(argNames, p)
		} else {
			kwNames = append(kwNames, p)
		}
	}
	given := map[string]any{}
	if kw != nil {
		for _, k := range kw.keys {
			given[k] = kw.vals[k]
		}
	}
	f := &frame{}
	if m.closure != nil {
		f.closure, f.dynamic = m.closure, r.frame
	}
	if c, ok := given["caller"]; ok {
		f.set("caller", c)
	}
	f.bound = m.def.bound
	for i, p := range argNames {
		v := arg(args, i)
		if i >= len(args) {
			if gv, ok := given[p.name]; ok {
				v = gv
				delete(given, p.name)
			}
		}
		f.set(p.name, v)
	}
	for i := len(argNames); i < len(args); i++ {
		if k := i - len(argNames); k < len(kwNames) {
			given[kwNames[k].name] = args[i]
		}
	}
	saved := r.frame
	r.frame = f
	r.depth++
	defer func() { r.frame = saved; r.depth-- }()
	for _, p := range kwNames {
		if v, ok := given[p.name]; ok {
			f.set(p.name, v)
			continue
		}
		v, err := p.def.eval(r)
		if err != nil {
			return nil, err
		}
		f.set(p.name, v)
	}
	out, err := r.capture(m.def.body)
	if err != nil {
		return nil, err
	}
	return markSafe(out), nil
}

// boundMethod is obj.method looked up on a string, array, number or cycler.
type boundMethod struct {
	recv any
	name string
}

type methodFunc[T any] func(r *renderer, recv T, args []any) (any, error)

func (m *boundMethod) call(r *renderer, args []any, kw *Object) (any, error) {
	if kw != nil {
		args = append(args, kw) // JavaScript functions see keyword arguments as a trailing object
	}
	switch x := m.recv.(type) {
	case string:
		return stringMethods[m.name](r, x, args)
	case *Array:
		return arrayMethods[m.name](r, x, args)
	case float64:
		return numberMethods[m.name](r, x, args)
	case *regExp:
		return regExpMethods[m.name](r, x, args)
	case *cycler:
		if m.name == "reset" {
			x.index, x.current = -1, nil
			return undef, nil
		}
		x.index++
		if x.index >= len(x.items) {
			x.index = 0
		}
		x.current = arg(x.items, x.index)
		return x.current, nil
	}
	return nil, fmt.Errorf("%s is not a function", m.name)
}

// searchArg is the search string of includes/startsWith/indexOf.
func searchArg(args []any) string { return toString(arg(args, 0)) }

// stringMethods are the String.prototype methods templates may call.
var stringMethods = map[string]methodFunc[string]{
	"charAt": func(_ *renderer, s string, args []any) (any, error) {
		js, i := newJSString(s), toInteger(arg(args, 0))
		if i < 0 || i >= float64(js.len()) {
			return "", nil
		}
		return js.at(int(i)), nil
	},
	"charCodeAt": func(_ *renderer, s string, args []any) (any, error) {
		js, i := newJSString(s), toInteger(arg(args, 0))
		if i < 0 || i >= float64(js.len()) {
			return math.NaN(), nil
		}
		if js.ascii {
			return float64(s[int(i)]), nil
		}
		return float64(js.units[int(i)]), nil
	},
	"at": func(_ *renderer, s string, args []any) (any, error) {
		js := newJSString(s)
		i := toInteger(arg(args, 0))
		if i < 0 {
			i += float64(js.len())
		}
		if i < 0 || i >= float64(js.len()) {
			return undef, nil
		}
		return js.at(int(i)), nil
	},
	"concat": func(r *renderer, s string, args []any) (any, error) {
		parts := make([]string, len(args))
		n := len(s)
		for i, a := range args {
			parts[i] = toString(a)
			n += len(parts[i])
		}
		if err := r.charge(n); err != nil {
			return nil, err
		}
		return s + strings.Join(parts, ""), nil
	},
	"includes": func(_ *renderer, s string, args []any) (any, error) {
		js := newJSString(s)
		return js.indexOf(searchArg(args), clampIndex(toInteger(arg(args, 1)), js.len())) >= 0, nil
	},
	"startsWith": func(_ *renderer, s string, args []any) (any, error) {
		js, sub := newJSString(s), newJSString(searchArg(args))
		start := min(max(int(toInteger(arg(args, 1))), 0), js.len())
		if start+sub.len() > js.len() {
			return false, nil
		}
		return js.slice(start, start+sub.len()) == sub.s, nil
	},
	"endsWith": func(_ *renderer, s string, args []any) (any, error) {
		js, sub := newJSString(s), newJSString(searchArg(args))
		end := js.len()
		if e := arg(args, 1); !isUndef(e) {
			end = min(max(int(toInteger(e)), 0), js.len())
		}
		start := end - sub.len()
		if start < 0 {
			return false, nil
		}
		return js.slice(start, end) == sub.s, nil
	},
	"indexOf": func(_ *renderer, s string, args []any) (any, error) {
		js := newJSString(s)
		return float64(js.indexOf(searchArg(args), clampIndex(toInteger(arg(args, 1)), js.len()))), nil
	},
	"lastIndexOf": func(_ *renderer, s string, args []any) (any, error) {
		js := newJSString(s)
		from := js.len()
		if n := toNumber(arg(args, 1)); !math.IsNaN(n) {
			from = min(max(int(math.Trunc(n)), 0), js.len())
		}
		return float64(js.lastIndexOf(searchArg(args), from)), nil
	},
	"padStart": func(r *renderer, s string, args []any) (any, error) { return pad(r, s, args, true) },
	"padEnd":   func(r *renderer, s string, args []any) (any, error) { return pad(r, s, args, false) },
	"repeat": func(r *renderer, s string, args []any) (any, error) {
		n := toInteger(arg(args, 0))
		if n < 0 || math.IsInf(n, 0) {
			return nil, fmt.Errorf("Invalid count value: %s", formatNumber(toNumber(arg(args, 0))))
		}
		if s == "" || n == 0 {
			return "", nil
		}
		if float64(len(s))*n > float64(r.room()) {
			return nil, r.budgetError()
		}
		if err := r.charge(len(s) * int(n)); err != nil {
			return nil, err
		}
		return strings.Repeat(s, int(n)), nil
	},
	"replace": func(r *renderer, s string, args []any) (any, error) {
		if x, ok := arg(args, 0).(*regExp); ok {
			return replaceRegExp(r, s, x, arg(args, 1))
		}
		return replaceJS(r, s, toString(arg(args, 0)), toString(arg(args, 1)), false)
	},
	"replaceAll": func(r *renderer, s string, args []any) (any, error) {
		if x, ok := arg(args, 0).(*regExp); ok {
			if !x.global {
				return nil, typeError("replaceAll must be called with a global RegExp")
			}
			return replaceRegExp(r, s, x, arg(args, 1))
		}
		return replaceJS(r, s, toString(arg(args, 0)), toString(arg(args, 1)), true)
	},
	"match": func(_ *renderer, s string, args []any) (any, error) {
		x, err := asRegExp(arg(args, 0))
		if err != nil {
			return nil, err
		}
		return matchRegExp(s, x), nil
	},
	"search": func(_ *renderer, s string, args []any) (any, error) {
		x, err := asRegExp(arg(args, 0))
		if err != nil {
			return nil, err
		}
		return searchRegExp(s, x), nil
	},
	"slice": func(_ *renderer, s string, args []any) (any, error) {
		js := newJSString(s)
		n := js.len()
		start := clampIndex(toInteger(arg(args, 0)), n)
		end := n
		if e := arg(args, 1); !isUndef(e) {
			end = clampIndex(toInteger(e), n)
		}
		return js.slice(start, end), nil
	},
	"substring": func(_ *renderer, s string, args []any) (any, error) {
		js := newJSString(s)
		n := js.len()
		clamp := func(f float64) int { return int(math.Min(math.Max(f, 0), float64(n))) }
		start := clamp(toInteger(arg(args, 0)))
		end := n
		if e := arg(args, 1); !isUndef(e) {
			end = clamp(toInteger(e))
		}
		if start > end {
			start, end = end, start
		}
		return js.slice(start, end), nil
	},
	"substr": func(_ *renderer, s string, args []any) (any, error) {
		js := newJSString(s)
		n := js.len()
		start := clampIndex(toInteger(arg(args, 0)), n)
		length := float64(n - start)
		if l := arg(args, 1); !isUndef(l) {
			length = math.Min(math.Max(toInteger(l), 0), length)
		}
		return js.slice(start, start+int(length)), nil
	},
	"split": func(r *renderer, s string, args []any) (any, error) {
		limit := uint64(math.MaxUint32)
		if l := arg(args, 1); !isUndef(l) {
			limit = toUint32(toNumber(l))
		}
		out := &Array{Items: []any{}}
		if limit == 0 {
			return out, nil
		}
		sepV := arg(args, 0)
		if isUndef(sepV) {
			out.Items = append(out.Items, s)
			return out, nil
		}
		if x, ok := sepV.(*regExp); ok {
			if err := r.charge(2 * arrayBytes(utf16Len(s)+1)); err != nil {
				return nil, err
			}
			return splitRegExp(s, x, limit), nil
		}
		sep := toString(sepV)
		// Each part is a string in an array: charged before they are made.
		n := strings.Count(s, sep) + 1
		if sep == "" {
			n = newJSString(s).len()
		}
		if err := r.charge(2 * arrayBytes(int(min(uint64(n), limit)))); err != nil {
			return nil, err
		}
		var parts []string
		if sep == "" {
			js := newJSString(s)
			for i := 0; i < js.len(); i++ {
				parts = append(parts, js.at(i))
			}
		} else {
			parts = strings.Split(s, sep)
		}
		for _, p := range parts {
			if uint64(len(out.Items)) >= limit {
				break
			}
			out.Items = append(out.Items, p)
		}
		return out, nil
	},
	"toLowerCase":       func(_ *renderer, s string, _ []any) (any, error) { return lowerJS(s), nil },
	"toUpperCase":       func(_ *renderer, s string, _ []any) (any, error) { return upperJS(s), nil },
	"toLocaleLowerCase": func(_ *renderer, s string, _ []any) (any, error) { return lowerJS(s), nil },
	"toLocaleUpperCase": func(_ *renderer, s string, _ []any) (any, error) { return upperJS(s), nil },
	"trim":              func(_ *renderer, s string, _ []any) (any, error) { return trimJS(s), nil },
	"trimStart":         func(_ *renderer, s string, _ []any) (any, error) { return trimLeftJS(s), nil },
	"trimLeft":          func(_ *renderer, s string, _ []any) (any, error) { return trimLeftJS(s), nil },
	"trimEnd":           func(_ *renderer, s string, _ []any) (any, error) { return trimRightJS(s), nil },
	"trimRight":         func(_ *renderer, s string, _ []any) (any, error) { return trimRightJS(s), nil },
	"toString":          func(_ *renderer, s string, _ []any) (any, error) { return s, nil },
	"valueOf":           func(_ *renderer, s string, _ []any) (any, error) { return s, nil },
}

func toUint32(f float64) uint64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return uint64(int64(math.Trunc(f))) & 0xffffffff
}

// lowerJS and upperJS are toLowerCase/toUpperCase, with the special
// casings JavaScript applies beyond Go's simple mappings.
func lowerJS(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	return mapRunes(s, func(t string) string { return strings.ToLower(strings.ReplaceAll(t, "\u0130", "i\u0307")) })
}

func upperJS(s string) string {
	if isASCII(s) {
		return strings.ToUpper(s)
	}
	return mapRunes(s, func(t string) string { return strings.ToUpper(strings.ReplaceAll(t, "ß", "SS")) })
}

func pad(r *renderer, s string, args []any, start bool) (any, error) {
	js := newJSString(s)
	target := toInteger(arg(args, 0))
	fill := " "
	if f := arg(args, 1); !isUndef(f) {
		fill = toString(f)
	}
	if target <= float64(js.len()) || fill == "" {
		return s, nil
	}
	if target > float64(r.room()) {
		return nil, r.budgetError()
	}
	if err := r.charge(int(target) * 3); err != nil { // at most 3 bytes per unit
		return nil, err
	}
	need := int(target) - js.len()
	fu := encodeUTF16(fill)
	var units []uint16
	for len(units) < need {
		units = append(units, fu...)
	}
	p := decodeUTF16(units[:need])
	if start {
		return joinHalves(p, s), nil
	}
	return joinHalves(s, p), nil
}

// replaceJS is String.prototype.replace/replaceAll with a string pattern,
// including the $ patterns of the replacement ($$, $&, $`, $'), built
// within the render's budget.
func replaceJS(r *renderer, s, pat, repl string, all bool) (any, error) {
	js := newJSString(s)
	plen := newJSString(pat).len()
	b := r.builder()
	last := 0
	for from := 0; from <= js.len() && !b.over; {
		i := js.indexOf(pat, from)
		if i < 0 {
			break
		}
		b.WriteString(js.slice(last, i))
		expandReplacement(&b, repl, pat, js.slice(0, i), js.slice(i+plen, js.len()))
		last = i + plen
		if !all {
			break
		}
		from = i + plen
		if plen == 0 {
			if i < js.len() {
				b.WriteString(js.at(i))
			}
			last = i + 1
			from = i + 1
		}
	}
	if last <= js.len() {
		b.WriteString(js.slice(last, js.len()))
	}
	if b.over {
		return nil, r.overflow(&b)
	}
	return b.String(), nil
}

func expandReplacement(b *bounded, repl, matched, before, after string) {
	for i := 0; i < len(repl); i++ {
		if repl[i] != '$' || i+1 == len(repl) {
			b.WriteByte(repl[i])
			continue
		}
		switch repl[i+1] {
		case '$':
			b.WriteByte('$')
		case '&':
			b.WriteString(matched)
		case '`':
			b.WriteString(before)
		case '\'':
			b.WriteString(after)
		default:
			b.WriteByte('$')
			continue
		}
		i++
	}
}

// payloadReadOnly refuses to change an array that came with the data.
func payloadReadOnly(a *Array, method string) error {
	if a.frozen {
		return fmt.Errorf("%s would change an array of the payload, which is read-only: copy it first with .slice()", method)
	}
	return nil
}

// arrayMethods are the Array.prototype methods templates may call.
var arrayMethods = map[string]methodFunc[*Array]{
	"join": func(r *renderer, a *Array, args []any) (any, error) {
		sep := ","
		if s := arg(args, 0); !isUndef(s) {
			sep = toString(s)
		}
		return r.join(a, sep)
	},
	"indexOf": func(_ *renderer, a *Array, args []any) (any, error) {
		from := clampIndex(toInteger(arg(args, 1)), len(a.Items))
		for i := from; i < len(a.Items); i++ {
			if strictEqual(a.Items[i], arg(args, 0)) {
				return float64(i), nil
			}
		}
		return -1.0, nil
	},
	"lastIndexOf": func(_ *renderer, a *Array, args []any) (any, error) {
		for i := len(a.Items) - 1; i >= 0; i-- {
			if strictEqual(a.Items[i], arg(args, 0)) {
				return float64(i), nil
			}
		}
		return -1.0, nil
	},
	"includes": func(_ *renderer, a *Array, args []any) (any, error) {
		x := arg(args, 0)
		xf, xNaN := x.(float64)
		for _, it := range a.Items {
			if f, ok := it.(float64); ok && xNaN && math.IsNaN(f) && math.IsNaN(xf) {
				return true, nil
			}
			if strictEqual(it, x) {
				return true, nil
			}
		}
		return false, nil
	},
	"at": func(_ *renderer, a *Array, args []any) (any, error) {
		i := toInteger(arg(args, 0))
		if i < 0 {
			i += float64(len(a.Items))
		}
		if i < 0 || i >= float64(len(a.Items)) {
			return undef, nil
		}
		return a.Items[int(i)], nil
	},
	"slice": func(_ *renderer, a *Array, args []any) (any, error) {
		n := len(a.Items)
		start := clampIndex(toInteger(arg(args, 0)), n)
		end := n
		if e := arg(args, 1); !isUndef(e) {
			end = clampIndex(toInteger(e), n)
		}
		out := &Array{Items: []any{}}
		if start < end {
			out.Items = append(out.Items, a.Items[start:end]...)
		}
		return out, nil
	},
	"concat": func(r *renderer, a *Array, args []any) (any, error) {
		n := len(a.Items)
		for _, x := range args {
			if xa, ok := x.(*Array); ok {
				n += len(xa.Items)
			} else {
				n++
			}
		}
		if err := r.charge(arrayBytes(n)); err != nil {
			return nil, err
		}
		out := &Array{Items: append(make([]any, 0, n), a.Items...)}
		for _, x := range args {
			if xa, ok := x.(*Array); ok {
				out.Items = append(out.Items, xa.Items...)
			} else {
				out.Items = append(out.Items, x)
			}
		}
		return out, nil
	},
	"toString": func(r *renderer, a *Array, _ []any) (any, error) { return r.join(a, ",") },
	"push": func(r *renderer, a *Array, args []any) (any, error) {
		if err := payloadReadOnly(a, "push"); err != nil {
			return nil, err
		}
		if err := r.charge(arrayBytes(len(args))); err != nil {
			return nil, err
		}
		if len(a.Items)+len(args) > maxIterations {
			return nil, fmt.Errorf("push: array longer than %d elements", maxIterations)
		}
		a.Items = append(a.Items, args...)
		return float64(len(a.Items)), nil
	},
	"pop": func(_ *renderer, a *Array, _ []any) (any, error) {
		if err := payloadReadOnly(a, "pop"); err != nil {
			return nil, err
		}
		if len(a.Items) == 0 {
			return undef, nil
		}
		v := a.Items[len(a.Items)-1]
		a.Items = a.Items[:len(a.Items)-1]
		return v, nil
	},
	"shift": func(_ *renderer, a *Array, _ []any) (any, error) {
		if err := payloadReadOnly(a, "shift"); err != nil {
			return nil, err
		}
		if len(a.Items) == 0 {
			return undef, nil
		}
		v := a.Items[0]
		a.Items = append([]any{}, a.Items[1:]...)
		return v, nil
	},
	"unshift": func(r *renderer, a *Array, args []any) (any, error) {
		if err := payloadReadOnly(a, "unshift"); err != nil {
			return nil, err
		}
		if err := r.charge(arrayBytes(len(a.Items) + len(args))); err != nil {
			return nil, err
		}
		a.Items = append(append([]any{}, args...), a.Items...)
		return float64(len(a.Items)), nil
	},
	"reverse": func(_ *renderer, a *Array, _ []any) (any, error) {
		if err := payloadReadOnly(a, "reverse"); err != nil {
			return nil, err
		}
		for i, j := 0, len(a.Items)-1; i < j; i, j = i+1, j-1 {
			a.Items[i], a.Items[j] = a.Items[j], a.Items[i]
		}
		return a, nil
	},
}

// numberMethods are the Number.prototype methods templates may call.
var numberMethods = map[string]methodFunc[float64]{
	"toFixed": func(_ *renderer, f float64, args []any) (any, error) {
		d := toInteger(arg(args, 0))
		if d < 0 || d > 100 {
			return nil, fmt.Errorf("toFixed() digits argument must be between 0 and 100")
		}
		return toFixed(f, int(d)), nil
	},
	"toString": func(_ *renderer, f float64, args []any) (any, error) {
		radix := arg(args, 0)
		if isUndef(radix) || toNumber(radix) == 10 {
			return formatNumber(f), nil
		}
		rd := toInteger(radix)
		if rd < 2 || rd > 36 {
			return nil, fmt.Errorf("toString() radix must be between 2 and 36")
		}
		if f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
			return nil, fmt.Errorf("toString(%d) of a non-integer is not supported", int(rd))
		}
		return strconv.FormatInt(int64(f), int(rd)), nil
	},
	"valueOf": func(_ *renderer, f float64, _ []any) (any, error) { return f, nil },
	"toPrecision": func(_ *renderer, f float64, args []any) (any, error) {
		if isUndef(arg(args, 0)) {
			return formatNumber(f), nil
		}
		p := toInteger(arg(args, 0))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return formatNumber(f), nil
		}
		if p < 1 || p > 100 {
			return nil, fmt.Errorf("RangeError: toPrecision() argument must be between 1 and 100")
		}
		return toPrecision(f, int(p)), nil
	},
}
