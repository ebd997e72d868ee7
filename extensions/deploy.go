package extensions

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/ironic"
)

// Deploy types and statuses of serverInstanceUpdate (MetalSoft's).
const (
	DeployCreate   = "create"
	DeployDelete   = "delete"
	DeployOngoing  = "ongoing"
	DeployFinished = "finished"
)

// deployPhase is where a node's instance deployment stands.
type deployPhase struct {
	Type, Status string
	// Instance is the instance's UUID (Ironic's instance_uuid).
	Instance string
}

func (p deployPhase) none() bool { return p.Type == "" }

// nodePhase reads a node's deploy phase from its provision state, given
// the phase seen before (Ironic clears instance_uuid when it tears an
// instance down, and cleaning or available mean an instance ended only
// after one was deployed):
//
//	deploying, wait call-back       create, ongoing
//	active                          create, finished
//	deleting                        delete, ongoing
//	cleaning, clean wait after an   delete, ongoing
//	  instance
//	available, manageable, ... after delete, finished
//	  an instance
//	deploy failed, anything else    unchanged (no event)
func nodePhase(n ironic.Node, prev deployPhase) deployPhase {
	inst := n.InstanceUUID
	if inst == "" {
		inst = prev.Instance
	}
	had := !prev.none() && !(prev.Type == DeployDelete && prev.Status == DeployFinished)
	switch n.ProvisionState {
	case ironic.StateDeploying, ironic.StateDeployWait:
		return deployPhase{DeployCreate, DeployOngoing, n.InstanceUUID}
	case ironic.StateActive:
		return deployPhase{DeployCreate, DeployFinished, n.InstanceUUID}
	case ironic.StateDeleting:
		return deployPhase{DeployDelete, DeployOngoing, inst}
	case ironic.StateCleaning, ironic.StateCleanWait:
		if had {
			return deployPhase{DeployDelete, DeployOngoing, inst}
		}
		return prev
	case ironic.StateAvailable, ironic.StateManageable, ironic.StateEnroll:
		if had {
			return deployPhase{DeployDelete, DeployFinished, inst}
		}
		return prev
	}
	return prev
}

// DeployWatcher is the Ironic source of serverInstanceUpdate: the
// projection shows it every instance's nodes on each pass
// (enrollment.Projector.Observer), and it fires serverInstanceUpdate for
// each deploy transition it sees — an instance being deployed (create:
// ongoing, then finished) or torn down (delete: ongoing, then finished).
//
// A transition's event ID is its identity in Ironic:
// "ironic/<Ironic instance>/<node UUID>/<instance UUID>/<type>/<status>",
// so a pass that sees the same state again, or a restarted worker that
// sees it for the first time, fires nothing new. The watcher remembers
// each node's last phase in memory; after a restart, a node's current
// phase fires only when the store holds an earlier phase of the same
// instance (the watcher was following it) and not the phase itself, so a
// worker starting on a site of deployed nodes does not fire for every
// one of them. Phases between two passes are not seen (a deploy that
// started and finished within one interval fires finished only), and a
// redeploy of the same instance UUID on the same node is the same
// transitions, which fire nothing new. Nothing is read or fired while no
// active extension binds serverInstanceUpdate.
type DeployWatcher struct {
	Dispatcher *Dispatcher
	Submitter  Submitter
	Log        *slog.Logger

	mu   sync.Mutex
	last map[string]deployPhase // by Ironic instance and node UUID
}

// ObserveNodes is called with an Ironic instance's nodes as one
// projection pass listed them.
func (w *DeployWatcher) ObserveNodes(ctx context.Context, instance string, nodes []ironic.Node) {
	if w == nil || w.Dispatcher == nil || w.Submitter == nil || !w.Dispatcher.Bound(ServerInstanceUpdate) {
		return
	}
	log := w.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[string]deployPhase{}
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if n.UUID == "" {
			continue
		}
		key := instance + "/" + n.UUID
		seen[key] = true
		prev, known := w.last[key]
		cur := nodePhase(n, prev)
		if cur == prev && known {
			continue
		}
		if cur.none() {
			w.last[key] = cur
			continue
		}
		ev, err := DeployEvent(instance, n, cur.Type, cur.Status, cur.Instance, w.Dispatcher.StageDeadline)
		if err != nil {
			log.Warn("serverInstanceUpdate not built", "phase", Phase, "node", n.UUID, "error", err.Error())
			w.last[key] = cur
			continue
		}
		if !known {
			fire, err := w.followed(ctx, instance, n.UUID, cur, ev.ID)
			if err != nil {
				log.Warn("serverInstanceUpdate: the store did not answer; the node is looked at again next pass", "phase", Phase, "node", n.UUID, "error", err.Error())
				continue
			}
			if !fire {
				w.last[key] = cur
				continue
			}
		}
		if err := w.Submitter.Submit(ctx, Events{Key: ev.ID, Events: []Event{ev}}); err != nil {
			_, f, _ := hostforge.Classify(err)
			log.Warn("serverInstanceUpdate not submitted; the next pass tries again", "phase", Phase, "event", ev.ID, "code", f.Code, "error", f.Error())
			continue
		}
		log.Info("serverInstanceUpdate submitted", "phase", Phase, "event", ev.ID, "node", n.Name)
		w.last[key] = cur
	}
	for k := range w.last {
		if strings.HasPrefix(k, instance+"/") && !seen[k] {
			delete(w.last, k)
		}
	}
}

// followed decides a node's phase seen for the first time since this
// process started: fire it when the store has a record of an earlier
// phase of the same instance and none of this one.
func (w *DeployWatcher) followed(ctx context.Context, instance, node string, cur deployPhase, id string) (bool, error) {
	has := func(id string) (bool, error) {
		recs, err := w.Dispatcher.Store.Executions(ctx, Query{EventID: id, Limit: 1})
		return len(recs) > 0, err
	}
	if ok, err := has(id); ok || err != nil {
		return false, err
	}
	var earlier []deployPhase
	switch {
	case cur.Type == DeployCreate && cur.Status == DeployFinished:
		earlier = []deployPhase{{DeployCreate, DeployOngoing, cur.Instance}}
	case cur.Type == DeployDelete:
		earlier = []deployPhase{{DeployCreate, DeployFinished, cur.Instance}, {DeployCreate, DeployOngoing, cur.Instance}}
		if cur.Status == DeployFinished {
			earlier = append(earlier, deployPhase{DeployDelete, DeployOngoing, cur.Instance})
		}
	}
	for _, p := range earlier {
		if ok, err := has(DeployEventID(instance, node, p.Instance, p.Type, p.Status)); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// DeployEventID is the ID of a deploy transition of a node.
func DeployEventID(instance, node, instanceUUID, deployType, status string) string {
	return "ironic/" + instance + "/" + node + "/" + instanceUUID + "/" + deployType + "/" + status
}

// DeployEvent builds the serverInstanceUpdate event of a node's deploy
// transition. The serverInstanceRecordSet holds deployStatus and
// deployType, and hostforge's additions: instanceUuid (Ironic's
// instance_uuid), ironicNode (the node's UUID), ironicInstance (the Ironic
// service, by its name in the config), netboxDevice (the node's name: the
// NetBox device it was enrolled from) and provisionState. MetalSoft's
// serverId, serverInstanceId, deploymentId, IPs and logical networks have
// no source in Ironic and are left out.
func DeployEvent(instance string, n ironic.Node, deployType, status, instanceUUID string, deadline time.Duration) (Event, error) {
	rs := map[string]any{"deployStatus": status, "deployType": deployType, "ironicNode": n.UUID, "ironicInstance": instance,
		"provisionState": n.ProvisionState}
	put(rs, "instanceUuid", instanceUUID)
	put(rs, "netboxDevice", n.Name)
	b, err := json.Marshal(map[string]any{"serverInstanceRecordSet": rs})
	if err != nil {
		return Event{}, PayloadInvalid.Wrap(err, "node %s: the serverInstanceRecordSet cannot be encoded", n.UUID)
	}
	ev, _, err := NewEvent(DeployEventID(instance, n.UUID, instanceUUID, deployType, status), ServerInstanceUpdate, b)
	ev.StageDeadline = deadline
	return ev, err
}
