package benchtemporal

import (
	"strings"
	"testing"
	"time"
)

// pprof -traces text: a sample charged to the innermost owned frame — a
// json decode under a hostforge step is hostforge's, under the SDK's
// converter the SDK's; a frame of the fakes is theirs even under
// hostforge; the garbage collector's own work is the runtime's.
const traces = `File: benchtemporal
Type: cpu
-----------+-------------------------------------------------------
      30ms   encoding/json.(*decodeState).object
             encoding/json.Unmarshal
             github.com/hostforge/hostforge/flow.Bind[...].func1
             go.temporal.io/sdk/internal.(*activityTaskHandlerImpl).Execute
-----------+-------------------------------------------------------
     1.50s   encoding/json.Unmarshal
             go.temporal.io/sdk/converter.(*JSONPayloadConverter).FromPayload
-----------+-------------------------------------------------------
      20ms   runtime.mapaccess2
             github.com/hostforge/hostforge/fakes.(*Ironic).GetNode
             github.com/hostforge/hostforge/ironic.(*Phases).Inspection
-----------+-------------------------------------------------------
     500us   runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
      10ms   google.golang.org/protobuf/proto.Unmarshal
             google.golang.org/grpc.(*ClientConn).Invoke
-----------+-------------------------------------------------------
`

func TestParseTraces(t *testing.T) {
	s, err := parseTraces(strings.NewReader(traces))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"hostforge": 30 * time.Millisecond, "Temporal SDK": 1500 * time.Millisecond, "fakes": 20 * time.Millisecond,
		"runtime and other": 500 * time.Microsecond, "gRPC and protobuf": 10 * time.Millisecond}
	for o, d := range want {
		if s.ByOwner[o] != d {
			t.Errorf("%s: %s, want %s (all: %v)", o, s.ByOwner[o], d, s.ByOwner)
		}
	}
	if s.Total != 1560*time.Millisecond+500*time.Microsecond || s.Hostforge["github.com/hostforge/hostforge/flow.Bind[...].func1"] != 30*time.Millisecond {
		t.Fatalf("total %s, hostforge %v", s.Total, s.Hostforge)
	}
	if got := Top(s.ByOwner, 2); len(got) != 2 || got[0] != "Temporal SDK" || got[1] != "hostforge" {
		t.Fatalf("Top = %v", got)
	}
}
