package nunjucks

// testFunc is one "is" test.
type testFunc func(r *renderer, v any, args []any) (bool, error)

func caseTest(upper bool) testFunc {
	return func(_ *renderer, v any, _ []any) (bool, error) {
		s, ok := v.(string)
		if !ok {
			m := "toLowerCase"
			if upper {
				m = "toUpperCase"
			}
			return false, typeError("%s.%s is not a function", toString(v), m)
		}
		if upper {
			return upperJS(s) == s, nil
		}
		return lowerJS(s) == s, nil
	}
}

// tests are Nunjucks' tests, with JavaScript's comparisons.
var tests = map[string]testFunc{
	"callable": func(_ *renderer, v any, _ []any) (bool, error) { _, ok := v.(callable); return ok, nil },
	"defined":  func(_ *renderer, v any, _ []any) (bool, error) { return !isUndef(v), nil },
	"undefined": func(_ *renderer, v any, _ []any) (bool, error) {
		return isUndef(v), nil
	},
	"divisibleby": func(_ *renderer, v any, a []any) (bool, error) {
		return jsMod(toNumber(v), toNumber(arg(a, 0))) == 0, nil
	},
	"equalto": func(_ *renderer, v any, a []any) (bool, error) { return strictEqual(v, arg(a, 0)), nil },
	"eq":      func(_ *renderer, v any, a []any) (bool, error) { return strictEqual(v, arg(a, 0)), nil },
	"sameas":  func(_ *renderer, v any, a []any) (bool, error) { return strictEqual(v, arg(a, 0)), nil },
	"ne":      func(_ *renderer, v any, a []any) (bool, error) { return !strictEqual(v, arg(a, 0)), nil },
	"even":    func(_ *renderer, v any, _ []any) (bool, error) { return jsMod(toNumber(v), 2) == 0, nil },
	"odd":     func(_ *renderer, v any, _ []any) (bool, error) { return jsMod(toNumber(v), 2) == 1, nil },
	"falsy":   func(_ *renderer, v any, _ []any) (bool, error) { return !truthy(v), nil },
	"truthy":  func(_ *renderer, v any, _ []any) (bool, error) { return truthy(v), nil },
	"ge":      func(_ *renderer, v any, a []any) (bool, error) { return relational(">=", v, arg(a, 0)), nil },
	"gt":      func(_ *renderer, v any, a []any) (bool, error) { return relational(">", v, arg(a, 0)), nil },
	"greaterthan": func(_ *renderer, v any, a []any) (bool, error) {
		return relational(">", v, arg(a, 0)), nil
	},
	"le":       func(_ *renderer, v any, a []any) (bool, error) { return relational("<=", v, arg(a, 0)), nil },
	"lt":       func(_ *renderer, v any, a []any) (bool, error) { return relational("<", v, arg(a, 0)), nil },
	"lessthan": func(_ *renderer, v any, a []any) (bool, error) { return relational("<", v, arg(a, 0)), nil },
	"lower":    caseTest(false),
	"upper":    caseTest(true),
	"null":     func(_ *renderer, v any, _ []any) (bool, error) { return v == nil, nil },
	"number":   func(_ *renderer, v any, _ []any) (bool, error) { _, ok := v.(float64); return ok, nil },
	"string":   func(_ *renderer, v any, _ []any) (bool, error) { _, ok := v.(string); return ok, nil },
	"iterable": func(_ *renderer, v any, _ []any) (bool, error) {
		if isNullish(v) {
			return false, typeError("Cannot read properties of %s (reading 'Symbol(Symbol.iterator)')", toString(v))
		}
		switch v.(type) {
		case *Array, string:
			return true, nil
		}
		return false, nil
	},
	"mapping": func(_ *renderer, v any, _ []any) (bool, error) { return isPlainObject(v), nil },
}
