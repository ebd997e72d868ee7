package nunjucks

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// formatNumber is JavaScript's Number.prototype.toString(): integral
// values print without a fraction (4000/1000 prints 4), and exponents
// appear from 1e21 up and below 1e-6.
func formatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case f == 0:
		return "0"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f < 0:
		return "-" + formatNumber(-f)
	}
	if f < 1e21 && f == math.Trunc(f) && f < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	// Shortest round-tripping digits, then ECMAScript's layout rules.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.dddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	ex := strconv.Itoa(abs(n - 1))
	if k == 1 {
		return digits + "e" + sign + ex
	}
	return digits[:1] + "." + digits[1:] + "e" + sign + ex
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// stringToNumber is JavaScript's ToNumber applied to a string.
func stringToNumber(s string) float64 {
	s = trimJS(s)
	if s == "" {
		return 0
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			n, ok := new(big.Int).SetString(s[2:], base)
			if !ok || strings.ContainsAny(s[2:], "_+-") {
				return math.NaN()
			}
			f, _ := new(big.Float).SetInt(n).Float64()
			return f
		}
	}
	if !isDecimalLiteral(s) {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f // ±Inf or 0, as JavaScript rounds
		}
		return math.NaN()
	}
	return f
}

// isDecimalLiteral matches StrDecimalLiteral without Infinity:
// [+-] (digits [. digits?] | . digits) [e [+-] digits].
func isDecimalLiteral(s string) bool {
	return decimalPrefix(s) == len(s)
}

// decimalPrefix returns the length of the longest prefix of s that is a
// decimal literal (0 when none).
func decimalPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	intDigits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		intDigits++
	}
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			fracDigits++
		}
		if intDigits > 0 || fracDigits > 0 {
			i = j
		}
	}
	if intDigits == 0 && fracDigits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// parseFloatJS is JavaScript's global parseFloat.
func parseFloatJS(v any) float64 {
	s := trimLeftJS(toString(v))
	for _, inf := range []string{"Infinity", "+Infinity", "-Infinity"} {
		if strings.HasPrefix(s, inf) {
			if inf[0] == '-' {
				return math.Inf(-1)
			}
			return math.Inf(1)
		}
	}
	n := decimalPrefix(s)
	if n == 0 {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s[:n], 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f
		}
		return math.NaN()
	}
	return f
}

// parseIntJS is JavaScript's global parseInt(v, radix).
func parseIntJS(v any, radix int) float64 {
	s := trimLeftJS(toString(v))
	sign := 1.0
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	strip := true
	if radix != 0 {
		if radix < 2 || radix > 36 {
			return math.NaN()
		}
		if radix != 16 {
			strip = false
		}
	} else {
		radix = 10
	}
	if strip && len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s, radix = s[2:], 16
	}
	end := 0
	for end < len(s) && digitVal(s[end]) < radix {
		end++
	}
	if end == 0 {
		return math.NaN()
	}
	n, ok := new(big.Int).SetString(s[:end], radix)
	if !ok {
		return math.NaN()
	}
	f, _ := new(big.Float).SetInt(n).Float64()
	return sign * f
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// jsRound is Math.round: halves round towards +Infinity.
func jsRound(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	r := math.Floor(f + 0.5)
	if r == 0 && f < 0 {
		return math.Copysign(0, -1)
	}
	return r
}

// toFixed is Number.prototype.toFixed(digits) for |f| < 1e21.
func toFixed(f float64, digits int) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	if math.Abs(f) >= 1e21 || math.IsInf(f, 0) {
		return formatNumber(f)
	}
	// JavaScript picks n such that n/10^digits - f is closest to zero,
	// the larger n on a tie; big.Float gives the exact decimal expansion.
	exact := new(big.Float).SetPrec(2000).SetFloat64(f)
	s := exact.Text('f', 1100)
	neg := f < 0
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	frac += strings.Repeat("0", digits+1)
	kept := whole + frac[:digits]
	rest := frac[digits:]
	n, _ := new(big.Int).SetString(kept, 10)
	if rest[0] >= '5' {
		n.Add(n, big.NewInt(1))
	}
	out := n.String()
	if digits > 0 {
		if len(out) <= digits {
			out = strings.Repeat("0", digits-len(out)+1) + out
		}
		out = out[:len(out)-digits] + "." + out[len(out)-digits:]
	}
	if neg {
		out = "-" + out
	}
	return out
}

// toPrecision is Number.prototype.toPrecision(p) for a finite f and
// 1 <= p <= 100: p significant digits (the nearer of the two candidates,
// the larger on a tie, from f's exact decimal expansion), in fixed
// notation unless the exponent is below -6 or at least p.
func toPrecision(f float64, p int) string {
	if f == 0 {
		if p == 1 {
			return "0"
		}
		return "0." + strings.Repeat("0", p-1)
	}
	neg := f < 0
	exact := new(big.Float).SetPrec(2000).SetFloat64(math.Abs(f))
	mant, exp, _ := strings.Cut(exact.Text('e', 1100), "e") // d.ddd…e±XX, exact
	e, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	kept, rest := digits[:p], digits[p:]
	n, _ := new(big.Int).SetString(kept, 10)
	if rest != "" && rest[0] >= '5' {
		n.Add(n, big.NewInt(1))
	}
	ds := n.String()
	if len(ds) > p { // rounded up to 10^p
		ds, e = ds[:p], e+1
	}
	var out string
	switch {
	case e < -6 || e >= p:
		out = ds[:1]
		if p > 1 {
			out += "." + ds[1:]
		}
		sign := "+"
		if e < 0 {
			sign = "-"
		}
		out += "e" + sign + strconv.Itoa(abs(e))
	case e == p-1:
		out = ds
	case e >= 0:
		out = ds[:e+1] + "." + ds[e+1:]
	default:
		out = "0." + strings.Repeat("0", -e-1) + ds
	}
	if neg {
		return "-" + out
	}
	return out
}
