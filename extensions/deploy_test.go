package extensions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/ironic"
)

// localSubmitter fires each submission at once on the world's runtime.
type localSubmitter struct {
	t    *testing.T
	w    *world
	keys []string
}

func (s *localSubmitter) Submit(ctx context.Context, evs extensions.Events) error {
	s.keys = append(s.keys, evs.Key)
	_, err := extensions.FireEvents(ctx, s.w.rt, evs)
	return err
}

func instanceDef() []byte {
	return []byte(strings.Replace(string(def("inst", "", "note:webhook")), `"stage": "serverRegistered"`, `"stage": "serverInstanceUpdate"`, 1))
}

func node(state, instance string) ironic.Node {
	return ironic.Node{UUID: "5e1f0000-0000-4000-8000-000000000001", Name: "cpu-r1-u10", ProvisionState: state, InstanceUUID: instance}
}

const inst = "7d8c0000-0000-4000-8000-00000000abcd"

// A node deployed with an instance, then torn down, fires
// serverInstanceUpdate once per transition; passes that see the same
// state again fire nothing.
func TestDeployWatcherFiresOncePerTransition(t *testing.T) {
	w := newWorld(t, instanceDefWithTemplate())
	sub := &localSubmitter{t: t, w: w}
	dw := &extensions.DeployWatcher{Dispatcher: w.d, Submitter: sub}
	ctx := context.Background()
	for _, n := range []ironic.Node{
		node("available", ""), node("deploying", inst), node("wait call-back", inst), node("deploying", inst),
		node("active", inst), node("active", inst), node("deleting", inst), node("cleaning", ""), node("clean wait", ""),
		node("available", ""), node("available", ""),
	} {
		dw.ObserveNodes(ctx, "ironic-cpu", []ironic.Node{n})
	}
	id := func(typ, status string) string {
		return extensions.DeployEventID("ironic-cpu", node("", "").UUID, inst, typ, status)
	}
	want := []string{id("create", "ongoing"), id("create", "finished"), id("delete", "ongoing"), id("delete", "finished")}
	if strings.Join(sub.keys, " ") != strings.Join(want, " ") {
		t.Fatalf("submitted\n%v\nwant\n%v", sub.keys, want)
	}
	reqs := w.runner.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d deliveries, want one per transition", len(reqs))
	}
	var body map[string]string
	if err := json.Unmarshal([]byte(reqs[3].Body), &body); err != nil {
		t.Fatal(err)
	}
	if body["type"] != "delete" || body["status"] != "finished" || body["instance"] != inst || body["node"] != node("", "").UUID || body["device"] != "cpu-r1-u10" {
		t.Errorf("the last delivery's body %v", body)
	}

	// A restarted worker: a node still in a phase it fired fires nothing; a
	// node in the next phase of an instance it followed fires that phase.
	again := &extensions.DeployWatcher{Dispatcher: w.d, Submitter: sub}
	again.ObserveNodes(ctx, "ironic-cpu", []ironic.Node{node("available", "")})
	sub.keys = nil
	redeploy := &extensions.DeployWatcher{Dispatcher: w.d, Submitter: sub}
	redeploy.ObserveNodes(ctx, "ironic-cpu", []ironic.Node{node("active", inst)})
	if len(sub.keys) != 0 {
		t.Fatalf("a restart that saw a fired phase submitted %v", sub.keys)
	}
	other := "7d8c0000-0000-4000-8000-00000000ffff"
	fresh := &extensions.DeployWatcher{Dispatcher: w.d, Submitter: sub}
	fresh.ObserveNodes(ctx, "ironic-cpu", []ironic.Node{node("active", other)})
	if len(sub.keys) != 0 {
		t.Fatalf("a worker starting beside a node deployed before it watched submitted %v", sub.keys)
	}
	fresh.ObserveNodes(ctx, "ironic-cpu", []ironic.Node{node("deleting", other)})
	if want := extensions.DeployEventID("ironic-cpu", node("", "").UUID, other, "delete", "ongoing"); strings.Join(sub.keys, " ") != want {
		t.Fatalf("a teardown seen after a restart submitted %v, want %s", sub.keys, want)
	}
}

// Nothing is read or submitted while no extension binds the stage.
func TestDeployWatcherIdleWithoutBoundTasks(t *testing.T) {
	w := newWorld(t, def("alpha", "", "hook:webhook"))
	sub := &localSubmitter{t: t, w: w}
	dw := &extensions.DeployWatcher{Dispatcher: w.d, Submitter: sub}
	dw.ObserveNodes(context.Background(), "ironic-cpu", []ironic.Node{node("deploying", inst)})
	dw.ObserveNodes(context.Background(), "ironic-cpu", []ironic.Node{node("active", inst)})
	if len(sub.keys) != 0 || w.store.Writes != 0 {
		t.Fatalf("submitted %v, %d store writes", sub.keys, w.store.Writes)
	}
}

func instanceDefWithTemplate() []byte {
	b := strings.Replace(string(instanceDef()), `"requestTemplate": "{\"serial\": \"{{ server.serialNumber }}\", \"task\": \"note\"}"`,
		`"requestTemplate": "{\"type\": {{ serverInstanceRecordSet.deployType | dump }}, \"status\": {{ serverInstanceRecordSet.deployStatus | dump }}, \"instance\": {{ serverInstanceRecordSet.instanceUuid | dump }}, \"node\": {{ serverInstanceRecordSet.ironicNode | dump }}, \"device\": {{ serverInstanceRecordSet.netboxDevice | dump }}}"`, 1)
	return []byte(b)
}
