package childenv_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/internal/childenv"
)

func TestMinimalKeepsOnlyTheNamedVariables(t *testing.T) {
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("HOME", "/var/lib/hostforge")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("TZ", "UTC")
	t.Setenv("PGPASSWORD", "pg-Secret-77")
	t.Setenv("HOSTFORGE_NETBOX_TOKEN", "nb-Token-88")
	got := childenv.Minimal("TZ", "HOSTFORGE_UNSET_FOR_TEST")
	want := []string{"PATH=/usr/bin:/bin", "HOME=/var/lib/hostforge", "LANG=C.UTF-8", "TZ=UTC"}
	if !slices.Equal(got, want) {
		t.Fatalf("Minimal = %q, want %q", got, want)
	}
	for _, kv := range childenv.Minimal() {
		if strings.HasPrefix(kv, "PGPASSWORD=") || strings.HasPrefix(kv, "HOSTFORGE_NETBOX_TOKEN=") || strings.HasPrefix(kv, "TZ=") {
			t.Errorf("Minimal() carries %s", kv)
		}
	}
}
