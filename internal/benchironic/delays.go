package main

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/hostforge/hostforge/ironic"
)

// fakeDelayOptions are the [fake] options of Ironic 2023.1 (ironic/conf/fake.py
// of 21.4): each delays every call of that fake interface by whole seconds,
// "N" or "A,B" (a triangular random delay between A and B, weighted on A).
// On the scenario's path: power (get_power_state, set_power_state), so
// verification after manage takes two power delays and power on two (Ironic
// reads the power state before changing it); bios (cache_bios_settings at
// the start of cleaning), so cleaning takes one bios delay. The others
// (boot, deploy, inspect, raid, …) delay steps the scenario does not take
// (deploy, inspection, RAID) and are set alike for runs that do.
var fakeDelayOptions = []string{"power", "boot", "deploy", "vendor", "management", "inspect", "raid", "bios", "storage", "rescue"}

// defaultFakeDelays is -delays' setting: 3 s for every fake interface
// call, so verification and power on take about 6 s and cleaning about 3 s
// — seconds standing for the minutes these take on real hardware.
const defaultFakeDelays = "power=3,boot=3,deploy=3,vendor=3,management=3,inspect=3,raid=3,bios=3,storage=3,rescue=3"

// fakeDelay is one [fake] option's delay in whole seconds: Lo, or a
// triangular random delay from Lo to Hi.
type fakeDelay struct {
	Option string `json:"option"`
	Lo     int    `json:"lo_s"`
	Hi     int    `json:"hi_s"`
}

// parseFakeDelays reads "power=3,bios=2-5": option names without the
// _delay suffix, seconds as Ironic takes them (whole, ≥ 0), "A-B" for a
// range. Options come out in fakeDelayOptions' order.
func parseFakeDelays(s string) ([]fakeDelay, error) {
	set := map[string]fakeDelay{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, val, ok := strings.Cut(item, "=")
		name = strings.TrimSuffix(strings.TrimSpace(name), "_delay")
		if !ok || !known(name) {
			return nil, fmt.Errorf("%q: want OPTION=SECONDS with OPTION one of %s", item, strings.Join(fakeDelayOptions, ", "))
		}
		if _, dup := set[name]; dup {
			return nil, fmt.Errorf("%q: %s given twice", item, name)
		}
		lo, hi, isRange := strings.Cut(strings.TrimSpace(val), "-")
		d := fakeDelay{Option: name}
		var err1, err2 error
		d.Lo, err1 = strconv.Atoi(lo)
		d.Hi = d.Lo
		if isRange {
			d.Hi, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || d.Lo < 0 || d.Hi < d.Lo {
			return nil, fmt.Errorf("%q: seconds must be whole and >= 0, a range A-B with A <= B (Ironic takes integers)", item)
		}
		set[name] = d
	}
	var out []fakeDelay
	for _, name := range fakeDelayOptions {
		if d, ok := set[name]; ok {
			out = append(out, d)
		}
	}
	return out, nil
}

func known(option string) bool {
	for _, o := range fakeDelayOptions {
		if o == option {
			return true
		}
	}
	return false
}

// ironicConf is the INI text appended to ironic.conf for these delays
// (IRONIC_EXTRA_CONF of scripts/ironic/ironic-up); empty without any.
func ironicConf(delays []fakeDelay) string {
	if len(delays) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[fake]\n")
	for _, d := range delays {
		v := strconv.Itoa(d.Lo)
		if d.Hi != d.Lo {
			v += "," + strconv.Itoa(d.Hi)
		}
		fmt.Fprintf(&b, "%s_delay = %s\n", d.Option, v)
	}
	return b.String()
}

// describeDelays renders the delays for the report: "power 3 s, bios 2-5 s".
func describeDelays(delays []fakeDelay) string {
	var parts []string
	for _, d := range delays {
		if d.Hi != d.Lo {
			parts = append(parts, fmt.Sprintf("%s %d-%d s", d.Option, d.Lo, d.Hi))
		} else {
			parts = append(parts, fmt.Sprintf("%s %d s", d.Option, d.Lo))
		}
	}
	return strings.Join(parts, ", ")
}

// scaledTiming is hostforge's production ironic.Timing with every duration
// multiplied by scale: the benchmark compresses real hardware's minutes
// into fake-hardware's seconds and scales hostforge's waits alike, rather
// than tuning them to the run. FreshLook alone keeps its production value:
// it is the age of a look as a round trip and the step runtime make it,
// and the benchmark's round trips to Ironic are real, not compressed (at
// 1/10 it would be 200 ms, less than one read on a loaded Ironic takes, so
// every handed-on look would be thrown away and read again).
func scaledTiming(scale float64) ironic.Timing {
	t := ironic.DefaultTiming()
	v := reflect.ValueOf(&t).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Type() == reflect.TypeFor[time.Duration]() {
			f.SetInt(int64(float64(f.Int()) * scale))
		}
	}
	t.FreshLook = ironic.DefaultTiming().FreshLook
	return t
}
