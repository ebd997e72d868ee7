package cli

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/verify"
)

// jsonDoc is the documented -o json output of one command: the Go value
// it prints. docs/json.md is generated from jsonDocs, and every -o json
// output the tests produce is checked against its shape (run does it), so
// the doc, the code and the output cannot drift.
type jsonDoc struct {
	// Command is the command path without "hostforge".
	Command string
	// Variant is a flag that selects another document ("--unmatched");
	// "" for the command's own.
	Variant string
	// About says what the document is and when it is printed.
	About string
	// Value is a value of the type printed.
	Value any
	// Lines: one document per line (NDJSON) instead of one document.
	Lines bool
}

var jsonDocs = []jsonDoc{
	{Command: "bmc detect", About: "What was detected; a BMC of no supported vendor has supported false and the failure.", Value: detectJSON{}},
	{Command: "enroll", Lines: true, About: "One object per host, on its own line, written as each host finishes (NDJSON). `extensions` are the serverRegistered deliveries the run fired, as `extensions fire` reports them (MetalSoft's names).", Value: enrollJSON{}},
	{Command: "extensions fire", About: "One row per task, in execution order. The rows describe MetalSoft executions and keep MetalSoft's field names (see the top of this page). status is succeeded, failed or skipped (succeeded in an earlier firing).", Value: []fireJSON{}},
	{Command: "extensions history", About: "The deliveries recorded, newest first, with MetalSoft's field names; finishedAt is null until the delivery ends.", Value: []historyJSON{}},
	{Command: "extensions listen", About: "Printed once the endpoint listens; nothing follows on the standard output.", Value: listenJSON{}},
	{Command: "extensions outputs", About: "The extension's stored outputs (values null when none are stored), with MetalSoft's field names.", Value: outputsJSON{}},
	{Command: "extensions render", About: "One row per task bound to the stage, in execution order, with MetalSoft's field names; rendered is a string, or the extra-vars object of an Ansible task.", Value: []extensions.Rendered{}},
	{Command: "extensions validate", About: "One row per definition file, and with --config one for its extensions.instances.", Value: []validateJSON{}},
	{Command: "failure-codes", About: "Every failure code (or the ones named).", Value: []codeJSON{}},
	{Command: "firmware approve", About: "The reprovisioning request, approved.", Value: firmware.Request{}},
	{Command: "firmware auto-update", About: "The machine's automatic update override; autoupdate is null once cleared.", Value: autoUpdateJSON{}},
	{Command: "firmware cancel", About: "The update, cancelled: it stops at its next step boundary.", Value: cancelJSON{}},
	{Command: "firmware config delete", About: "The override removed.", Value: overrideDeletedJSON{}},
	{Command: "firmware config list", About: "The runtime overrides, in the order they apply.", Value: []firmware.Override{}},
	{Command: "firmware config set", About: "The override stored.", Value: firmware.Override{}},
	{Command: "firmware drift", About: "The host's drift from the catalog's defaults; in_catalog says whether a catalog model matched.", Value: firmware.Report{}},
	{Command: "firmware history", About: "The machine's updates, oldest first.", Value: []firmware.HistoryEntry{}},
	{Command: "firmware report", About: "The fleet's compliance, per model.", Value: []firmware.ModelReport{}},
	{Command: "firmware report", Variant: "--unmatched", About: "The hosts with unmatched components.", Value: []firmware.UnmatchedHost{}},
	{Command: "firmware reprovision clear", About: "The request cleared.", Value: clearedJSON{}},
	{Command: "firmware reprovision list", About: "Every reprovisioning request with its update.", Value: []firmware.RequestStatus{}},
	{Command: "firmware reprovision mark-manual-upgrade-complete", About: "The request, its manual upgrade marked complete.", Value: firmware.Request{}},
	{Command: "firmware reprovision set", About: "The request created.", Value: firmware.Request{}},
	{Command: "firmware reset", About: "The update, back at firmware checking.", Value: firmware.HostUpdate{}},
	{Command: "firmware run", About: "Printed once its servers listen; nothing follows on the standard output.", Value: firmwareRunJSON{}},
	{Command: "firmware show", About: "The catalog in force.", Value: catalogShow{}},
	{Command: "firmware show", Variant: "--machine", About: "What was read of one managed host, and where its update is.", Value: machineShow{}},
	{Command: "firmware start-updates", About: "The window opened.", Value: windowsJSON{}},
	{Command: "firmware start-updates", Variant: "--cancel", About: "The windows removed.", Value: windowsCancelledJSON{}},
	{Command: "lab", About: "Printed once the rack is served; nothing follows on the standard output.", Value: labJSON{}},
	{Command: "ledger project", About: "The projection pass: each instance listed, the references changed, and the pass's failure.", Value: projectionJSON{}},
	{Command: "ledger show", About: "What the ledger records for the device.", Value: ledgerShowJSON{}},
	{Command: "lldp decode", About: "One row per interface of the inventory.", Value: []lldpJSON{}},
	{Command: "platform-class backfill", About: "The whole run: one row per device; without --apply each row says what would be written.", Value: backfillReportJSON{}},
	{Command: "platform-class resolve", About: "The inputs and the key, or the failure.", Value: resolveJSON{}},
	{Command: "retire", Lines: true, About: "One object per host, on its own line (NDJSON), as `enroll` prints them: what the retirement did per phase, the extension deliveries it fired, and the failure with its operator action.", Value: retireJSON{}},
	{Command: "scout", About: "The task run and its report (task absent when there was none).", Value: scout.Result{}},
	{Command: "scout token", About: "The machine's agent token.", Value: scoutTokenJSON{}},
	{Command: "verify", About: "Every mismatch, with the operator's action.", Value: verifyJSON{}},
	{Command: "version", About: "The build's version, commit and platform.", Value: versionInfo{}},
	{Command: "worker", About: "Printed once the worker polls its task queue; nothing follows on the standard output.", Value: workerJSON{}},
}

// metalSoftRows are the types that describe MetalSoft executions and
// objects: their fields keep MetalSoft's (camelCase) names.
var metalSoftRows = map[reflect.Type]bool{
	reflect.TypeFor[fireJSON]():            true,
	reflect.TypeFor[historyJSON]():         true,
	reflect.TypeFor[outputsJSON]():         true,
	reflect.TypeFor[extensions.Rendered](): true,
}

// shape is a JSON value's documented shape.
type shape struct {
	// kind: object, array, map, string, number, boolean, any.
	kind   string
	fields []field // object
	elem   *shape  // array, map
	// null: the value may be null (a pointer without omitempty).
	null bool
	note string
	// metalSoft: the object's names are MetalSoft's.
	metalSoft bool
}

type field struct {
	name string
	// absent: the key is left out when empty (omitempty, omitzero).
	absent bool
	shape  *shape
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// customShapes are the types that marshal themselves (set in init: their
// shapes are built with shapeOf, which reads the map).
var customShapes map[reflect.Type]func() *shape

func init() { customShapes = customShapeFuncs() }

func customShapeFuncs() map[reflect.Type]func() *shape {
	return map[reflect.Type]func() *shape{
		reflect.TypeFor[time.Time]():        func() *shape { return &shape{kind: "string", note: "RFC 3339 time"} },
		reflect.TypeFor[json.RawMessage]():  func() *shape { return &shape{kind: "any"} },
		reflect.TypeFor[verify.TLV]():       func() *shape { return &shape{kind: "array", elem: &shape{kind: "any"}, note: "[type, hex value]"} },
		reflect.TypeFor[verify.ChassisID](): idShape,
		reflect.TypeFor[verify.PortID]():    idShape,
		reflect.TypeFor[verify.Capabilities](): func() *shape {
			return shapeOf(reflect.TypeFor[struct {
				Supported []string `json:"supported"`
				Enabled   []string `json:"enabled"`
			}](), nil)
		},
		reflect.TypeFor[verify.ManagementAddress](): func() *shape { return &shape{kind: "string"} },
		reflect.TypeFor[verify.LinkAggregation](): func() *shape {
			return shapeOf(reflect.TypeFor[struct {
				Capable bool   `json:"capable"`
				Enabled bool   `json:"enabled"`
				PortID  uint32 `json:"port_id"`
			}](), nil)
		},
	}
}

// idShape is a chassis or port ID: its subtype, the subtype's name and
// the ID rendered.
func idShape() *shape {
	return shapeOf(reflect.TypeFor[struct {
		Subtype int    `json:"subtype"`
		Type    string `json:"type"`
		Value   string `json:"value"`
	}](), nil)
}

// shapeOf is the shape encoding/json gives a value of t. onPath guards
// against recursive types.
func shapeOf(t reflect.Type, onPath map[reflect.Type]bool) *shape {
	if f, ok := customShapes[t]; ok {
		return f()
	}
	if t.Kind() == reflect.Pointer {
		s := *shapeOf(t.Elem(), onPath)
		s.null = true
		return &s
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		panic(fmt.Sprintf("%s marshals itself: add its shape to customShapes", t))
	}
	if t.Implements(textMarshaler) {
		return &shape{kind: "string"}
	}
	switch t.Kind() {
	case reflect.String:
		return &shape{kind: "string"}
	case reflect.Bool:
		return &shape{kind: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16,
		reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return &shape{kind: "number"}
	case reflect.Interface:
		return &shape{kind: "any"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &shape{kind: "string", note: "base64"}
		}
		return &shape{kind: "array", elem: shapeOf(t.Elem(), onPath)}
	case reflect.Map:
		return &shape{kind: "map", elem: shapeOf(t.Elem(), onPath)}
	case reflect.Struct:
		if onPath[t] {
			return &shape{kind: "any", note: "recursive"}
		}
		next := map[reflect.Type]bool{t: true}
		for k := range onPath {
			next[k] = true
		}
		s := &shape{kind: "object", metalSoft: metalSoftRows[t]}
		s.fields = structFields(t, next)
		return s
	}
	panic(fmt.Sprintf("no JSON shape for %s", t))
}

// structFields are t's JSON fields as encoding/json names them, embedded
// structs' fields promoted.
func structFields(t reflect.Type, onPath map[reflect.Type]bool) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = append(out, structFields(et, onPath)...)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		s := shapeOf(f.Type, onPath)
		absent := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		if absent && f.Type.Kind() == reflect.Pointer {
			// An omitted nil pointer is absent, never null.
			c := *s
			c.null = false
			s = &c
		}
		out = append(out, field{name: name, absent: absent, shape: s})
	}
	return out
}

// render writes s as a pseudo-JSON type at indent.
func (s *shape) render(b *strings.Builder, indent string) {
	switch s.kind {
	case "object":
		b.WriteString("{\n")
		for _, f := range s.fields {
			q := ""
			if f.absent {
				q = "?"
			}
			fmt.Fprintf(b, "%s  %q%s: ", indent, f.name, q)
			f.shape.render(b, indent+"  ")
			b.WriteString("\n")
		}
		b.WriteString(indent + "}")
	case "array":
		b.WriteString("[")
		s.elem.render(b, indent)
		b.WriteString(", ...]")
	case "map":
		b.WriteString("{string: ")
		s.elem.render(b, indent)
		b.WriteString(", ...}")
	default:
		b.WriteString(s.kind)
	}
	if s.note != "" {
		fmt.Fprintf(b, " (%s)", s.note)
	}
	if s.null {
		b.WriteString(" | null")
	}
}

// check reports where v departs from s: a key not documented, a key
// documented as always present that is missing, a value of another kind.
// An empty list or map may be null.
func (s *shape) check(v any, path string, problems *[]string) {
	bad := func(format string, args ...any) {
		*problems = append(*problems, path+": "+fmt.Sprintf(format, args...))
	}
	if v == nil {
		if !s.null && s.kind != "any" && s.kind != "array" && s.kind != "map" {
			bad("null, documented as %s", s.kind)
		}
		return
	}
	switch s.kind {
	case "any":
	case "string":
		if _, ok := v.(string); !ok {
			bad("%T, documented as a string", v)
		}
	case "number":
		if _, ok := v.(float64); !ok {
			bad("%T, documented as a number", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("%T, documented as a boolean", v)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			bad("%T, documented as an array", v)
			return
		}
		for i, e := range a {
			s.elem.check(e, fmt.Sprintf("%s[%d]", path, i), problems)
		}
	case "map":
		m, ok := v.(map[string]any)
		if !ok {
			bad("%T, documented as an object", v)
			return
		}
		for k, e := range m {
			s.elem.check(e, path+"."+k, problems)
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad("%T, documented as an object", v)
			return
		}
		known := map[string]bool{}
		for _, f := range s.fields {
			known[f.name] = true
			e, ok := m[f.name]
			if !ok {
				if !f.absent {
					bad("key %q is missing", f.name)
				}
				continue
			}
			f.shape.check(e, path+"."+f.name, problems)
		}
		var extra []string
		for k := range m {
			if !known[k] {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			bad("key %q is not documented", k)
		}
	}
}

// docFor is the documented output of the command args run, nil when it
// has none.
func docFor(t testing.TB, args []string) *jsonDoc {
	t.Helper()
	c, _, err := NewRoot(Streams{}, nil).Find(args)
	if err != nil {
		return nil
	}
	path := strings.TrimPrefix(c.CommandPath(), "hostforge ")
	var plain *jsonDoc
	for i := range jsonDocs {
		d := &jsonDocs[i]
		if d.Command != path {
			continue
		}
		if d.Variant == "" {
			plain = d
			continue
		}
		for _, a := range args {
			if a == d.Variant || strings.HasPrefix(a, d.Variant+"=") {
				return d
			}
		}
	}
	return plain
}

// wantsJSON says args ask for -o json.
func wantsJSON(args []string) bool {
	for i, a := range args {
		if a == "-ojson" || a == "--output=json" || a == "-o=json" || (a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == "json" {
			return true
		}
	}
	return false
}

// checkJSONOutput holds out, what the command args printed with -o json,
// to its documented shape: exactly one JSON document (one per line for
// NDJSON), of the documented shape. It reports nothing when out is empty
// (a refusal prints nothing on the standard output).
func checkJSONOutput(t testing.TB, args []string, out string) {
	t.Helper()
	if strings.TrimSpace(out) == "" {
		return
	}
	d := docFor(t, args)
	if d == nil {
		t.Errorf("%v printed -o json that docs/json.md does not document:\n%s", args, out)
		return
	}
	s := shapeOf(reflect.TypeOf(d.Value), nil)
	docs := []string{out}
	if d.Lines {
		docs = strings.Split(strings.TrimRight(out, "\n"), "\n")
	}
	for _, doc := range docs {
		dec := json.NewDecoder(strings.NewReader(doc))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Errorf("hostforge %s -o json is not JSON: %v\n%s", d.Command, err, doc)
			return
		}
		if strings.TrimSpace(doc[dec.InputOffset():]) != "" {
			t.Errorf("hostforge %s -o json printed more than one JSON document:\n%s", d.Command, doc)
			return
		}
		var problems []string
		s.check(v, "$", &problems)
		if len(problems) > 0 {
			t.Errorf("hostforge %s %s -o json departs from docs/json.md:\n  %s\n%s", d.Command, d.Variant, strings.Join(problems, "\n  "), doc)
		}
	}
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Every name hostforge gives a JSON field is snake_case; only the rows
// describing MetalSoft executions and objects keep MetalSoft's names.
func TestJSONNamesAreSnakeCase(t *testing.T) {
	var walk func(s *shape, where string)
	walk = func(s *shape, where string) {
		if s.elem != nil {
			walk(s.elem, where+"[]")
		}
		for _, f := range s.fields {
			if !s.metalSoft && !snakeCase.MatchString(f.name) {
				t.Errorf("%s.%s is not snake_case", where, f.name)
			}
			walk(f.shape, where+"."+f.name)
		}
	}
	for _, d := range jsonDocs {
		walk(shapeOf(reflect.TypeOf(d.Value), nil), "hostforge "+strings.TrimSpace(d.Command+" "+d.Variant))
	}
}

// Every command with -o documents its JSON, and every documented command
// exists: a command added later is held to this too.
func TestEveryJSONOutputIsDocumented(t *testing.T) {
	root := NewRoot(Streams{}, nil)
	documented := map[string]bool{}
	for _, d := range jsonDocs {
		documented[d.Command] = true
		c, _, err := root.Find(strings.Fields(d.Command))
		if err != nil || strings.TrimPrefix(c.CommandPath(), "hostforge ") != d.Command {
			t.Errorf("jsonDocs documents %q, which is not a command", d.Command)
		}
		if d.Variant != "" && c != nil && c.Flags().Lookup(strings.TrimPrefix(d.Variant, "--")) == nil {
			t.Errorf("%s has no flag %s", d.Command, d.Variant)
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("output") != nil && !documented[strings.TrimPrefix(c.CommandPath(), "hostforge ")] {
			t.Errorf("%s has -o but docs/json.md does not document its JSON: add it to jsonDocs", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// jsonDocIntro opens docs/json.md.
const jsonDocIntro = "With `-o json` (`--output json`), `hostforge enroll` writes one JSON object per host, on its own line,\n" +
	"as each host finishes (NDJSON); every other command prints exactly one JSON document on the standard\n" +
	"output, and nothing else there (warnings, logs and errors go to the standard error). The commands that\n" +
	"serve until interrupted (`lab`, `worker`, `extensions listen`, `firmware run`) print theirs once they\n" +
	"are up.\n\n" +
	"hostforge's own field names are snake_case, in every command. The exception is deliberate: the rows of\n" +
	"the extension commands (`extensions fire`, `history`, `outputs`, `render`, and `enroll`'s `extensions`)\n" +
	"describe MetalSoft executions and objects, and keep the camelCase names MetalSoft's specifications fix\n" +
	"(`eventId`, `deliveryId`, `taskType`, `startedAt`, `finishedAt`, ...), so that a script written for\n" +
	"MetalSoft reads them unchanged; MetalSoft payloads and definitions keep their own names too.\n\n" +
	"Notation: `\"key\"?` is left out when empty; `| null` may be null; `[T, ...]` is a list of T and\n" +
	"`{string: T, ...}` an object keyed by name. A list or an object keyed by name that is empty may be\n" +
	"printed as `null` where it is not marked `?`: treat both alike. Times are RFC 3339.\n"

// jsonReference is docs/json.md.
func jsonReference() string {
	var b strings.Builder
	b.WriteString("# JSON output\n\nGenerated by `go test ./adapters/cli -run TestJSONDoc -update` from the types the commands print; do not\nedit. A test fails when this file is stale, and every `-o json` output the tests produce is checked\nagainst the shape documented here.\n\n")
	b.WriteString(jsonDocIntro)
	for _, d := range jsonDocs {
		title := "hostforge " + d.Command
		if d.Variant != "" {
			title += " " + d.Variant
		}
		fmt.Fprintf(&b, "\n## `%s -o json`\n\n%s\n\n```\n", title, d.About)
		if d.Lines {
			b.WriteString("one line per host:\n")
		}
		shapeOf(reflect.TypeOf(d.Value), nil).render(&b, "")
		b.WriteString("\n```\n")
	}
	return b.String()
}

// docs/json.md is what jsonDocs generates; go test -update rewrites it.
func TestJSONDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "json.md")
	want := jsonReference()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, []byte(want)) {
		t.Errorf("docs/json.md is stale (go test ./adapters/cli -run TestJSONDoc -update): %v", err)
	}
}

// The checker finds what it is for: an undocumented key, a missing key, a
// value of another kind, a second document.
func TestJSONShapeCheck(t *testing.T) {
	s := shapeOf(reflect.TypeFor[ledgerShowJSON](), nil)
	good := `{"device": "d", "identity": "i", "platform_class": "", "reference": "", "revision": 0, "proof_state": "none", "version": 1, "updated_at": "2026-01-01T00:00:00Z"}`
	for _, tc := range []struct {
		doc  string
		want string
	}{
		{good, ""},
		{strings.Replace(good, `"device"`, `"Device"`, 1), `key "Device" is not documented`},
		{strings.Replace(good, `"revision": 0, `, ``, 1), `key "revision" is missing`},
		{strings.Replace(good, `"revision": 0`, `"revision": "0"`, 1), `string, documented as a number`},
		{strings.Replace(good, `"version": 1`, `"version": 1, "proof": 3`, 1), `float64, documented as an object`},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.doc), &v); err != nil {
			t.Fatal(err)
		}
		var problems []string
		s.check(v, "$", &problems)
		got := strings.Join(problems, "; ")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("check(%s) = %q, want %q", tc.doc, got, tc.want)
		}
	}
	ft := &recordT{}
	checkJSONOutput(ft, []string{"ledger", "show", "x", "-o", "json"}, good+"\n"+good)
	if !strings.Contains(ft.msg, "more than one JSON document") {
		t.Errorf("two documents: %q", ft.msg)
	}
}

// recordT records what a check reports.
type recordT struct {
	testing.TB
	msg string
}

func (r *recordT) Helper() {}
func (r *recordT) Errorf(format string, args ...any) {
	r.msg += fmt.Sprintf(format, args...)
}
