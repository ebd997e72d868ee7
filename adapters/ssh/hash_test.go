package ssh

import (
	"strings"
	"testing"
)

func TestParseSHA256Sum(t *testing.T) {
	const a = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	tests := []struct {
		name string
		out  string
		want map[string]string
		ok   bool
	}{
		{"plain", a + "  /etc/dhcp/h/a.conf\n", map[string]string{"/etc/dhcp/h/a.conf": a}, true},
		{"two, binary marker", a + "  /x/a\n" + a + " */x/b\n", map[string]string{"/x/a": a, "/x/b": a}, true},
		{"escaped name", `\` + a + `  /x/it\\s\nhere` + "\n", map[string]string{"/x/it\\s\nhere": a}, true},
		{"spaces and quotes in the name", a + "  /x/a dir with 'quotes'/f.conf\n", map[string]string{"/x/a dir with 'quotes'/f.conf": a}, true},
		{"upper-case hex", "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08  /x\n", map[string]string{"/x": a}, true},
		{"nothing readable", "", map[string]string{}, true},
		{"garbage", "sha256sum: command not found\n", nil, false},
		{"short hash", "9f86  /x\n", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseSHA256Sum([]byte(tt.out))
			if ok != tt.ok || len(got) != len(tt.want) {
				t.Fatalf("parse(%q) = %v, %v; want %v, %v", tt.out, got, ok, tt.want, tt.ok)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Fatalf("parse(%q)[%q] = %q, want %q", tt.out, k, got[k], v)
				}
			}
		})
	}
}

// FuzzParseSHA256Sum: the server's output never panics the parser, and
// every hash it returns is 64 lower-case hex digits.
func FuzzParseSHA256Sum(f *testing.F) {
	f.Add([]byte("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  /etc/dhcp/hostforge.d/gpu-node-01.conf\n"))
	f.Add([]byte(`\9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  /x/a\nb` + "\n"))
	f.Add([]byte("sha256sum: /x: No such file or directory\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := parseSHA256Sum(b)
		if !ok {
			return
		}
		for name, sum := range got {
			if len(sum) != 64 || sum != strings.ToLower(sum) {
				t.Fatalf("hash %q for %q", sum, name)
			}
		}
	})
}
