// Package itenv reads the variables scripts/integration sets for the
// integration tests (the address of a real component, the path of a tool
// it installed). A test whose component is missing skips, except under
// HOSTFORGE_REQUIRE_INTEGRATION=1 (the CI run), where a component that did
// not start must fail the run rather than pass it silently.
package itenv

import (
	"os"
	"testing"
)

// Require is the variable that turns a missing component's skip into a
// failure.
const Require = "HOSTFORGE_REQUIRE_INTEGRATION"

// Var returns the value of the integration variable name. Unset, it skips
// tb ("<name> is unset; run scripts/integration"), or fails it under
// HOSTFORGE_REQUIRE_INTEGRATION=1 with "<name> is unset: <missing>", where
// missing says what did not start or install the component ("": only that
// it is unset).
func Var(tb testing.TB, name, missing string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv(Require) == "1" {
			if missing == "" {
				tb.Fatal(name + " is unset")
			}
			tb.Fatal(name + " is unset: " + missing)
		}
		tb.Skip(name + " is unset; run scripts/integration")
	}
	return v
}

// TemporalAddress is the address of the Temporal dev server
// scripts/integration.d/temporal.sh started.
func TemporalAddress(tb testing.TB) string {
	tb.Helper()
	return Var(tb, "HOSTFORGE_TEMPORAL_ADDRESS", "scripts/integration.d/temporal.sh did not start the dev server")
}
