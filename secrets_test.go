package hostforge_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
)

// A password with every character the encodings treat specially.
const tricky = `pa"ss\w<o>rd&%/ +é`

func TestScrubCatchesEveryEncoding(t *testing.T) {
	s := hostforge.NewSecrets(tricky)
	jsonOnce, _ := json.Marshal(tricky)
	jsonTwice, _ := json.Marshal(string(jsonOnce))
	for _, tc := range []struct {
		name, text string
	}{
		{"raw", "The value " + tricky + " for the property Password"},
		{"DMTF quoted", "The value '" + tricky + "' for the property Password is of a different format"},
		{"JSON body", `{"error":{"message":` + string(jsonOnce) + `}}`},
		{"JSON inside a JSON string (Ironic error_message)", `{"error_message": ` + string(jsonTwice) + `}`},
		{"Go %q", fmt.Sprintf("refused %q", tricky)},
		{"Go %+q", fmt.Sprintf("refused %+q", tricky)},
		{"query escaped", "https://bmc/x?password=" + url.QueryEscape(tricky)},
		{"path escaped", "/accounts/" + url.PathEscape(tricky)},
		{"HTML escaped", "<p>" + html.EscapeString(tricky) + "</p>"},
		{"base64", "blob " + base64.StdEncoding.EncodeToString([]byte(tricky))},
		{"base64 URL", "blob " + base64.RawURLEncoding.EncodeToString([]byte(tricky))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := s.Scrub(tc.text)
			if !strings.Contains(out, hostforge.Redacted) {
				t.Fatalf("nothing redacted in %q", out)
			}
			for _, v := range hostforge.Variants(tricky) {
				if strings.Contains(out, v) {
					t.Fatalf("variant %q survives in %q", v, out)
				}
			}
		})
	}
}

func TestScrubLeavesOtherTextAlone(t *testing.T) {
	s := hostforge.NewSecrets("hunter2-long")
	in := "BMC answered HTTP 400: Base.1.8.PropertyUnknown: HostName"
	if got := s.Scrub(in); got != in {
		t.Fatalf("Scrub changed clean text: %q", got)
	}
	var nilSet *hostforge.Secrets
	if got := nilSet.Scrub("hunter2-long"); got != "hunter2-long" {
		t.Fatalf("a nil set scrubbed: %q", got)
	}
	nilSet.Add("x") // no panic
	if nilSet.Len() != 0 || nilSet.OrNew() == nil {
		t.Fatal("nil set")
	}
}

func TestScrubLongestFirst(t *testing.T) {
	s := hostforge.NewSecrets("abcdefgh", "abcdefghijk")
	if got := s.Scrub("xabcdefghijkx"); got != "x"+hostforge.Redacted+"x" {
		t.Fatalf("got %q", got)
	}
}

// A secret rendered by a template through dump, lower or upper, escape
// or urlencode, and echoed back by a receiver (its request quoted in a
// JSON error, in an HTML page, in a URL) is caught in every such form,
// whatever its case.
func TestScrubCatchesCaseFoldedAndEchoedForms(t *testing.T) {
	const secret = `Sup"erSecret99<x>'É`
	s := hostforge.NewSecrets(secret)
	dump := func(v string) string { // JSON.stringify: no HTML escaping
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		return strings.TrimSpace(b.String())
	}
	goJSON := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	escape := strings.NewReplacer("&", "&amp;", `"`, "&quot;", "'", "&#39;", "<", "&lt;", ">", "&gt;", `\`, "&#92;").Replace
	uriComponent := func(v string) string {
		return strings.NewReplacer("+", "%20", "%21", "!", "%27", "'", "%28", "(", "%29", ")", "%2A", "*").Replace(url.QueryEscape(v))
	}
	lower, upper := strings.ToLower(secret), strings.ToUpper(secret)
	for _, tc := range []struct{ name, text string }{
		{"lower", "echo " + lower},
		{"upper", "echo " + upper},
		{"title case by hand", "echo " + strings.ToUpper(secret[:1]) + strings.ToLower(secret[1:])},
		{"dump", `{"pw": ` + dump(secret) + `}`},
		{"lower | dump", `{"pw": ` + dump(lower) + `}`},
		{"dump, echoed in a JSON error", `{"error": ` + dump(`bad body {"pw": `+dump(secret)+`}`) + `}`},
		{"lower | dump, echoed by a Go receiver", `{"error": ` + goJSON(`bad body {"pw": `+dump(lower)+`}`) + `}`},
		{"upper | dump, echoed twice by a Go receiver", goJSON(goJSON(upper))},
		{"escape", "<td>" + escape(secret) + "</td>"},
		{"dump, echoed in an HTML page", "<pre>" + html.EscapeString(`{"pw": `+dump(secret)+`}`) + "</pre>"},
		{"lower | dump, through escape", "<pre>" + escape(dump(lower)) + "</pre>"},
		{"urlencode", "https://r.example/?pw=" + uriComponent(secret)},
		{"lower | urlencode, lower-case hex", "https://r.example/?pw=" + strings.ToLower(uriComponent(lower))},
		{"dump, in a query", "https://r.example/?body=" + url.QueryEscape(dump(secret))},
		{"shellquote, echoed", "sh: '" + strings.ReplaceAll(secret, "'", `'\''`) + "': not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := s.Scrub(tc.text)
			if strings.Contains(strings.ToLower(out), "ersecret99") {
				t.Fatalf("the secret survives in %q", out)
			}
			if !strings.Contains(out, hostforge.Redacted) {
				t.Fatalf("nothing redacted in %q", out)
			}
		})
	}
}

// Short values and published factory defaults are scrubbed as whole
// words, in every form: never left out, never cut out of other words.
func TestShortSecretsAndFactoryDefaultsAreWholeWords(t *testing.T) {
	s := hostforge.NewSecrets("calvin", "q7", `a"b`)
	for in, want := range map[string]string{
		"login root:calvin@10.0.0.4 refused": "login root:<redacted>@10.0.0.4 refused",
		`{"password":"calvin"}`:              `{"password":"<redacted>"}`,
		"The value 'CALVIN' is not accepted": "The value '<redacted>' is not accepted",
		"calvinist calvin_1 1calvin":         "calvinist calvin_1 1calvin",
		"pw=q7&user=q7x":                     "pw=<redacted>&user=q7x",
		`{"pw":"a\"b"} a%22b xa"by`:          `{"pw":"<redacted>"} <redacted> xa"by`,
		"calvin":                             "<redacted>",
		"Basic " + base64.StdEncoding.EncodeToString([]byte("calvin")): "Basic <redacted>",
	} {
		if got := s.Scrub(in); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
	for _, v := range []string{"calvin", "PASSW0RD", "admin", "short", "é1234é"} {
		if !hostforge.WholeWordSecret(v) {
			t.Errorf("%q is not matched as a whole word", v)
		}
	}
	if hostforge.WholeWordSecret("Generated-Pw-1") {
		t.Error("a long generated password must be matched anywhere")
	}
}

// A secret the site chooses has at least MinSecretLen characters;
// published factory defaults are exempt. The error names the secret,
// never its value.
func TestCheckChosenSecret(t *testing.T) {
	for _, v := range []string{"12345678", "ééééééééé", "calvin", "PASSW0RD", "0penBmc"} {
		if err := hostforge.CheckChosenSecret("the signing secret", v); err != nil {
			t.Errorf("%q refused: %v", v, err)
		}
	}
	for _, v := range []string{"", "a", "Calvin", "1234567", "ééééééé"} {
		err := hostforge.CheckChosenSecret("the isPassword configVar apiKey", v)
		if !hostforge.SecretTooShort.Is(err) {
			t.Fatalf("%q: %v, want %s", v, err, hostforge.SecretTooShort.Code)
		}
		if f, _ := hostforge.AsFailure(err); f.Retryable || !strings.Contains(f.Message, "configVar apiKey") || (len(v) > 3 && strings.Contains(f.Message, v)) {
			t.Errorf("%q: %v", v, err)
		}
	}
}

func TestAddCredentialCatchesAnEchoedAuthorizationHeader(t *testing.T) {
	s := hostforge.NewSecrets()
	s.AddCredential("root", "calvin-123")
	hdr := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("root:calvin-123"))
	if got := s.Scrub(hdr); strings.Contains(got, "cm9vdDpjYWx2aW4tMTIz") {
		t.Fatalf("basic auth header survives: %q", got)
	}
}

func TestAddFieldsRegistersOnlySecretFields(t *testing.T) {
	s := hostforge.NewSecrets()
	s.AddFields(map[string]string{"username": "admin", "password": "pw-one-1", "pending_password": "pw-two-2",
		"private_key": "KEYDATA", "passphrase": "phrase", "known_hosts": "host ssh-ed25519 AAAA", "reset_pending": "rotation", "api_token": "tok"})
	want := []string{"KEYDATA", "phrase", "pw-one-1", "pw-two-2", "tok"}
	if got := s.Values(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("registered %v, want %v", got, want)
	}
}

// spec is a code for this test only, not declared (the catalogue lists declared codes).
var spec = &hostforge.Spec{Code: "TEST_SECRETS_ECHO", Phase: "test", Owner: hostforge.OwnerSDK, Action: "none"}

func TestErrScrubsFailuresWaitsAndChains(t *testing.T) {
	s := hostforge.NewSecrets("s3cret-value")
	base := fmt.Errorf("BMC answered HTTP 400: The value 's3cret-value' is bad: %w", hostforge.ErrInvalid)
	f := spec.Wrap(base, "device n1: set password %s", "s3cret-value")
	tests := []struct {
		name string
		err  error
	}{
		{"failure", f},
		{"wait", hostforge.RetryAfter(0, "bmc_busy", "busy: s3cret-value")},
		{"plain chain", base},
		{"failure under a wrap", fmt.Errorf("step: %w", f)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := s.Err(tc.err)
			if strings.Contains(got.Error(), "s3cret-value") {
				t.Fatalf("Error() = %q", got.Error())
			}
			if fl, ok := hostforge.AsFailure(got); ok {
				if strings.Contains(fl.Error(), "s3cret-value") || strings.Contains(fl.Message, "s3cret-value") {
					t.Fatalf("AsFailure hands out the raw failure: %q", fl.Error())
				}
				b, _ := json.Marshal(fl)
				if strings.Contains(string(b), "s3cret-value") {
					t.Fatalf("failure JSON %s", b)
				}
				if !spec.Is(got) || !errors.Is(got, hostforge.ErrInvalid) {
					t.Fatal("the classification was lost")
				}
			}
			if w, ok := hostforge.AsWait(got); ok && strings.Contains(w.Detail, "s3cret-value") {
				t.Fatalf("wait detail %q", w.Detail)
			}
			if tc.name == "plain chain" && !errors.Is(got, hostforge.ErrInvalid) {
				t.Fatal("errors.Is lost the chain")
			}
		})
	}
	clean := errors.New("nothing to hide")
	if s.Err(clean) != clean {
		t.Fatal("a clean error was rewrapped")
	}
	if s.Err(nil) != nil {
		t.Fatal("nil")
	}
}

func TestWriterAndHandlerScrub(t *testing.T) {
	s := hostforge.NewSecrets()
	var out, logs bytes.Buffer
	w := s.Writer(&out)
	log := slog.New(s.Handler(slog.NewJSONHandler(&logs, nil)))
	s.Add("late-added-pw") // registered after the writer and handler exist
	n, err := fmt.Fprintf(w, "refused late-added-pw\n")
	if err != nil || n != len("refused late-added-pw\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	log.Warn("refused late-added-pw", "error", errors.New("echo late-added-pw"), "detail", "late-added-pw",
		slog.Group("g", "inner", "late-added-pw"), "body", map[string]string{"password": "late-added-pw"},
		"quoted", strconv.Quote("late-added-pw"))
	for name, b := range map[string]string{"writer": out.String(), "handler": logs.String()} {
		if strings.Contains(b, "late-added-pw") || !strings.Contains(b, "redacted") {
			t.Errorf("%s: %s", name, b)
		}
	}
}

// The vault wrapper registers what an item hands out and what is stored.
func TestVaultRegistersWhatItHandsOut(t *testing.T) {
	s := hostforge.NewSecrets()
	v := s.Vault(&mapVault{items: map[string]map[string]string{"bmc-factory": {"username": "admin", "password": "factory-pw"}}})
	if _, err := v.Item(context.Background(), "bmc-factory"); err != nil {
		t.Fatal(err)
	}
	if err := v.PutItem(context.Background(), "bmc-admin-n1", map[string]string{"username": "admin", "pending_password": "generated-pw"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Scrub("factory-pw generated-pw admin"); got != hostforge.Redacted+" "+hostforge.Redacted+" admin" {
		t.Fatalf("got %q", got)
	}
}

type mapVault struct{ items map[string]map[string]string }

func (m *mapVault) Item(_ context.Context, name string) (map[string]string, error) {
	it, ok := m.items[name]
	if !ok {
		return nil, hostforge.ErrNotFound
	}
	return it, nil
}

func (m *mapVault) PutItem(_ context.Context, name string, f map[string]string) error {
	m.items[name] = f
	return nil
}

func ExampleSecrets() {
	s := hostforge.NewSecrets()
	s.Add("Rotated-Pw-1") // a vault read or a generated password registers it
	echo := `BMC answered HTTP 400: The value 'Rotated-Pw-1' for the property Password is of a different format than the property can accept.`
	fmt.Println(s.Scrub(echo))
	// Output: BMC answered HTTP 400: The value '<redacted>' for the property Password is of a different format than the property can accept.
}

// BenchmarkSecretsScrub: the cost of scrubbing one log line in a worker
// that has handled a fleet's credentials (two per host).
func BenchmarkSecretsScrub(b *testing.B) {
	for _, hosts := range []int{10, 1000} {
		s := hostforge.NewSecrets()
		for i := range hosts {
			s.AddCredential("admin", fmt.Sprintf("Rotated-%06d-xK9pQ2mZ7vL4", i))
			s.Add(fmt.Sprintf("pending-%06d-Wq3Rt8Yu1Io5", i))
		}
		clean := `time=2026-01-01T00:00:00Z level=INFO msg="BMC step" device=rack1-node7 phase=configure_bmc vendor=dell step=boot_order outcome=restricted/applied`
		echo := `BMC answered HTTP 400: The value 'Rotated-000007-xK9pQ2mZ7vL4' for the property Password is of a different format than the property can accept.`
		s.Scrub(clean)
		vals := s.Values() // the fleet's, before the credentials added below
		for _, tc := range []struct{ name, text string }{{"clean line", clean}, {"echo", echo}} {
			b.Run(fmt.Sprintf("%d hosts/%s", hosts, tc.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = s.Scrub(tc.text)
				}
			})
		}
		// Registering one more credential: the index is extended, not
		// rebuilt, and the passwords here share their first 7 bytes (their
		// basic-auth encodings their first 16), so a list per shared prefix
		// would grow with the fleet. Each iteration (of every run) adds a
		// credential not seen before.
		n := 0
		b.Run(fmt.Sprintf("%d hosts/add a credential", hosts), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n++
				s.AddCredential("admin", fmt.Sprintf("Rotated-%09d-xK9pQ2mZ7vL4", n+hosts))
			}
		})
		// The first line scrubbed with a set built afresh.
		b.Run(fmt.Sprintf("%d hosts/first line after a new password", hosts), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				fresh := hostforge.NewSecrets(vals...)
				b.StartTimer()
				_ = fresh.Scrub(clean)
			}
		})
	}
	// Secrets a template renders — with quotes, upper case and '<', each
	// indexed in every case-folded, rendered and echoed form — beside the
	// fleet's: a clean line, and a receiver's JSON error echoing a body
	// that rendered one through lower and dump.
	s := hostforge.NewSecrets()
	for i := range 1000 {
		s.AddCredential("admin", fmt.Sprintf("Rotated-%06d-xK9pQ2mZ7vL4", i))
	}
	for i := range 100 {
		s.Add(fmt.Sprintf(`Api"Key<%03d>Zq9`, i))
	}
	clean := `{"time":"2026-01-01T00:00:00Z","level":"WARN","msg":"webhook rejected","extension":"dns","task":"notify","status":400}`
	echo := `{"error":"bad request body: {\"key\": \"api\\\"key<007>zq9\"}"}`
	for _, tc := range []struct{ name, text string }{{"clean line", clean}, {"lower | dump, echoed in JSON", echo}} {
		b.Run("1000 hosts, 100 rendered secrets/"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			if tc.text == echo && !strings.Contains(s.Scrub(echo), hostforge.Redacted) {
				b.Fatal("the echo is not scrubbed")
			}
			for b.Loop() {
				_ = s.Scrub(tc.text)
			}
		})
	}
}

// A value added after a scrub is caught by the next one, whether the set
// is small (looked for one by one) or large (a replacer), and both ways
// scrub the same text alike.
func TestScrubSeesValuesAddedLater(t *testing.T) {
	for _, n := range []int{1, 40} {
		s := hostforge.NewSecrets()
		for i := range n {
			s.Add(fmt.Sprintf("filler-%03d-Zq", i))
		}
		if got := s.Scrub("nothing here"); got != "nothing here" {
			t.Fatalf("%d values: %q", n, got)
		}
		s.Add(`later"pw/1`)
		text := `{"password":"later\"pw/1"} filler-000-Zq`
		got := s.Scrub(text)
		if strings.Contains(got, "later") || strings.Contains(got, "filler-000-Zq") {
			t.Fatalf("%d values: %q still carries a secret", n, got)
		}
		plain := hostforge.NewSecrets("plain-Value_1")
		if got := plain.Scrub("x cGxhaW4tVmFsdWVfMQ y"); strings.Contains(got, "cGxhaW4tVmFsdWVfMQ") {
			t.Fatalf("the base64 of a plain value was left: %q", got)
		}
	}
}

// naiveScrub is the scrubbing rule written plainly, one variant at a
// time: at each position the longest variant of any value that the text
// starts with, ASCII case-insensitively, is replaced — a variant of a
// short value only where it is a whole word — and the scan goes on after
// it.
func naiveScrub(all []variant, text string) string {
	isWord := func(c byte) bool {
		return c >= 0x80 || c == '_' || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		n := 0
		for _, v := range all {
			e := i + len(v.x)
			if e > len(text) || !asciiEqualFold(text[i:e], v.x) {
				continue
			}
			if v.word && (i > 0 && isWord(text[i]) && isWord(text[i-1]) || e < len(text) && isWord(text[e-1]) && isWord(text[e])) {
				continue
			}
			n = len(v.x)
			break
		}
		if n == 0 {
			b.WriteByte(text[i])
			i++
			continue
		}
		b.WriteString(hostforge.Redacted)
		i += n
	}
	return b.String()
}

// variant is one form of a value, and whether it matches as a whole word
// only.
type variant struct {
	x    string
	word bool
}

// variantsOf lists the forms of values, longest first.
func variantsOf(values []string) []variant {
	var all []variant
	for _, v := range values {
		for _, x := range hostforge.Variants(v) {
			all = append(all, variant{x, hostforge.WholeWordSecret(v)})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return len(all[i].x) > len(all[j].x) })
	return all
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Scrub replaces exactly what the rule written plainly (naiveScrub)
// replaces: the index, the folding and the word check are an
// optimisation, not a new rule. Values short and long, sharing their first
// bytes (as base64 of "root:…" does), spliced into random text whole, cut
// short, in another case, and beside word characters.
func TestScrubAgreesWithANaiveScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const alphabet = "abAB:\"\\/=+ é<&_1"
	word := func(n int) string {
		var b strings.Builder
		r := []rune(alphabet)
		for range n {
			b.WriteRune(r[rng.IntN(len(r))])
		}
		return b.String()
	}
	recase := func(x string) string {
		switch rng.IntN(4) {
		case 0:
			return strings.ToUpper(x)
		case 1:
			return strings.ToLower(x)
		case 2:
			b := []byte(x)
			for i := range b {
				if rng.IntN(2) == 0 && 'a' <= b[i]|0x20 && b[i]|0x20 <= 'z' {
					b[i] ^= 0x20
				}
			}
			return string(b)
		}
		return x
	}
	for round := range 200 {
		s := hostforge.NewSecrets()
		var values []string
		maxLen, common := 7, ""
		if round%2 == 1 {
			maxLen, common = 24, word(4+rng.IntN(14))
		}
		for range 1 + rng.IntN(6) {
			v := common + word(1+rng.IntN(maxLen))
			values = append(values, v)
			s.Add(v)
		}
		all := variantsOf(values)
		for range 15 {
			text := word(rng.IntN(40))
			for range rng.IntN(4) {
				x := recase(all[rng.IntN(len(all))].x)
				x = x[:rng.IntN(len(x)+1)]
				at := rng.IntN(len(text) + 1)
				text = text[:at] + x + word(rng.IntN(3)) + text[at:]
			}
			if got, want := s.Scrub(text), naiveScrub(all, text); got != want {
				t.Fatalf("round %d, values %q, text %q: Scrub %q, the plain rule %q", round, values, text, got, want)
			}
		}
	}
}

// The variants cover what the plain rule's encoders produce, so the
// plain rule is not only agreeing with the index about too few forms.
func TestVariantsIncludeTheComposedEscapings(t *testing.T) {
	v := `Pa"ss<1>'\é`
	got := map[string]bool{}
	for _, x := range hostforge.Variants(v) {
		got[strings.ToLower(x)] = true
	}
	b, _ := json.Marshal(v)
	once := strings.Trim(string(b), `"`)
	b, _ = json.Marshal(once)
	twice := strings.Trim(string(b), `"`)
	for _, want := range []string{
		v, strings.ToUpper(v),
		once, twice, html.EscapeString(once), url.QueryEscape(once),
		base64.RawStdEncoding.EncodeToString([]byte(v)),
	} {
		if !got[strings.ToLower(want)] {
			t.Errorf("no variant %q", want)
		}
	}
}
