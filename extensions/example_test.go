package extensions_test

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

const exampleDefinition = `{
  "kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "cmdb-sync", "label": "cmdb-sync",
  "extensionType": "workflow", "vendor": "example", "extensionVersion": "1.0.0", "icon": "sync",
  "dependencies": {"controllerVersion": "7.0"}, "inputs": [], "outputs": [], "assets": [],
  "onAssetChange": [{"stage": "serverRegistered", "tasks": [{
    "label": "notify-cmdb", "taskType": "ExtensionTaskWebhook",
    "options": {"endpoint": "https://cmdb.example.com/hooks", "method": "POST",
      "requestTemplate": "{\"serial\": {{ server.serialNumber | dump }}, \"ram\": {{ server.ramGbytes }}}"}}]}]
}`

// Parse validates a MetalSoft definition; Render is the dry run.
func ExampleExtension_Render() {
	x, problems := extensions.Parse([]byte(exampleDefinition), "cmdb-sync.json")
	if x == nil {
		fmt.Println(problems)
		return
	}
	out, err := x.Render(context.Background(), extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "6SBT0R3", "ramGbytes": 32}}`), extensions.RenderOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range out {
		fmt.Println(r.Extension, r.Task, r.TaskType, string(r.Rendered))
	}
	// Output: cmdb-sync notify-cmdb ExtensionTaskWebhook "{\"serial\": \"6SBT0R3\", \"ram\": 32}"
}

// Parse reports every problem at once, each at its JSON path.
func ExampleParse() {
	_, problems := extensions.Parse([]byte(`{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "x",
  "label": "x", "extensionType": "workflow", "vendor": "v", "extensionVersion": "1", "icon": "i",
  "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
  "onAssetChange": [{"stage": "serverInstanceDeleteDNS", "tasks": [{"label": "t", "taskType": "ExtensionTaskSSH", "options": {}}]}]}`), "x.json")
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// error: $.onAssetChange[0].stage: stage "serverInstanceDeleteDNS" was removed from MetalSoft: DNS create and delete events now fire "serverInstanceUpdateDNS"; use that stage
	// error: $.onAssetChange[0].tasks[0].taskType: unknown task type "ExtensionTaskSSH": did you mean "ExtensionTaskSsh"?
}

// Fire dispatches an event to every bound task, here on the in-memory
// fakes and a virtual clock.
func ExampleFire() {
	x, _ := extensions.Parse([]byte(exampleDefinition), "cmdb-sync.json")
	reg, _ := extensions.NewRegistry(x)
	runner := extensionsfake.NewRunner()
	d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: runner}, extensionsfake.NewStore())
	ev, _, _ := extensions.NewEvent("enrol-42", extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "6SBT0R3", "ramGbytes": 32}}`))
	rep, err := extensions.Fire(context.Background(), d.Local(clock.NewFake(clock.Epoch)), ev)
	fmt.Println(err)
	for _, del := range rep.Deliveries {
		fmt.Println(del.Extension, del.Task, del.Status, del.DeliveryID)
	}
	fmt.Println(runner.Requests()[0].Body)
	// Output:
	// <nil>
	// cmdb-sync notify-cmdb succeeded b9e1464d-5403-83f6-a14e-0e5231df80ed
	// {"serial": "6SBT0R3", "ram": 32}
}
