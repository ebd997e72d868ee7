package enrolltest_test

import (
	"os"
	"strings"
	"testing"
)

// The README's embedding snippet is Example's body: the code a reader
// copies is the code this package compiles and runs.
func TestREADMEShowsTheExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i, j := strings.Index(s, "func Example() {\n"), strings.Index(s, "\t// Output:")
	if i < 0 || j < i {
		t.Fatal("example_test.go has no Example with an Output")
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s[i+len("func Example() {\n"):j], "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	body := "```go\n" + strings.Join(lines, "\n") + "\n```"
	if !strings.Contains(string(readme), body) {
		t.Errorf("README.md's embedding snippet is not Example's body; paste this under 'Embed the engine':\n%s", body)
	}
}
