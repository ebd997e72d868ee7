package hostforge

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// MinSecretLen is the fewest characters a secret the site chooses may
// have: an isPassword configVar of an extension, a webhook signing secret,
// a generated BMC password. A shorter one is refused where it enters
// (CheckChosenSecret); published factory defaults are exempt.
const MinSecretLen = 8

// factoryDefaults are the published factory-default passwords of BMCs,
// which a site does not choose: a vault's factory credential holds one.
var factoryDefaults = []string{
	"calvin",    // Dell iDRAC and CMC (user root)
	"PASSW0RD",  // Lenovo XClarity Controller and IMM (user USERID)
	"ADMIN",     // Supermicro before late 2019 (user ADMIN)
	"0penBmc",   // OpenBMC (user root)
	"admin",     // AMI MegaRAC, IBM eBMC, NVIDIA compute trays (user admin)
	"password",  // Gigabyte MegaRAC before 2020 (user admin)
	"superuser", // Intel and Tyan BMCs (user root)
	"changeme",  // Oracle ILOM (user root)
}

// FactoryDefault reports whether v is a published factory-default
// password (exactly, case included).
func FactoryDefault(v string) bool { return slices.Contains(factoryDefaults, v) }

// WholeWordSecret reports whether Secrets matches v, in every variant, as
// a whole word only: v has fewer than MinSecretLen characters, or is a
// published factory default. Such a value is a common word or a piece of
// many ("admin", "calvin"): matched inside other words it would redact
// them, so it is matched where it stands alone — as it does in a message,
// a JSON value, a header or a URL's user information. Every secret is
// scrubbed, however short.
func WholeWordSecret(v string) bool {
	return utf8.RuneCountInString(v) < MinSecretLen || FactoryDefault(v)
}

// SecretTooShort: a secret the site chose is shorter than MinSecretLen.
var SecretTooShort = Declare(Spec{
	Code:      "SECRET_TOO_SHORT",
	Phase:     "config",
	Owner:     OwnerInfraEng,
	Retryable: false,
	Action:    "A secret the site chooses (the message names it: an isPassword configVar, a webhook signing secret, a generated BMC password) is shorter than 8 characters: replace it with a longer one from a password generator (published factory defaults such as calvin are exempt), then rerun. Nothing was sent with it.",
})

// CheckChosenSecret refuses a secret the site chose that is shorter than
// MinSecretLen characters, unless it is a published factory default. what
// names it for the message (never the value): "the isPassword configVar
// apiKey", "the signing secret in the vault item hooks-sign".
func CheckChosenSecret(what, v string) error {
	if n := utf8.RuneCountInString(v); n < MinSecretLen && !FactoryDefault(v) {
		return SecretTooShort.New("%s has %s; a secret the site chooses needs at least %d", what, plural(n, "character"), MinSecretLen)
	}
	return nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
