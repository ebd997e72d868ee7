package benchtemporal

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Shares is a CPU profile's samples split by whose code spent them.
type Shares struct {
	Total time.Duration
	// ByOwner is the time per owner: "hostforge", "fakes", "Temporal SDK",
	// "gRPC and protobuf", "runtime and other".
	ByOwner map[string]time.Duration
	// Hostforge is hostforge's time per its innermost function on the
	// stack: where its own cost is.
	Hostforge map[string]time.Duration
}

// owners map a function's package prefix to its owner, first match wins.
var owners = []struct{ prefix, owner string }{
	{"github.com/hostforge/hostforge/fakes", "fakes"},
	{"github.com/hostforge/hostforge/internal/", "fakes"},
	{"github.com/hostforge/hostforge/enrolltest", "fakes"},
	{"github.com/hostforge/hostforge", "hostforge"},
	{"go.temporal.io/", "Temporal SDK"},
	{"google.golang.org/grpc", "gRPC and protobuf"},
	{"google.golang.org/protobuf", "gRPC and protobuf"},
	{"golang.org/x/net/http2", "gRPC and protobuf"},
	{"github.com/gogo/", "gRPC and protobuf"},
	{"github.com/grpc-ecosystem/", "gRPC and protobuf"},
}

// ownerOf is the owner of the innermost frame that belongs to one, and
// that frame's function.
func ownerOf(frames []string) (owner, fn string) {
	for _, f := range frames {
		for _, o := range owners {
			if strings.HasPrefix(f, o.prefix) {
				return o.owner, f
			}
		}
	}
	return "runtime and other", ""
}

// Attribute reads a CPU profile with 'go tool pprof -traces' and charges
// each sample to the owner of its innermost owned frame: a json decode
// hostforge's step runs is hostforge's, the same decode in the SDK's
// converter the SDK's, the garbage collector's background work the
// runtime's.
func Attribute(goTool, profile string) (Shares, error) {
	out, err := exec.Command(goTool, "tool", "pprof", "-traces", profile).Output()
	if err != nil {
		return Shares{}, fmt.Errorf("go tool pprof -traces %s: %w", profile, err)
	}
	return parseTraces(strings.NewReader(string(out)))
}

// parseTraces reads pprof's -traces text: blocks separated by dashes, each
// a value and the leaf on its first line, the callers below.
func parseTraces(r io.Reader) (Shares, error) {
	s := Shares{ByOwner: map[string]time.Duration{}, Hostforge: map[string]time.Duration{}}
	var val time.Duration
	var frames []string
	flush := func() {
		if val > 0 && len(frames) > 0 {
			o, fn := ownerOf(frames)
			s.ByOwner[o] += val
			if o == "hostforge" {
				s.Hostforge[fn] += val
			}
			s.Total += val
		}
		val, frames = 0, nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----") {
			flush()
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if d, err := parseValue(f[0]); err == nil && len(f) >= 2 && len(frames) == 0 {
			val, frames = d, []string{f[1]}
			continue
		}
		if val > 0 {
			frames = append(frames, f[0])
		}
	}
	flush()
	return s, sc.Err()
}

// parseValue reads pprof's "10ms", "1.20s", "500us".
func parseValue(v string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"ms", time.Millisecond}, {"us", time.Microsecond}, {"ns", time.Nanosecond}, {"s", time.Second}} {
		if strings.HasSuffix(v, u.suffix) {
			x, err := strconv.ParseFloat(strings.TrimSuffix(v, u.suffix), 64)
			if err != nil {
				return 0, err
			}
			return time.Duration(x * float64(u.unit)), nil
		}
	}
	return 0, fmt.Errorf("not a duration: %q", v)
}

// Top is the n largest entries of m, largest first.
func Top(m map[string]time.Duration, n int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}
