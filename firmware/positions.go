package firmware

import (
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// posIndex maps a TOML path ("host_models.dell_r750.components.bmc",
// "…known_firmware[1]", "….current_version_reported_as") to the line where
// it is written, so that a refusal names the line as well as the table and
// key.
type posIndex map[string]int

// indexPositions walks the document's expressions. It is only called on a
// document the decoder accepted; anything it cannot follow is left out
// (a refusal then names the table and key without a line).
func indexPositions(doc []byte) (ix posIndex) {
	ix = posIndex{}
	defer func() {
		if recover() != nil {
			ix = posIndex{}
		}
	}()
	var p unstable.Parser
	p.Reset(doc)
	cur := ""
	arrays := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			path, first := headerPath(e.Key(), arrays, false)
			cur = path
			ix.set(cur, nodeLine(&p, first))
		case unstable.ArrayTable:
			path, first := headerPath(e.Key(), arrays, true)
			n := arrays[path]
			arrays[path]++
			cur = path + "[" + strconv.Itoa(n) + "]"
			ix.set(cur, nodeLine(&p, first))
			ix.set(path, nodeLine(&p, first))
		case unstable.KeyValue:
			ix.keyValue(&p, cur, e)
		}
	}
	return ix
}

func (ix posIndex) keyValue(p *unstable.Parser, table string, kv *unstable.Node) {
	path, first := keyPath(kv.Key())
	full := joinPath(table, path)
	ix.set(full, nodeLine(p, first))
	ix.value(p, full, kv.Value())
}

func (ix posIndex) value(p *unstable.Parser, path string, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				ix.keyValue(p, path, n)
			}
		}
	case unstable.Array:
		i := 0
		it := v.Children()
		for it.Next() {
			n := it.Node()
			el := path + "[" + strconv.Itoa(i) + "]"
			ix.set(el, nodeLine(p, n))
			ix.value(p, el, n)
			i++
		}
	}
}

func (ix posIndex) set(path string, line int) {
	if _, ok := ix[path]; !ok && line > 0 {
		ix[path] = line
	}
}

// line returns the line of path, or of its closest enclosing table; 0 when
// none is known.
func (ix posIndex) line(path string) int {
	for path != "" {
		if l, ok := ix[path]; ok {
			return l
		}
		cut := max(strings.LastIndexByte(path, '.'), strings.LastIndexByte(path, '['))
		if cut < 0 {
			return 0
		}
		path = path[:cut]
	}
	return 0
}

// headerPath is a table header's path, with the current element of every
// array of tables it is below: [[a.files]] after [[a]] is a[0].files, as
// the decoder and the refusals name it. arrays counts the elements of each
// array of tables so far, by its path; the last key of an array table's
// own header is left for the caller to index.
func headerPath(it unstable.Iterator, arrays map[string]int, arrayTable bool) (string, *unstable.Node) {
	parts, first := keyParts(it)
	path := ""
	for i, part := range parts {
		path = joinPath(path, part)
		if arrayTable && i == len(parts)-1 {
			break
		}
		if n := arrays[path]; n > 0 {
			path += "[" + strconv.Itoa(n-1) + "]"
		}
	}
	return path, first
}

func keyPath(it unstable.Iterator) (string, *unstable.Node) {
	parts, first := keyParts(it)
	return strings.Join(parts, "."), first
}

// keyParts is a key's dotted parts and the node of the first.
func keyParts(it unstable.Iterator) ([]string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		parts = append(parts, string(n.Data))
	}
	return parts, first
}

func nodeLine(p *unstable.Parser, n *unstable.Node) int {
	if n == nil || n.Raw.Length == 0 {
		return 0
	}
	return p.Shape(n.Raw).Start.Line
}

func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}
