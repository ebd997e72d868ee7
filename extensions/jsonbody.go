package extensions

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"strings"
)

// jsonBody reports whether a webhook's rendered body must be JSON: its
// Content-Type header is JSON (application/json, text/json or a +json
// type), or it sets none and the body starts with { or [ (what the
// webhook runner then sends as application/json).
func jsonBody(headers map[string]string, body string) bool {
	for k, v := range headers {
		if strings.EqualFold(k, "Content-Type") {
			mt, _, err := mime.ParseMediaType(v)
			if err != nil {
				mt = strings.ToLower(strings.TrimSpace(v))
			}
			return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
		}
	}
	b := strings.TrimLeft(body, " \t\r\n")
	return strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[")
}

// checkJSONBody refuses a JSON webhook body that is not JSON, naming the
// task and the offset (with its line and column) where it breaks.
func checkJSONBody(x *Extension, t *BoundTask, body string) error {
	if t.webhook == nil || !jsonBody(t.webhook.Headers, body) {
		return nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(body))
	err := dec.Decode(&v)
	if err == nil {
		if _, extra := dec.Token(); extra == nil {
			return TemplateInvalidJSON.New("extension %s, stage task %s (%s.options.requestTemplate): the rendered body is not one JSON value: something follows it at offset %d", x.Name, t.Label, t.Path, dec.InputOffset())
		}
		return nil
	}
	off := int64(len(body))
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = max(se.Offset-1, 0)
	}
	line, col := lineCol(body, int(off))
	return TemplateInvalidJSON.New("extension %s, stage task %s (%s.options.requestTemplate): the rendered body is not valid JSON at offset %d (line %d, column %d): %s; near %q",
		x.Name, t.Label, t.Path, off, line, col, err.Error(), near(body, int(off)))
}

// lineCol is the 1-based line and column of a byte offset.
func lineCol(s string, off int) (line, col int) {
	off = min(off, len(s))
	line = 1 + strings.Count(s[:off], "\n")
	col = off - strings.LastIndex(s[:off], "\n")
	return line, col
}

// near is up to 20 bytes either side of an offset, for the message.
func near(s string, off int) string {
	lo, hi := max(off-20, 0), min(off+20, len(s))
	return string(bytes.ToValidUTF8([]byte(s[lo:hi]), []byte("?")))
}
