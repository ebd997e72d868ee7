package scout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hostforge/hostforge"
)

// MinSiteSecretLen is the shortest site secret accepted: every machine's
// token is derived from it, so a guessable one gives away the fleet.
const MinSiteSecretLen = 8

// maxTokenLen bounds a presented token before it is decoded (a machine ID
// of up to 255 bytes in base64, the MAC and the prefix fit well within).
const maxTokenLen = 512

// tokenPrefix marks a machine token and the version of its derivation.
const tokenPrefix = "hfs1."

// macLabel separates the tokens' MACs from any other use of the site
// secret: the MAC is over the label and the machine ID.
const macLabel = "hostforge scout machine token v1\x00"

// CredentialInvalid: a machine token cannot be made or used as given.
var CredentialInvalid = hostforge.Declare(hostforge.Spec{
	Code:   "SCOUT_CREDENTIAL_INVALID",
	Phase:  "scout",
	Owner:  hostforge.OwnerInfraEng,
	Action: "The machine's agent credential cannot be made or used as given (the message says why: a site secret shorter than 8 characters, an empty machine ID, one longer than 255 bytes or one holding '/', '?', '#' or white space, a token file that holds no token made by 'hostforge scout token', a token of another machine than --machine): fix it and provision the host's token again with 'hostforge scout token --config F --machine ID'. Nothing was run or recorded.",
})

// CheckMachineID refuses a machine ID that cannot name one machine in the
// agent's URLs: empty, longer than 255 bytes, white space, '/', '?' or
// '#', or not UTF-8.
func CheckMachineID(id string) error {
	if id == "" || len(id) > 255 || !utf8.ValidString(id) || strings.ContainsAny(id, "/?#") || strings.IndexFunc(id, unicode.IsSpace) >= 0 || id == "." || id == ".." {
		return CredentialInvalid.New("%q is not a machine ID", id)
	}
	return nil
}

// MachineToken is the credential of one machine's agent: the machine ID
// and HMAC-SHA256(site secret, label ‖ machine ID), both base64url,
// behind a version prefix. It names the machine it proves, so a host that
// holds it can speak for that machine and no other; only the holder of
// the site secret (the worker, 'hostforge scout token') can make one.
func MachineToken(siteSecret []byte, machine string) (string, error) {
	if n := utf8.RuneCount(siteSecret); n < MinSiteSecretLen {
		return "", CredentialInvalid.New("the site secret has %d characters; want at least %d", n, MinSiteSecretLen)
	}
	if err := CheckMachineID(machine); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(machine)) + "." + base64.RawURLEncoding.EncodeToString(tokenMAC(siteSecret, machine)), nil
}

func tokenMAC(siteSecret []byte, machine string) []byte {
	m := hmac.New(sha256.New, siteSecret)
	m.Write([]byte(macLabel))
	m.Write([]byte(machine))
	return m.Sum(nil)
}

// parseToken splits a token into the machine it claims and its MAC.
func parseToken(token string) (machine string, mac []byte, ok bool) {
	if len(token) > maxTokenLen {
		return "", nil, false
	}
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return "", nil, false
	}
	enc, encMAC, ok := strings.Cut(rest, ".")
	if !ok {
		return "", nil, false
	}
	id, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || CheckMachineID(string(id)) != nil {
		return "", nil, false
	}
	mac, err = base64.RawURLEncoding.DecodeString(encMAC)
	if err != nil || len(mac) != sha256.Size {
		return "", nil, false
	}
	return string(id), mac, true
}

// TokenMachine returns the machine a token claims (without proving it:
// only the server, which holds the site secret, can); ok is false when
// the text is not a machine token.
func TokenMachine(token string) (machine string, ok bool) {
	machine, _, ok = parseToken(token)
	return machine, ok
}

// authenticate returns the machine the request's bearer token proves;
// ok is false without a token the site secret made.
func authenticate(siteSecret []byte, r *http.Request) (machine string, ok bool) {
	h := r.Header.Get("Authorization")
	scheme, token, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	machine, mac, ok := parseToken(strings.TrimSpace(token))
	if !ok {
		return "", false
	}
	if !hmac.Equal(mac, tokenMAC(siteSecret, machine)) {
		return "", false
	}
	return machine, true
}
