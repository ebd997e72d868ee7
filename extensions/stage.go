package extensions

import (
	"sort"
	"strings"
)

// Stage is a lifecycle event an extension binds tasks to through
// onAssetChange. Names are case-sensitive, exactly as MetalSoft spells them.
type Stage string

// The twelve stages of the specification (MetalSoft's
// AssetExtensionActionStage), with the object each one's payload carries.
const (
	ServerRegisteredStage        Stage = "serverRegistered"             // server
	ServerDecommissioned         Stage = "serverDecommissioned"         // server
	SwitchRegistered             Stage = "switchRegistered"             // networkDevice
	SwitchDecommissioned         Stage = "switchDecommissioned"         // networkDevice
	ServerInstanceUpdate         Stage = "serverInstanceUpdate"         // serverInstanceRecordSet
	ServerInstanceGroupUpdateDNS Stage = "serverInstanceGroupUpdateDNS" // serverInstanceGroupDNSRecordSet
	ServerInstanceUpdateDNS      Stage = "serverInstanceUpdateDNS"      // serverInstanceDNSRecordSet
	ClusterUpdateDNS             Stage = "clusterUpdateDNS"             // clusterDNSRecordSet
	ServerCreateDNS              Stage = "serverCreateDNS"              // serverDNSRecordSet
	ServerDeleteDNS              Stage = "serverDeleteDNS"              // serverDNSRecordSet
	SwitchCreateDNS              Stage = "switchCreateDNS"              // switchDNSRecordSet
	SwitchDeleteDNS              Stage = "switchDeleteDNS"              // switchDNSRecordSet
)

// payloadKeys maps each stage to the top-level key of its payload.
var payloadKeys = map[Stage]string{
	ServerRegisteredStage:        "server",
	ServerDecommissioned:         "server",
	SwitchRegistered:             "networkDevice",
	SwitchDecommissioned:         "networkDevice",
	ServerInstanceUpdate:         "serverInstanceRecordSet",
	ServerInstanceGroupUpdateDNS: "serverInstanceGroupDNSRecordSet",
	ServerInstanceUpdateDNS:      "serverInstanceDNSRecordSet",
	ClusterUpdateDNS:             "clusterDNSRecordSet",
	ServerCreateDNS:              "serverDNSRecordSet",
	ServerDeleteDNS:              "serverDNSRecordSet",
	SwitchCreateDNS:              "switchDNSRecordSet",
	SwitchDeleteDNS:              "switchDNSRecordSet",
}

// Stages lists the twelve stages in the specification's order.
func Stages() []Stage {
	return []Stage{ServerRegisteredStage, ServerDecommissioned, SwitchRegistered, SwitchDecommissioned,
		ServerInstanceUpdate, ServerInstanceGroupUpdateDNS, ServerInstanceUpdateDNS, ClusterUpdateDNS,
		ServerCreateDNS, ServerDeleteDNS, SwitchCreateDNS, SwitchDeleteDNS}
}

// Known reports whether s is one of the twelve stages.
func (s Stage) Known() bool { _, ok := payloadKeys[s]; return ok }

// PayloadKey is the top-level key of the stage's payload ("server" for
// serverRegistered), "" for an unknown stage.
func (s Stage) PayloadKey() string { return payloadKeys[s] }

// RemovedStages are stages of earlier MetalSoft 7.x releases that no
// longer exist, each with the stage that replaced it: create, update and
// delete DNS events were consolidated into the *UpdateDNS stages.
var RemovedStages = map[string]Stage{
	"serverInstanceGroupCreateDNS": ServerInstanceGroupUpdateDNS,
	"serverInstanceGroupDeleteDNS": ServerInstanceGroupUpdateDNS,
	"serverInstanceDeleteDNS":      ServerInstanceUpdateDNS,
}

// lifecycleStages are the stages of onCreate, onEdit and onDelete.
var lifecycleStages = []string{"preDeploy", "postDeploy"}

// stageProblem explains why name is not a stage: removed (and what
// replaced it), a near miss (did you mean), or unknown. "" for a stage.
func stageProblem(name string) string {
	if Stage(name).Known() {
		return ""
	}
	if repl, ok := RemovedStages[name]; ok {
		return "stage " + quote(name) + " was removed from MetalSoft: DNS create and delete events now fire " + quote(string(repl)) + "; use that stage"
	}
	for _, old := range sortedKeys(RemovedStages) {
		if repl := RemovedStages[old]; fold(name) == fold(old) {
			return "stage " + quote(name) + " is a removed stage (" + old + ", and stage names are case-sensitive): use " + quote(string(repl))
		}
	}
	if near := nearest(name, stageNames()); near != "" {
		return "unknown stage " + quote(name) + ": did you mean " + quote(near) + "? (stage names are case-sensitive)"
	}
	return "unknown stage " + quote(name) + ": want one of " + strings.Join(stageNames(), ", ")
}

func stageNames() []string {
	var out []string
	for _, s := range Stages() {
		out = append(out, string(s))
	}
	return out
}

// fold lower-cases s and drops spaces, dashes and underscores, so that
// "server Registered" and "ServerRegistered" meet "serverRegistered".
func fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r == ' ' || r == '-' || r == '_' || r == '\t' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// nearest returns the candidate name is a near miss of: equal once folded,
// or within an edit distance of 2 (3 for long names), "" when none is close.
func nearest(name string, candidates []string) string {
	f := fold(name)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if fold(c) == f {
			return c
		}
		d := editDistance(f, fold(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(f) > 12 {
		limit = 3
	}
	if bestD <= limit {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func quote(s string) string { return `"` + s + `"` }

func sortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
