package sqlstore

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hostforge/hostforge/firmware"
)

// FuzzObservedCodec: any identity and readings survive the compact
// format; any document decodes or fails, never panics.
func FuzzObservedCodec(f *testing.F) {
	f.Add("Dell Inc.", "PowerEdge R750", "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", "6.00.30.00", "obs1\nLenovo\tSR670\tlenovo\nbmc\tBMC-Primary\t42S-2.83\n")
	f.Add("a\tb\\c\nd", "", "x\\ty", "", "obs1\n\\\t\\\\\t\n")
	f.Add("", "", "", "", "{\"machine_id\":\"m\"}")
	f.Fuzz(func(t *testing.T, man, model, id, version, doc string) {
		o := firmware.Observed{MachineID: "m", Identity: firmware.Identity{Manufacturer: man, Model: model, BMCVendor: "dell"},
			Reported: firmware.Reported{firmware.BMC: {{ID: id, Version: version}, {ID: version, Version: id}}, firmware.CX7: {{ID: id}}}}
		got, err := decodeObserved("m", encodeObserved(o))
		if err != nil || !cmp.Equal(got, o) {
			t.Fatalf("round trip of %+v: %+v, %v", o, got, err)
		}
		_, _ = decodeObserved("m", doc)
	})
}

func TestObservedCodecRefusesCorruption(t *testing.T) {
	for _, doc := range []string{"", "obs2\n", "obs1\nonly-two\tfields\n", "obs1\na\tb\tc\nbmc-without-tabs\n", "{"} {
		if _, err := decodeObserved("m", doc); err == nil {
			t.Errorf("decoded %q", doc)
		}
	}
	o := firmware.Observed{MachineID: "m", At: time.Unix(5, 0), Reported: firmware.Reported{}}
	if got, err := decodeObserved("m", encodeObserved(o)); err != nil || len(got.Reported) != 0 {
		t.Errorf("empty observation: %+v, %v", got, err)
	}
}
