package enrollment

import (
	"context"

	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/ironic"
)

// Steps of the Ironic phases (4-7). Each is one idempotent call that reads
// the node live, acts at most a little and returns; the workflow calls it
// again with the progress it returned, sleeping in between.
const (
	// StepIronicInspection is the prelude and the inspection half (phases 4-5).
	StepIronicInspection = "ironic_inspection"
	// StepIronicSwitchIPMI is the optional Redfish→IPMI driver switch (phase 6).
	StepIronicSwitchIPMI = "ironic_switch_to_ipmi"
	// StepIronicCleaning is the prelude and the cleaning half (phase 7).
	StepIronicCleaning = "ironic_cleaning"
	// StepIronicFinalize powers the node on unless deployed (phase 7, finalize).
	StepIronicFinalize = "ironic_finalize"
)

// IronicPhases is the Ironic side of enrollment for one Ironic instance;
// *ironic.Phases implements it.
type IronicPhases interface {
	Inspection(ctx context.Context, in ironic.InspectionIn) (ironic.InspectionOut, error)
	SwitchToIPMI(ctx context.Context, spec ironic.NodeSpec) (ironic.SwitchResult, error)
	Cleaning(ctx context.Context, in ironic.CleaningIn) (ironic.CleaningOut, error)
	Finalize(ctx context.Context, in ironic.FinalizeIn) (ironic.FinalizeOut, error)
}

var _ IronicPhases = (*ironic.Phases)(nil)

// IronicInspectionIn is StepIronicInspection's input.
type IronicInspectionIn struct {
	Instance string              `json:"instance"`
	In       ironic.InspectionIn `json:"in"`
}

// IronicCleaningIn is StepIronicCleaning's input.
type IronicCleaningIn struct {
	Instance string            `json:"instance"`
	In       ironic.CleaningIn `json:"in"`
}

// IronicNodeIn is the input of the steps that need only the node spec
// (finalize also takes the cleaning half's last look at the node).
type IronicNodeIn struct {
	Instance string           `json:"instance"`
	Spec     ironic.NodeSpec  `json:"spec"`
	Seen     *ironic.Sighting `json:"seen,omitempty"`
}

func (e *Executor) ironicSteps() []flow.Step {
	return []flow.Step{
		flow.Bind(StepIronicInspection, ironicAttempt, e.IronicInspection),
		flow.Bind(StepIronicSwitchIPMI, ironicAttempt, e.IronicSwitchToIPMI),
		flow.Bind(StepIronicCleaning, ironicAttempt, e.IronicCleaning),
		flow.Bind(StepIronicFinalize, ironicAttempt, e.IronicFinalize),
	}
}

func (e *Executor) ironicPhases(instance string) (IronicPhases, error) {
	p, ok := e.Ironic[instance]
	if !ok || p == nil {
		return nil, NotImplemented.New("Ironic phases: no IronicPhases for instance %q in the executor", instance)
	}
	return p, nil
}

// IronicInspection runs one call of the prelude + inspection half.
func (e *Executor) IronicInspection(ctx context.Context, in IronicInspectionIn) (ironic.InspectionOut, error) {
	p, err := e.ironicPhases(in.Instance)
	if err != nil {
		return ironic.InspectionOut{}, err
	}
	return p.Inspection(ctx, in.In)
}

// IronicSwitchToIPMI runs the Redfish→IPMI driver switch.
func (e *Executor) IronicSwitchToIPMI(ctx context.Context, in IronicNodeIn) (ironic.SwitchResult, error) {
	p, err := e.ironicPhases(in.Instance)
	if err != nil {
		return ironic.SwitchResult{}, err
	}
	return p.SwitchToIPMI(ctx, in.Spec)
}

// IronicCleaning runs one call of the prelude + cleaning half.
func (e *Executor) IronicCleaning(ctx context.Context, in IronicCleaningIn) (ironic.CleaningOut, error) {
	p, err := e.ironicPhases(in.Instance)
	if err != nil {
		return ironic.CleaningOut{}, err
	}
	return p.Cleaning(ctx, in.In)
}

// IronicFinalize powers the node on unless it is deployed or owned.
func (e *Executor) IronicFinalize(ctx context.Context, in IronicNodeIn) (ironic.FinalizeOut, error) {
	p, err := e.ironicPhases(in.Instance)
	if err != nil {
		return ironic.FinalizeOut{}, err
	}
	return p.Finalize(ctx, ironic.FinalizeIn{Spec: in.Spec, Seen: in.Seen})
}
