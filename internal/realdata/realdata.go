// Package realdata finds the shared real-world captures (BMC trees, IPA
// inventories, NetBox shapes) that tests read but the project never copies.
//
// The directory is $HOSTFORGE_TESTDATA when set, otherwise ../shared/testdata
// beside the module root. When it is absent a test is skipped with a clear
// message — unless HOSTFORGE_REQUIRE_TESTDATA=1 (CI sets it), which turns the
// skip into a failure.
package realdata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// EnvDir overrides the directory; EnvRequire turns a missing directory into a failure.
const (
	EnvDir     = "HOSTFORGE_TESTDATA"
	EnvRequire = "HOSTFORGE_REQUIRE_TESTDATA"
)

// Dir returns the real-data directory and whether it exists.
func Dir() (string, bool) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, isDir(d)
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", false
	}
	// file is <module>/internal/realdata/realdata.go
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	d := filepath.Join(filepath.Dir(root), "shared", "testdata")
	return d, isDir(d)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Path returns the path of a file or directory under the real-data directory
// (elems are joined), skipping or failing t when it is missing.
func Path(t testing.TB, elems ...string) string {
	t.Helper()
	dir, ok := Dir()
	if !ok {
		missing(t, "real test data directory "+dir+" is absent (set "+EnvDir+" to its path)")
	}
	p := filepath.Join(append([]string{dir}, elems...)...)
	if _, err := os.Stat(p); err != nil {
		missing(t, "real test data "+p+" is absent")
	}
	return p
}

// Read returns a file's bytes under the real-data directory.
func Read(t testing.TB, elems ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(Path(t, elems...))
	if err != nil {
		t.Fatalf("realdata: %v", err)
	}
	return b
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("realdata: %s, and %s=1 requires it", msg, EnvRequire)
	}
	t.Skipf("realdata: %s; skipping", msg)
}
