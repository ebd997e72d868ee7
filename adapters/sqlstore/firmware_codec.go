package sqlstore

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/firmware"
)

// Observations are the update manager's read of the whole fleet on every
// pass, so they are stored in a compact line format instead of JSON
// (decoding 10,000 JSON documents was most of a pass):
//
//	obs1
//	<manufacturer>\t<model>\t<bmc vendor>
//	<component>\t<inventory id>\t<version>     (one line per reading)
//
// Fields escape backslash, tab and newline as \\, \t and \n. A document
// that starts with "{" is read as JSON.

const obsMagic = "obs1\n"

var obsEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`)

func encodeObserved(o firmware.Observed) string {
	var b strings.Builder
	b.WriteString(obsMagic)
	b.WriteString(obsEscaper.Replace(o.Identity.Manufacturer))
	b.WriteByte('\t')
	b.WriteString(obsEscaper.Replace(o.Identity.Model))
	b.WriteByte('\t')
	b.WriteString(obsEscaper.Replace(string(o.Identity.BMCVendor)))
	b.WriteByte('\n')
	for _, t := range firmware.ComponentTypes {
		for _, r := range o.Reported[t] {
			b.WriteString(string(t))
			b.WriteByte('\t')
			b.WriteString(obsEscaper.Replace(r.ID))
			b.WriteByte('\t')
			b.WriteString(obsEscaper.Replace(r.Version))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func unescapeField(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 't':
				c = '\t'
			case 'n':
				c = '\n'
			default:
				c = s[i]
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

var errObsCorrupt = errors.New("corrupt observation document")

// decodeObserved reads a document of encodeObserved (or JSON).
func decodeObserved(machine, doc string) (firmware.Observed, error) {
	o := firmware.Observed{MachineID: machine}
	if strings.HasPrefix(doc, "{") {
		err := json.Unmarshal([]byte(doc), &o)
		return o, err
	}
	rest, ok := strings.CutPrefix(doc, obsMagic)
	if !ok {
		return o, errObsCorrupt
	}
	line, rest, _ := strings.Cut(rest, "\n")
	f := strings.Split(line, "\t")
	if len(f) != 3 {
		return o, errObsCorrupt
	}
	o.Identity = firmware.Identity{Manufacturer: unescapeField(f[0]), Model: unescapeField(f[1]), BMCVendor: bmc.Vendor(unescapeField(f[2]))}
	o.Reported = firmware.Reported{}
	for rest != "" {
		line, rest, _ = strings.Cut(rest, "\n")
		c, tail, ok1 := strings.Cut(line, "\t")
		id, version, ok2 := strings.Cut(tail, "\t")
		if !ok1 || !ok2 {
			return o, errObsCorrupt
		}
		t := firmware.ComponentType(c)
		o.Reported[t] = append(o.Reported[t], firmware.Reading{ID: unescapeField(id), Version: unescapeField(version)})
	}
	return o, nil
}
