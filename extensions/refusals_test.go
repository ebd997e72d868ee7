package extensions

import (
	"strings"
	"testing"
	"time"
)

// A payload without its stage's object is refused, naming the key and the
// stage, by the dry run and by NewEvent: a networkDevice fired as
// serverRegistered must not run every task with empty fields.
func TestPayloadWithoutTheStagesKeyIsRefused(t *testing.T) {
	x := mustParse(t, definition(stage("serverRegistered", sshTask("echo", "echo {{ server.model | shellquote }}"))))
	for name, c := range map[string]struct {
		payload string
		msg     string
	}{
		"another stage's object": {`{"networkDevice": {"id": "ND-1"}}`, `no "server" key: a serverRegistered payload is {"server": {...}} (it has the keys networkDevice)`},
		"empty object":           {`{}`, `no "server" key`},
		"key not an object":      {`{"server": "R450"}`, `"server" is not a JSON object`},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := x.Render(t.Context(), ServerRegisteredStage, []byte(c.payload), RenderOptions{}); !PayloadInvalid.Is(err) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("Render: %v, want %s saying %q", err, PayloadInvalid.Code, c.msg)
			}
			if _, _, err := NewEvent("e", ServerRegisteredStage, []byte(c.payload)); !PayloadInvalid.Is(err) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("NewEvent: %v, want %s saying %q", err, PayloadInvalid.Code, c.msg)
			}
		})
	}
}

// A webhook whose body is JSON must render to JSON: the failure names the
// task and the offset where the body breaks.
func TestJSONWebhookBodiesMustRenderToJSON(t *testing.T) {
	withType := func(label, ctype, tpl string) string {
		return `{"label": "` + label + `", "taskType": "ExtensionTaskWebhook", "options": {"endpoint": "https://x.example/", "method": "POST",
			"headers": {"content-type": "` + ctype + `"}, "requestTemplate": ` + jsonQuote(tpl) + `}}`
	}
	payload := []byte(`{"server": {"model": "R450", "serialNumber": "SN1"}}`)
	for name, c := range map[string]struct {
		task string
		ok   bool
		msg  string
	}{
		"undefined value, no content type": {webhookTask("vendor", `{"vendor": {{ server.vendor }}, "sn": "{{ server.serialNumber }}"}`), false,
			`task vendor ($.onAssetChange[0].tasks[0].options.requestTemplate): the rendered body is not valid JSON at offset 11 (line 1, column 12)`},
		"unquoted string":             {webhookTask("model", `[{{ server.model }}]`), false, "offset 1 (line 1, column 2)"},
		"truncated":                   {webhookTask("cut", `{"a": {{ server.model | dump }}`), false, "offset 12 (line 1, column 13): unexpected EOF"},
		"two values":                  {webhookTask("two", `{} {}`), false, "not one JSON value"},
		"json content type, not json": {withType("typed", "application/json; charset=utf-8", `model={{ server.model }}`), false, "offset 0 (line 1, column 1)"},
		"+json content type":          {withType("cloud", "application/cloudevents+json", `{"m": {{ server.model }}}`), false, "offset 6"},
		"multi-line body":             {webhookTask("lines", "{\n  \"a\": 1,\n  \"b\": {{ server.vendor }}\n}"), false, "offset 20 (line 4, column 1)"},
		"valid JSON":                  {webhookTask("good", `{"model": {{ server.model | dump }}}`), true, ""},
		"plain text, no content type": {webhookTask("text", `model={{ server.model }}`), true, ""},
		"text content type":           {withType("form", "application/x-www-form-urlencoded", `{{ server.model }}`), true, ""},
	} {
		t.Run(name, func(t *testing.T) {
			x := mustParse(t, definition(stage("serverRegistered", c.task)))
			_, err := x.Render(t.Context(), ServerRegisteredStage, payload, RenderOptions{})
			if c.ok {
				if err != nil {
					t.Fatalf("Render: %v", err)
				}
				return
			}
			if !TemplateInvalidJSON.Is(err) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Render: %v, want %s saying %q", err, TemplateInvalidJSON.Code, c.msg)
			}
		})
	}
}

func jsonQuote(s string) string { return string(jsonString(s)) }

// Validation says which tasks the stage deadline cuts short: their own
// timeout (an Ansible task's default hour included) longer than it.
func TestDeadlineWarnings(t *testing.T) {
	x := mustParse(t, definition(strings.Join([]string{
		stage("serverRegistered", sshTask("quick", "true"), ansibleTask("play")),
		stage("serverDecommissioned", webhookTask("hook", "x")),
	}, ",")))
	got := func(d time.Duration) string {
		var s []string
		for _, p := range x.DeadlineWarnings(d) {
			if !p.Warning {
				t.Errorf("%s is not a warning", p)
			}
			s = append(s, p.Path)
		}
		return strings.Join(s, " ")
	}
	if w := got(0); w != "" {
		t.Errorf("under the default hour: %s", w)
	}
	if w := got(20 * time.Second); w != "$.onAssetChange[0].tasks[0].options.timeout $.onAssetChange[0].tasks[1].options.executionTimeout $.onAssetChange[1].tasks[0].options.timeout" {
		t.Errorf("under 20s: %s", w)
	}
	if w := got(10 * time.Minute); w != "$.onAssetChange[0].tasks[1].options.executionTimeout" {
		t.Errorf("under 10m: %s (the Ansible task's default is an hour)", w)
	}
}
