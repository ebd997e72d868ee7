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
	s := hostforge.NewSecrets("abc", "abcdef")
	if got := s.Scrub("xabcdefx"); got != "x"+hostforge.Redacted+"x" {
		t.Fatalf("got %q", got)
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
		s.Scrub(clean) // build the replacer once
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
		// would grow with the fleet.
		b.Run(fmt.Sprintf("%d hosts/add a credential", hosts), func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				s.AddCredential("admin", fmt.Sprintf("Rotated-%09d-xK9pQ2mZ7vL4", n+hosts))
			}
		})
		// The first line scrubbed with a set built afresh.
		b.Run(fmt.Sprintf("%d hosts/first line after a new password", hosts), func(b *testing.B) {
			b.ReportAllocs()
			vals := s.Values()
			for b.Loop() {
				b.StopTimer()
				fresh := hostforge.NewSecrets(vals...)
				b.StartTimer()
				_ = fresh.Scrub(clean)
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

// Scrub replaces exactly what a strings.Replacer over every variant,
// longest first, replaces: the index is an optimisation, not a new rule.
func TestScrubAgreesWithAReplacer(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const alphabet = "ab:\"\\/=+ é<&"
	word := func(n int) string {
		var b strings.Builder
		for range n {
			r := []rune(alphabet)
			b.WriteRune(r[rng.IntN(len(r))])
		}
		return b.String()
	}
	for round := range 300 {
		s := hostforge.NewSecrets()
		var values []string
		// Short values, and long ones that share their first bytes (as
		// base64 of "root:…" does), so both index levels are exercised.
		maxLen, common := 7, ""
		if round%2 == 1 {
			maxLen, common = 24, word(4+rng.IntN(14))
		}
		for range 1 + rng.IntN(6) {
			v := common + word(1+rng.IntN(maxLen))
			values = append(values, v)
			s.Add(v)
		}
		var all []string
		seen := map[string]bool{}
		for _, v := range values {
			for _, x := range hostforge.Variants(v) {
				if !seen[x] {
					seen[x] = true
					all = append(all, x)
				}
			}
		}
		sort.Slice(all, func(i, j int) bool {
			if len(all[i]) != len(all[j]) {
				return len(all[i]) > len(all[j])
			}
			return all[i] < all[j]
		})
		var pairs []string
		for _, x := range all {
			pairs = append(pairs, x, hostforge.Redacted)
		}
		ref := strings.NewReplacer(pairs...)
		for range 20 {
			// Random text, with variants (whole or cut short) spliced in.
			text := word(rng.IntN(40))
			for range rng.IntN(4) {
				x := all[rng.IntN(len(all))]
				x = x[:rng.IntN(len(x)+1)]
				at := rng.IntN(len(text) + 1)
				text = text[:at] + x + word(rng.IntN(3)) + text[at:]
			}
			if got, want := s.Scrub(text), ref.Replace(text); got != want {
				t.Fatalf("round %d, values %q, text %q: Scrub %q, a replacer %q", round, values, text, got, want)
			}
		}
	}
}
