package nunjucks

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
)

// filterFunc is one filter: in is the value piped in, args its arguments
// and kw its keyword arguments (nil when none).
type filterFunc func(r *renderer, in any, args []any, kw *Object) (any, error)

// typeError is the TypeError JavaScript throws when a filter meets a value
// of the wrong type.
func typeError(format string, args ...any) error {
	return fmt.Errorf("TypeError: "+format, args...)
}

// normalize is Nunjucks' normalize(value, default): null, undefined and
// false become the default.
func normalize(v, def any) any {
	if isNullish(v) || v == false {
		return def
	}
	return v
}

// str is what Nunjucks' string filters require after normalize: a string,
// else the TypeError of calling a string method on something else.
func str(v any, method string) (string, error) {
	s, ok := stringLike(normalize(v, ""))
	if !ok {
		return "", typeError("%s.%s is not a function", toString(v), method)
	}
	return s, nil
}

// positional appends keyword arguments as a trailing object, as Nunjucks
// passes them to filters that do not name their parameters.
func positional(args []any, kw *Object) []any {
	if kw != nil {
		return append(args, kw)
	}
	return args
}

// named resolves a filter's arguments by parameter name (the filters
// Nunjucks builds with makeMacro: sort and int).
func named(args []any, kw *Object, names ...string) []any {
	out := make([]any, len(names))
	for i := range names {
		out[i] = arg(args, i)
		if isUndef(out[i]) && kw != nil {
			if v, ok := kw.vals[names[i]]; ok {
				out[i] = v
			}
		}
	}
	return out
}

// elements reads an array-like value as JavaScript's for (i < x.length)
// loops do: arrays by element, strings by UTF-16 unit (charged: a string
// of n units becomes n strings).
func (r *renderer) elements(v any) ([]any, bool, error) {
	switch x := v.(type) {
	case *Array:
		return x.Items, true, nil
	case string:
		js := newJSString(x)
		if err := r.charge(2 * arrayBytes(js.len())); err != nil {
			return nil, false, err
		}
		out := make([]any, js.len())
		for i := range out {
			out[i] = js.at(i)
		}
		return out, true, nil
	}
	return nil, false, nil
}

// property is v[key] written directly in a filter's JavaScript: reading a
// property of undefined or null throws.
func property(v any, key string) (any, error) {
	if isNullish(v) {
		return nil, typeError("Cannot read properties of %s (reading '%s')", toString(v), key)
	}
	return member(v, key), nil
}

// attrGetter is lib.getAttrGetter: a dotted path followed through own
// properties, undefined as soon as one is missing.
func attrGetter(attr any) func(any) any {
	var parts []string
	switch a := attr.(type) {
	case string:
		parts = strings.Split(a, ".")
	case float64:
		parts = []string{formatNumber(a)}
	default:
		parts = []string{toString(attr)}
	}
	return func(item any) any {
		for _, p := range parts {
			if !hasOwn(item, p) {
				return undef
			}
			item = member(item, p)
		}
		return item
	}
}

func hasOwn(v any, key string) bool {
	switch x := v.(type) {
	case *Object:
		_, ok := x.vals[key]
		return ok
	case *Array:
		if key == "length" {
			return true
		}
		i, ok := arrayIndex(key)
		return ok && i < uint64(len(x.Items))
	case string:
		if key == "length" {
			return true
		}
		i, ok := arrayIndex(key)
		return ok && i < uint64(newJSString(x).len())
	case *loopInfo:
		return !isUndef(x.get(key))
	}
	return false
}

// isPlainObject is lib.isObject: a plain object, not an array or a function.
func isPlainObject(v any) bool {
	switch v.(type) {
	case *Object, *loopInfo, *cycler, *safeString:
		return true
	}
	return false
}

var filters map[string]filterFunc

func init() {
	filters = map[string]filterFunc{
		"abs": func(_ *renderer, in any, _ []any, _ *Object) (any, error) { return math.Abs(toNumber(in)), nil },
		"batch": func(r *renderer, in any, args []any, _ *Object) (any, error) {
			items, ok, err := r.elements(in)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, typeError("batch: %s has no length", toString(in))
			}
			n, fill := toNumber(arg(args, 0)), arg(args, 1)
			// Each batch is an array (charged here); a fill pads the last
			// one up to n elements.
			size := arrayBytes(2 * len(items))
			if truthy(fill) && n > 0 {
				size += arrayBytes(int(min(n, float64(maxInt/32))))
			}
			if err := r.charge(size); err != nil {
				return nil, err
			}
			res := &Array{Items: []any{}}
			var tmp []any
			for i, it := range items {
				if jsMod(float64(i), n) == 0 && len(tmp) > 0 {
					res.Items = append(res.Items, &Array{Items: tmp})
					tmp = nil
				}
				tmp = append(tmp, it)
			}
			if len(tmp) > 0 {
				if truthy(fill) {
					for i := float64(len(tmp)); i < n; i++ {
						tmp = append(tmp, fill)
					}
				}
				res.Items = append(res.Items, &Array{Items: tmp})
			}
			return res, nil
		},
		"capitalize": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			s, err := str(in, "toLowerCase")
			if err != nil {
				return nil, err
			}
			return capitalize(s), nil
		},
		"center": func(r *renderer, in any, args []any, _ *Object) (any, error) {
			s, ok := normalize(in, "").(string)
			if !ok {
				s = toString(in)
			}
			width := arg(args, 0)
			if !truthy(width) {
				width = 80.0
			}
			w, n := toNumber(width), float64(newJSString(s).len())
			if n >= w {
				return normalize(in, ""), nil
			}
			spaces := w - n
			if err := r.charge(repeatCount(spaces) + len(s)); err != nil {
				return nil, err
			}
			pre := strings.Repeat(" ", repeatCount(spaces/2-jsMod(spaces, 2)))
			post := strings.Repeat(" ", repeatCount(spaces/2))
			return pre + s + post, nil
		},
		"default": defaultFilter,
		"d":       defaultFilter,
		"dictsort": func(_ *renderer, in any, args []any, _ *Object) (any, error) {
			if !isPlainObject(in) {
				return nil, fmt.Errorf("dictsort filter: val must be an object")
			}
			caseSensitive, by := arg(args, 0), arg(args, 1)
			si := 0
			switch {
			case isUndef(by) || looseEqual(by, "key") && typeOf(by) == "string":
			case typeOf(by) == "string" && by.(string) == "value":
				si = 1
			default:
				return nil, fmt.Errorf("dictsort filter: You can only sort by either key or value")
			}
			o := asObject(in)
			out := &Array{Items: make([]any, 0, len(o.keys))}
			for _, k := range o.keys {
				out.Items = append(out.Items, &Array{Items: []any{k, o.vals[k]}})
			}
			key := func(p any) any {
				v := p.(*Array).Items[si]
				if s, ok := v.(string); ok && !truthy(caseSensitive) {
					return upperJS(s)
				}
				return v
			}
			jsSort(out.Items, func(x, y any) int {
				a, b := key(x), key(y)
				switch {
				case relational(">", a, b):
					return 1
				case strictEqual(a, b):
					return 0
				}
				return -1
			})
			return out, nil
		},
		"dump": func(r *renderer, in any, args []any, kw *Object) (any, error) {
			indent := ""
			switch sp := arg(positional(args, kw), 0).(type) {
			case float64:
				if n := math.Min(10, math.Trunc(sp)); n >= 1 {
					indent = strings.Repeat(" ", int(n))
				}
			case string:
				indent = newJSString(sp).slice(0, min(10, newJSString(sp).len()))
			}
			b := r.builder()
			ok, err := writeJSON(&b, in, indent, "", 0)
			switch {
			case b.over:
				return nil, r.overflow(&b)
			case err != nil:
				return nil, err
			case !ok:
				return undef, nil
			}
			return b.String(), nil
		},
		"escape": escapeFilter,
		"e":      escapeFilter,
		"forceescape": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			return forceEscape(in), nil
		},
		"safe":  safeFilter,
		"first": func(_ *renderer, in any, _ []any, _ *Object) (any, error) { return property(in, "0") },
		"last": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			n, err := property(in, "length")
			if err != nil {
				return nil, err
			}
			return member(in, toNumber(n)-1), nil
		},
		"float": func(_ *renderer, in any, args []any, _ *Object) (any, error) {
			f := parseFloatJS(in)
			if math.IsNaN(f) {
				return arg(args, 0), nil
			}
			return f, nil
		},
		"int": func(_ *renderer, in any, args []any, kw *Object) (any, error) {
			a := named(args, kw, "default", "base")
			base := 10
			if !isUndef(a[1]) {
				base = int(toInteger(a[1]))
			}
			f := parseIntJS(in, base)
			if math.IsNaN(f) {
				return a[0], nil
			}
			return f, nil
		},
		"groupby": func(r *renderer, in any, args []any, _ *Object) (any, error) {
			items, ok, err := r.elements(in)
			if err != nil {
				return nil, err
			}
			if !ok {
				if isNullish(in) {
					return nil, typeError("Cannot read properties of %s (reading 'length')", toString(in))
				}
				items = nil
			}
			get := attrGetter(arg(args, 0))
			out := NewObject(4)
			for _, it := range items {
				k := propertyKey(get(it))
				g, ok := out.vals[k]
				if !ok {
					g = &Array{}
					out.Set(k, g)
				}
				g.(*Array).Items = append(g.(*Array).Items, it)
			}
			return out, nil
		},
		"indent": func(r *renderer, in any, args []any, _ *Object) (any, error) {
			s, err := str(in, "split")
			if err != nil {
				return nil, err
			}
			if s == "" {
				return "", nil
			}
			width := arg(args, 0)
			if !truthy(width) {
				width = 4.0
			}
			lines := strings.Split(s, "\n")
			if err := r.charge(repeatCount(toNumber(width))*len(lines) + len(s) + arrayBytes(len(lines))); err != nil {
				return nil, err
			}
			sp := strings.Repeat(" ", repeatCount(toNumber(width)))
			for i := range lines {
				if i > 0 || truthy(arg(args, 1)) {
					lines[i] = sp + lines[i]
				}
			}
			return strings.Join(lines, "\n"), nil
		},
		"join": func(r *renderer, in any, args []any, kw *Object) (any, error) {
			args = positional(args, kw)
			del, attr := arg(args, 0), arg(args, 1)
			sep := ""
			if truthy(del) {
				sep = toString(del)
			}
			if truthy(attr) {
				if isNullish(in) {
					return "", nil
				}
				items, _, err := r.elements(in)
				if err != nil {
					return nil, err
				}
				mapped := &Array{Items: make([]any, len(items))}
				for i, it := range items {
					v, err := property(it, propertyKey(attr))
					if err != nil {
						return nil, err
					}
					mapped.Items[i] = v
				}
				return r.join(mapped, sep)
			}
			a, ok := in.(*Array)
			if !ok {
				return nil, typeError("%s.join is not a function", toString(in))
			}
			return r.join(a, sep)
		},
		"length": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			v := normalize(in, "")
			if _, safe := v.(*safeString); isPlainObject(v) && !safe {
				return float64(asObject(v).Len()), nil
			}
			return member(v, "length"), nil
		},
		"list": func(r *renderer, in any, _ []any, _ *Object) (any, error) {
			switch x := in.(type) {
			case string:
				items, _, err := r.elements(x)
				if err != nil {
					return nil, err
				}
				return &Array{Items: items}, nil
			case *Array:
				return x, nil
			}
			if isPlainObject(in) {
				o := asObject(in)
				out := &Array{Items: make([]any, 0, o.Len())}
				for _, k := range o.keys {
					e := NewObject(2)
					e.Set("key", k)
					e.Set("value", o.vals[k])
					out.Items = append(out.Items, e)
				}
				return out, nil
			}
			return nil, fmt.Errorf("list filter: type not iterable")
		},
		"lower": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			s, err := str(in, "toLowerCase")
			if err != nil {
				return nil, err
			}
			return lowerJS(s), nil
		},
		"nl2br": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			if isNullish(in) {
				return "", nil
			}
			s, ok := in.(string)
			if !ok {
				return nil, typeError("%s.replace is not a function", toString(in))
			}
			return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "<br />\n"), nil
		},
		"random": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			n, err := property(in, "length")
			if err != nil {
				return nil, err
			}
			return member(in, math.Floor(rand.Float64()*toNumber(n))), nil
		},
		"reject":     selectOrReject(false),
		"select":     selectOrReject(true),
		"rejectattr": selectAttr(false),
		"selectattr": selectAttr(true),
		"replace": func(r *renderer, in any, args []any, _ *Object) (any, error) {
			return replaceFilter(r, in, arg(args, 0), arg(args, 1), arg(args, 2))
		},
		"reverse": func(r *renderer, in any, _ []any, _ *Object) (any, error) {
			if s, ok := in.(string); ok {
				items, _, err := r.elements(s)
				if err != nil {
					return nil, err
				}
				var b strings.Builder
				for i := len(items) - 1; i >= 0; i-- {
					b.WriteString(items[i].(string))
				}
				return b.String(), nil
			}
			items, _, err := r.elements(in)
			if err != nil {
				return nil, err
			}
			out := &Array{Items: make([]any, len(items))}
			for i, it := range items {
				out.Items[len(items)-1-i] = it
			}
			return out, nil
		},
		"round": func(_ *renderer, in any, args []any, _ *Object) (any, error) {
			precision := arg(args, 0)
			if !truthy(precision) {
				precision = 0.0
			}
			factor := math.Pow(10, toNumber(precision))
			x := toNumber(in) * factor
			switch m := arg(args, 1); {
			case typeOf(m) == "string" && m.(string) == "ceil":
				x = math.Ceil(x)
			case typeOf(m) == "string" && m.(string) == "floor":
				x = math.Floor(x)
			default:
				x = jsRound(x)
			}
			return x / factor, nil
		},
		"slice": func(r *renderer, in any, args []any, _ *Object) (any, error) {
			items, ok := in.(*Array)
			if !ok {
				return nil, typeError("slice: %s is not an array", toString(in))
			}
			slices, fill := toNumber(arg(args, 0)), arg(args, 1)
			n := float64(len(items.Items))
			sliceLen := math.Floor(n / slices)
			extra := jsMod(n, slices)
			res := &Array{Items: []any{}}
			offset := 0.0
			for i := 0.0; i < slices; i++ {
				if len(res.Items) >= maxIterations {
					return nil, fmt.Errorf("slice: more than %d slices", maxIterations)
				}
				if err := r.charge(arrayBytes(4)); err != nil {
					return nil, err
				}
				start := offset + i*sliceLen
				if i < extra {
					offset++
				}
				end := offset + (i+1)*sliceLen
				part := &Array{Items: []any{}}
				s, e := clampIndex(start, len(items.Items)), clampIndex(end, len(items.Items))
				if s < e {
					part.Items = append(part.Items, items.Items[s:e]...)
				}
				if truthy(fill) && i >= extra {
					part.Items = append(part.Items, fill)
				}
				res.Items = append(res.Items, part)
			}
			return res, nil
		},
		"sort": func(r *renderer, in any, args []any, kw *Object) (any, error) {
			a := named(args, kw, "reverse", "case_sensitive", "attribute")
			reversed, caseSens, attr := truthy(a[0]), truthy(a[1]), a[2]
			items, _, err := r.elements(in)
			if err != nil {
				return nil, err
			}
			out := &Array{Items: append([]any{}, items...)}
			get := attrGetter(attr)
			var sortErr error
			cmp := func(x, y any) int {
				if truthy(attr) {
					x, y = get(x), get(y)
					if r.strict && (isUndef(x) || isUndef(y)) && sortErr == nil {
						sortErr = fmt.Errorf("sort: attribute %q resolved to undefined", toString(attr))
					}
				}
				xs, xok := x.(string)
				ys, yok := y.(string)
				if !caseSens && xok && yok {
					x, y = lowerJS(xs), lowerJS(ys)
				}
				switch {
				case relational("<", x, y):
					if reversed {
						return 1
					}
					return -1
				case relational(">", x, y):
					if reversed {
						return -1
					}
					return 1
				}
				return 0
			}
			jsSort(out.Items, cmp)
			if sortErr != nil {
				return nil, sortErr
			}
			return out, nil
		},
		"string": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			if isNullish(in) {
				return nil, typeError("Cannot read properties of %s (reading 'toString')", toString(in))
			}
			return toString(in), nil
		},
		"striptags": func(_ *renderer, in any, args []any, _ *Object) (any, error) {
			s, err := str(in, "replace")
			if err != nil {
				return nil, err
			}
			s = trimJS(tagsRE.ReplaceAllString(s, ""))
			if truthy(arg(args, 0)) {
				s = lineEdgeSpacesRE.ReplaceAllString(s, "")
				s = spacesRE.ReplaceAllString(s, " ")
				s = strings.ReplaceAll(s, "\r\n", "\n")
				s = manyNewlinesRE.ReplaceAllString(s, "\n\n")
				return s, nil
			}
			return collapseSpace(s), nil
		},
		"sum": func(r *renderer, in any, args []any, _ *Object) (any, error) {
			attr, start := arg(args, 0), arg(args, 1)
			if isUndef(start) {
				start = 0.0
			}
			var items []any
			if truthy(attr) {
				if !isNullish(in) {
					els, _, err := r.elements(in)
					if err != nil {
						return nil, err
					}
					for _, it := range els {
						v, err := property(it, propertyKey(attr))
						if err != nil {
							return nil, err
						}
						items = append(items, v)
					}
				}
			} else {
				a, ok := in.(*Array)
				if !ok {
					return nil, typeError("%s.reduce is not a function", toString(in))
				}
				items = a.Items
			}
			var acc any = 0.0
			for _, it := range items {
				acc = add(acc, it)
			}
			return add(start, acc), nil
		},
		"title": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			s, err := str(in, "split")
			if err != nil {
				return nil, err
			}
			words := strings.Split(s, " ")
			for i, w := range words {
				words[i] = capitalize(w)
			}
			return strings.Join(words, " "), nil
		},
		"trim": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			s, ok := in.(string)
			if !ok {
				return nil, typeError("%s.replace is not a function", toString(in))
			}
			return trimJS(s), nil
		},
		"truncate": func(_ *renderer, in any, args []any, _ *Object) (any, error) {
			v := normalize(in, "")
			js := newJSString(toString(v))
			length := arg(args, 0)
			if !truthy(length) {
				length = 255.0
			}
			n := toNumber(length)
			if _, isStr := v.(string); isStr && float64(js.len()) <= n {
				return v, nil
			}
			if !isStringLike(v) {
				return nil, typeError("%s.substring is not a function", toString(v))
			}
			var cut string
			if truthy(arg(args, 1)) {
				cut = js.slice(0, clampIndex(n, js.len()))
			} else {
				idx := js.lastIndexOf(" ", int(math.Max(0, math.Min(n, float64(js.len())))))
				if idx == -1 {
					idx = clampIndex(n, js.len())
				}
				cut = js.slice(0, idx)
			}
			if end := arg(args, 2); !isNullish(end) {
				return cut + toString(end), nil
			}
			return cut + "...", nil
		},
		"upper": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			s, err := str(in, "toUpperCase")
			if err != nil {
				return nil, err
			}
			return upperJS(s), nil
		},
		"urlencode": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			if s, ok := in.(string); ok {
				return encodeURIComponent(s)
			}
			var pairs []string
			if a, ok := in.(*Array); ok {
				for _, it := range a.Items {
					k, err := property(it, "0")
					if err != nil {
						return nil, err
					}
					pair, err := encodePair(toString(k), toString(member(it, "1")))
					if err != nil {
						return nil, err
					}
					pairs = append(pairs, pair)
				}
			} else if isPlainObject(in) {
				o := asObject(in)
				for _, k := range o.keys {
					pair, err := encodePair(k, toString(o.vals[k]))
					if err != nil {
						return nil, err
					}
					pairs = append(pairs, pair)
				}
			} else if isNullish(in) {
				return nil, typeError("Cannot convert undefined or null to object")
			}
			return strings.Join(pairs, "&"), nil
		},
		"urlize": urlize,
		"wordcount": func(_ *renderer, in any, _ []any, _ *Object) (any, error) {
			v := normalize(in, "")
			if !truthy(v) {
				return nil, nil
			}
			s, ok := v.(string)
			if !ok {
				return nil, typeError("%s.match is not a function", toString(v))
			}
			n := len(wordRE.FindAllStringIndex(s, -1))
			if n == 0 {
				return nil, nil
			}
			return float64(n), nil
		},
		"shellquote": shellquote,
	}
	// The filters Nunjucks returns through copySafeness (replace handles
	// its regular-expression form itself).
	for _, name := range []string{"capitalize", "center", "indent", "nl2br", "string", "striptags", "title", "trim", "truncate"} {
		filters[name] = keepSafeness(filters[name])
	}
}

func isStringLike(v any) bool { _, ok := v.(string); return ok }

func repeatCount(f float64) int {
	if math.IsNaN(f) || f <= 0 {
		return 0
	}
	return int(math.Ceil(math.Min(f, maxOutput)))
}

func capitalize(s string) string {
	l := lowerJS(s)
	js := newJSString(l)
	if js.len() == 0 {
		return ""
	}
	return upperJS(js.at(0)) + js.slice(1, js.len())
}

func defaultFilter(_ *renderer, in any, args []any, _ *Object) (any, error) {
	def := arg(args, 0)
	if truthy(arg(args, 1)) {
		if truthy(in) {
			return in, nil
		}
		return def, nil
	}
	if !isUndef(in) {
		return in, nil
	}
	return def, nil
}

var escapeReplacer = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "'", "&#39;", "<", "&lt;", ">", "&gt;", `\`, "&#92;")

func selectOrReject(want bool) filterFunc {
	return func(r *renderer, in any, args []any, _ *Object) (any, error) {
		name := arg(args, 0)
		if isUndef(name) {
			name = "truthy"
		}
		t, ok := tests[propertyKey(name)]
		if !ok {
			return nil, fmt.Errorf("test not found: %s", toString(name))
		}
		if isNullish(in) {
			return nil, typeError("Cannot convert undefined or null to object")
		}
		items, _, err := r.elements(in)
		if err != nil {
			return nil, err
		}
		out := &Array{Items: []any{}}
		for _, it := range items {
			var targs []any
			if len(args) > 1 {
				targs = []any{args[1]}
			}
			ok, err := t(r, it, targs)
			if err != nil {
				return nil, err
			}
			if ok == want {
				out.Items = append(out.Items, it)
			}
		}
		return out, nil
	}
}

func selectAttr(want bool) filterFunc {
	return func(r *renderer, in any, args []any, _ *Object) (any, error) {
		a, ok := in.(*Array)
		if !ok {
			return nil, typeError("%s.filter is not a function", toString(in))
		}
		key := propertyKey(arg(args, 0))
		out := &Array{Items: []any{}}
		for _, it := range a.Items {
			v, err := property(it, key)
			if err != nil {
				return nil, err
			}
			if truthy(v) == want {
				out.Items = append(out.Items, it)
			}
		}
		return out, nil
	}
}

// replaceFilter is Nunjucks' replace(str, old, new, maxCount), built
// within the render's budget. With a regular expression it is str.replace
// (every match of a global one).
func replaceFilter(r *renderer, in, old, repl, maxCount any) (any, error) {
	if x, ok := old.(*regExp); ok {
		s, ok := stringLike(in)
		if !ok {
			if isNullish(in) {
				return nil, typeError("Cannot read properties of %s (reading 'replace')", toString(in))
			}
			return nil, typeError("str.replace is not a function")
		}
		return replaceRegExp(r, s, x, repl)
	}
	maxN := -1.0
	if !isUndef(maxCount) {
		maxN = toNumber(maxCount)
	}
	var o string
	switch x := old.(type) {
	case float64:
		o = formatNumber(x)
	case string:
		o = x
	default:
		return in, nil
	}
	var s string
	switch x := in.(type) {
	case float64:
		s = formatNumber(x)
	case string:
		s = x
	case *safeString:
		v, err := replaceFilter(r, x.s, old, repl, maxCount)
		if t, ok := v.(string); ok && err == nil {
			return markSafe(t), nil // copySafeness
		}
		return v, err
	default:
		return in, nil
	}
	rs := toString(repl)
	js := newJSString(s)
	if o == "" {
		// Every gap between two units, and both ends, gets the replacement.
		if err := r.charge((js.len()+1)*len(rs) + len(s)); err != nil {
			return nil, err
		}
		var b strings.Builder
		b.WriteString(rs)
		for i := 0; i < js.len(); i++ {
			b.WriteString(js.at(i))
			b.WriteString(rs)
		}
		return b.String(), nil
	}
	next := js.indexOf(o, 0)
	if maxN == 0 || next == -1 {
		return s, nil
	}
	olen := newJSString(o).len()
	b := r.builder()
	p, count := 0, 0.0
	for next > -1 && (maxN == -1 || count < maxN) && !b.over {
		b.WriteString(js.slice(p, next))
		b.WriteString(rs)
		p = next + olen
		count++
		next = js.indexOf(o, p)
	}
	if p < js.len() {
		b.WriteString(js.slice(p, js.len()))
	}
	if b.over {
		return nil, r.overflow(&b)
	}
	return b.String(), nil
}

var (
	tagsRE           = regexp.MustCompile(`(?i)</?([a-z][a-z0-9]*)\b[^>]*>|<!--[\s\S]*?-->`)
	lineEdgeSpacesRE = regexp.MustCompile(`(?m)^ +| +$`)
	spacesRE         = regexp.MustCompile(` +`)
	manyNewlinesRE   = regexp.MustCompile(`\n\n\n+`)
	wordRE           = regexp.MustCompile(`\w+`)
)

// collapseSpace replaces every run of JavaScript white space with one space.
func collapseSpace(s string) string {
	var b strings.Builder
	inSpace := false
	for _, r := range s {
		if isJSSpace(r) {
			if !inSpace {
				b.WriteByte(' ')
			}
			inSpace = true
			continue
		}
		inSpace = false
		b.WriteRune(r)
	}
	return b.String()
}

var errURIMalformed = errors.New("URIError: URI malformed")

// encodePair is k=v, each encoded.
func encodePair(k, v string) (string, error) {
	ek, err := encodeURIComponent(k)
	if err != nil {
		return "", err
	}
	ev, err := encodeURIComponent(v)
	return ek + "=" + ev, err
}

// encodeURIComponent escapes everything but A-Z a-z 0-9 - _ . ! ~ * ' ( ),
// UTF-8 byte by byte; a lone surrogate is JavaScript's URIError.
func encodeURIComponent(s string) (string, error) {
	if hasLoneSurrogate(s) {
		return "", errURIMalformed
	}
	s = toWellFormed(s)
	const unreserved = "-_.!~*'()"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(unreserved, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte("0123456789ABCDEF"[c>>4])
		b.WriteByte("0123456789ABCDEF"[c&0xf])
	}
	return b.String(), nil
}

var (
	puncRE      = regexp.MustCompile(`^(?:\(|<|&lt;)?(.*?)(?:\.|,|\)|\n|&gt;)?$`)
	emailRE     = regexp.MustCompile(`(?i)^[\w.!#$%&'*+\-/=?^` + "`" + `{|}~]+@[a-z\d\-]+(\.[a-z\d\-]+)+$`)
	httpRE      = regexp.MustCompile(`^https?://.*$`)
	wwwRE       = regexp.MustCompile(`^www\.`)
	tldRE       = regexp.MustCompile(`\.(?:org|net|com)(?::|/|$)`)
	splitSpaces = regexp.MustCompile(`[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]+`)
)

func urlize(_ *renderer, in any, args []any, _ *Object) (any, error) {
	s, ok := in.(string)
	if !ok {
		return nil, typeError("%s.split is not a function", toString(in))
	}
	length := math.Inf(1)
	if l := toNumber(arg(args, 0)); !math.IsNaN(l) {
		length = l
	}
	noFollow := ""
	if v, ok := arg(args, 1).(bool); ok && v {
		noFollow = ` rel="nofollow"`
	}
	// Split keeping the separators, as str.split(/(\s+)/) does.
	var words []string
	last := 0
	for _, loc := range splitSpaces.FindAllStringIndex(s, -1) {
		words = append(words, s[last:loc[0]], s[loc[0]:loc[1]])
		last = loc[1]
	}
	words = append(words, s[last:])
	var b strings.Builder
	for _, w := range words {
		if w == "" {
			continue
		}
		possible := w
		if m := puncRE.FindStringSubmatch(w); m != nil {
			possible = m[1]
		}
		js := newJSString(possible)
		short := possible
		if length < float64(js.len()) {
			short = js.slice(0, clampIndex(length, js.len()))
		}
		switch {
		case httpRE.MatchString(possible):
			fmt.Fprintf(&b, `<a href="%s"%s>%s</a>`, possible, noFollow, short)
		case wwwRE.MatchString(possible):
			fmt.Fprintf(&b, `<a href="http://%s"%s>%s</a>`, possible, noFollow, short)
		case emailRE.MatchString(possible):
			fmt.Fprintf(&b, `<a href="mailto:%s">%s</a>`, possible, possible)
		case tldRE.MatchString(possible):
			fmt.Fprintf(&b, `<a href="http://%s"%s>%s</a>`, possible, noFollow, short)
		default:
			b.WriteString(w)
		}
	}
	return b.String(), nil
}

// shellquote quotes a value as one POSIX shell word: single quotes around
// it, each single quote inside written as '"'"'. An array becomes its
// elements quoted and joined by spaces; undefined and null become ”. It is
// hostforge's addition: Nunjucks has no shell quoting, and a command
// template should never interpolate a payload value unquoted.
func shellquote(_ *renderer, in any, _ []any, _ *Object) (any, error) {
	if a, ok := in.(*Array); ok {
		parts := make([]string, len(a.Items))
		for i, it := range a.Items {
			parts[i] = quoteShell(it)
		}
		return strings.Join(parts, " "), nil
	}
	return quoteShell(in), nil
}

func quoteShell(v any) string {
	s := ""
	if !isNullish(v) {
		s = toString(v)
	}
	return "'" + strings.ReplaceAll(toUTF8(s), "'", `'"'"'`) + "'"
}
