package extensions

import (
	"strings"
	"testing"
)

// TestValidationRules names each validation rule of the specification.
// Every case lists the problems it must report: a JSON path and a part
// of the message.
func TestValidationRules(t *testing.T) {
	type want struct{ path, msg string }
	cases := []struct {
		rule string
		def  []byte
		want []want // empty: the definition validates
	}{
		{"the twelve stages are accepted", definition(func() string {
			var ss []string
			for _, s := range Stages() {
				ss = append(ss, stage(string(s), ansibleTask("t")))
			}
			return strings.Join(ss, ",")
		}()), nil},
		{"an unknown stage is refused", definition(stage("serverExploded", ansibleTask("t"))),
			[]want{{"$.onAssetChange[0].stage", `unknown stage "serverExploded"`}}},
		{"stage names are case-sensitive", definition(stage("ServerRegistered", ansibleTask("t"))),
			[]want{{"$.onAssetChange[0].stage", `did you mean "serverRegistered"`}}},
		{"a near miss with a space gets a did-you-mean hint", definition(stage("server Registered", ansibleTask("t"))),
			[]want{{"$.onAssetChange[0].stage", `did you mean "serverRegistered"`}}},
		{"a misspelt stage gets a did-you-mean hint", definition(stage("switchDecomissioned", ansibleTask("t"))),
			[]want{{"$.onAssetChange[0].stage", `did you mean "switchDecommissioned"`}}},
		{"removed stage serverInstanceGroupCreateDNS names its replacement", definition(stage("serverInstanceGroupCreateDNS", ansibleTask("t"))),
			[]want{{"$.onAssetChange[0].stage", `"serverInstanceGroupUpdateDNS"`}}},
		{"removed stage serverInstanceGroupDeleteDNS names its replacement", definition(stage("serverInstanceGroupDeleteDNS", ansibleTask("t"))),
			[]want{{"$.onAssetChange[0].stage", `"serverInstanceGroupUpdateDNS"`}}},
		{"removed stage serverInstanceDeleteDNS names its replacement", definition(stage("serverInstanceDeleteDNS", ansibleTask("t"))),
			[]want{{"$.onAssetChange[0].stage", `"serverInstanceUpdateDNS"`}}},
		{"a removed stage in another case still names its replacement", definition(stage("ServerInstanceDeleteDNS", ansibleTask("t"))),
			[]want{{"$.onAssetChange[0].stage", `use "serverInstanceUpdateDNS"`}}},
		{"an unknown task type is refused and named", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskHttp", "options": {}}`)),
			[]want{{"$.onAssetChange[0].tasks[0].taskType", `unknown task type "ExtensionTaskHttp"`}}},
		{"webhook requires endpoint, method and requestTemplate", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskWebhook", "options": {}}`)),
			[]want{{".options.endpoint", "missing"}, {".options.method", "missing"}, {".options.requestTemplate", "missing"}}},
		{"webhook endpoint must be an http(s) URL", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskWebhook", "options": {"endpoint": "www.example.com", "method": "POST", "requestTemplate": ""}}`)),
			[]want{{".options.endpoint", "not an absolute http or https URL"}}},
		{"webhook method, statuses and timeout are checked", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskWebhook", "options": {"endpoint": "https://x", "method": "FETCH", "requestTemplate": "", "expectedResponseStatuses": [200, "201", 999], "timeout": "30"}}`)),
			[]want{{".options.method", `"FETCH"`}, {".options.expectedResponseStatuses[1]", "status code"}, {".options.expectedResponseStatuses[2]", "status code"}, {".options.timeout", "want an integer"}}},
		{"ssh requires host, port, timeout and commandTemplate", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskSsh", "options": {"username": "u"}}`)),
			[]want{{".options.host", "missing"}, {".options.port", "missing"}, {".options.timeout", "missing"}, {".options.commandTemplate", "missing"}}},
		{"ssh port must be an integer in range", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskSsh", "options": {"host": "h", "port": "22", "timeout": 0, "commandTemplate": "x"}}`)),
			[]want{{".options.port", "want an integer"}, {".options.timeout", "out of range"}}},
		{"ansible requires asset and playbook", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskAnsible", "options": {}}`)),
			[]want{{".options.asset", "missing"}, {".options.playbook", "missing"}}},
		{"an asset reference must resolve to assets[].name", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskAnsible", "options": {"asset": "nothing", "playbook": "p.yml"}}`)),
			[]want{{".options.asset", `"nothing" does not name an asset`}}},
		{"an asset label is not its name", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle-label", "playbook": "p.yml"}}`)),
			[]want{{".options.asset", `label of the asset named "bundle"`}}},
		{"an ee reference must name an OciImage asset", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle", "playbook": "p.yml", "ee": "bundle"}}`)),
			[]want{{".options.ee", "want an OciImage"}}},
		{"a requestTemplate must parse, and the error has its position", definition(stage("serverRegistered", webhookTask("t", "{\n  \"a\": {{ server.model | nosuch }}\n}"))),
			[]want{{".options.requestTemplate", `line 2, column 26: unknown filter "nosuch"`}}},
		{"a commandTemplate must parse", definition(stage("serverRegistered", sshTask("t", "echo {% if x %}"))),
			[]want{{".options.commandTemplate", "does not parse"}}},
		{"duplicate task labels within a stage are refused", definition(stage("serverRegistered", ansibleTask("same"), ansibleTask("same"))),
			[]want{{"$.onAssetChange[0].tasks[1].label", `"same" is already the label`}}},
		{"duplicate labels across repeated entries of a stage are refused", definition(stage("serverRegistered", ansibleTask("same")) + "," + stage("serverRegistered", ansibleTask("same"))),
			[]want{{"$.onAssetChange[1].tasks[0].label", `"same" is already the label of $.onAssetChange[0].tasks[0]`}}},
		{"the same label in different stages is fine", definition(stage("serverRegistered", ansibleTask("same")) + "," + stage("serverDecommissioned", ansibleTask("same"))), nil},
		{"failurePolicy is fail or continue", definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskAnsible", "failurePolicy": "retry", "options": {"asset": "bundle", "playbook": "p.yml"}}`)),
			[]want{{"$.onAssetChange[0].tasks[0].failurePolicy", `"retry"`}}},
		{"a missing label is refused", definition(stage("serverRegistered", `{"taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle", "playbook": "p.yml"}}`)),
			[]want{{"$.onAssetChange[0].tasks[0].label", "missing"}}},
		{"kind and schemaVersion are MetalSoft's", []byte(strings.Replace(strings.Replace(string(definition("")), `"ExtensionDefinition"`, `"workflow"`, 1), `"1.1"`, `"2.0"`, 1)),
			[]want{{"$.kind", `want "ExtensionDefinition"`}, {"$.schemaVersion", `want "1.1"`}}},
		{"not JSON, with line and column", []byte("{\n  \"kind\": \"ExtensionDefinition\",\n}"),
			[]want{{"$", "line 3, column 1"}}},
		{"an isPassword configVar or input the site sets needs 8 characters", []byte(strings.Replace(string(definition(stage("serverRegistered", ansibleTask("t")))), `"inputs": [],`,
			`"inputs": [{"label": "pin", "name": "pin", "inputType": "ExtensionInputInteger", "isPassword": true, "defaultValue": 1234}],
  "configVars": [{"label": "key", "name": "apiKey", "inputType": "ExtensionInputString", "isPassword": true, "defaultValue": "Sh0rt!"},
                 {"label": "bmc", "name": "bmcPassword", "inputType": "ExtensionInputString", "isPassword": true, "defaultValue": "calvin"},
                 {"label": "unset", "name": "unset", "inputType": "ExtensionInputString", "isPassword": true, "defaultValue": ""},
                 {"label": "long", "name": "long", "inputType": "ExtensionInputString", "isPassword": true, "defaultValue": "Long-Enough-1"},
                 {"label": "plain", "name": "plain", "inputType": "ExtensionInputString", "defaultValue": "x"}],`, 1)),
			[]want{{"$.configVars[0].defaultValue", "SECRET_TOO_SHORT: an isPassword configVar (apiKey) has 6 characters"}, {"$.inputs[0].defaultValue", "an isPassword input (pin) has 4 characters"}}},
		{"an isPassword value that is a published factory default, unset or long enough is accepted", []byte(strings.Replace(string(definition(stage("serverRegistered", ansibleTask("t")))), `"inputs": [],`,
			`"inputs": [], "configVars": [{"label": "bmc", "name": "bmcPassword", "inputType": "ExtensionInputString", "isPassword": true, "defaultValue": "calvin"},
                 {"label": "unset", "name": "unset", "inputType": "ExtensionInputString", "isPassword": true},
                 {"label": "long", "name": "long", "inputType": "ExtensionInputString", "isPassword": true, "defaultValue": "Long-Enough-1"}],`, 1)), nil},
		{"every error at once", definition(stage("ServerRegistered", `{"label": "x", "taskType": "ExtensionTaskSsh", "options": {"port": 99999}}`, webhookTask("x", "{{ ]"))),
			[]want{{"$.onAssetChange[0].stage", "did you mean"}, {"tasks[0].options.host", "missing"}, {"tasks[0].options.port", "out of range"}, {"tasks[1].options.requestTemplate", "does not parse"}, {"tasks[1].label", "already the label"}}},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			x, ps := Parse(c.def, "test")
			errs := ps.Errors()
			if len(c.want) == 0 {
				if x == nil || len(errs) > 0 {
					t.Fatalf("refused a valid definition: %v", errs)
				}
				return
			}
			if x != nil {
				t.Fatalf("accepted; want errors %v", c.want)
			}
			for _, w := range c.want {
				found := false
				for _, p := range errs {
					if strings.HasSuffix(p.Path, w.path) && strings.Contains(p.Message, w.msg) {
						found = true
					}
				}
				if !found {
					t.Errorf("no error at %s mentioning %q; got:\n%v", w.path, w.msg, errs)
				}
			}
			if len(errs) < len(c.want) {
				t.Errorf("%d errors, want at least %d", len(errs), len(c.want))
			}
		})
	}
}

func TestRepeatedStageEntriesConcatenateInOrder(t *testing.T) {
	x := mustParse(t, definition(strings.Join([]string{
		stage("serverRegistered", ansibleTask("first"), ansibleTask("second")),
		stage("serverDecommissioned", ansibleTask("other")),
		stage("serverRegistered", ansibleTask("third")),
	}, ",")))
	var got []string
	for i, task := range x.Tasks(ServerRegisteredStage) {
		if task.Index != i {
			t.Errorf("task %s has index %d, want %d", task.Label, task.Index, i)
		}
		got = append(got, task.Label)
	}
	if strings.Join(got, ",") != "first,second,third" {
		t.Fatalf("serverRegistered tasks %v, want first,second,third", got)
	}
	if n := len(x.Tasks(ServerDecommissioned)); n != 1 {
		t.Fatalf("serverDecommissioned has %d tasks, want 1", n)
	}
}

func TestWarningsDoNotRefuse(t *testing.T) {
	b := definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle", "playbook": "p.yml", "taskType": "ExtensionTaskAnsible", "playbok": "x"}}`))
	x, ps := Parse(b, "test")
	if x == nil {
		t.Fatalf("refused: %v", ps)
	}
	var paths []string
	for _, p := range x.Warnings {
		paths = append(paths, p.Path+" "+p.Message)
	}
	joined := strings.Join(paths, "\n")
	for _, w := range []string{"options.taskType the task type belongs beside label", `options.playbok unknown field, ignored; did you mean "playbook"?`} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

func TestEnvelopeAndStatus(t *testing.T) {
	inner := string(definition(stage("serverRegistered", ansibleTask("t"))))
	cases := map[string]struct {
		file   string
		status Status
		bad    string
	}{
		"bare definition is active":            {inner, StatusActive, ""},
		"envelope without status":              {`{"name": "n", "kind": "workflow", "definition": ` + inner + `}`, StatusActive, ""},
		"envelope draft":                       {`{"name": "n", "kind": "workflow", "status": "draft", "definition": ` + inner + `}`, StatusDraft, ""},
		"envelope archived":                    {`{"name": "n", "kind": "workflow", "status": "archived", "definition": ` + inner + `}`, StatusArchived, ""},
		"bad status":                           {`{"name": "n", "status": "published", "definition": ` + inner + `}`, "", "$.status"},
		"envelope definition is not an object": {`{"name": "n", "definition": []}`, "", "$.definition"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			x, ps := Parse([]byte(c.file), "f")
			if c.bad != "" {
				if x != nil || len(ps) == 0 || ps.Errors()[0].Path != c.bad {
					t.Fatalf("want an error at %s, got %v", c.bad, ps)
				}
				return
			}
			if x == nil || x.Status != c.status || x.Name != "test-ext" {
				t.Fatalf("got %+v, %v; want status %s", x, ps, c.status)
			}
		})
	}
}

func TestWebhookOptionsAreReadAsMetalSoftWritesThem(t *testing.T) {
	x := mustParse(t, definition(stage("serverRegistered", `{"label": "t", "taskType": "ExtensionTaskWebhook", "options": {
		"endpoint": "https://hooks.example.com/x", "method": "post", "requestTemplate": "{}",
		"headers": {"Authorization": "Bearer abc", "X-Trace": "1"}, "expectedResponseStatuses": [200, 202.0],
		"timeout": 10, "insecureSkipVerify": true}}`)))
	w := x.Tasks(ServerRegisteredStage)[0].Webhook()
	if w.Method != "POST" || len(w.ExpectedResponseStatuses) != 2 || w.ExpectedResponseStatuses[1] != 202 || w.Timeout != 10 || !w.InsecureSkipVerify || w.Headers["Authorization"] != "Bearer abc" {
		t.Fatalf("options %+v", w)
	}
}
