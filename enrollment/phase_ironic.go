package enrollment

import (
	"context"
)

// StepIronicEnrol runs the Ironic phases (4-7) until they are implemented step by step.
const StepIronicEnrol = "ironic_enrol"

// IronicPhases is the Ironic side of enrollment for one Ironic instance.
type IronicPhases interface {
	Enrol(ctx context.Context, in IronicIn) (IronicOut, error)
}

// IronicIn is the Ironic phases' input.
type IronicIn struct {
	Instance string  `json:"instance"`
	Plan     Plan    `json:"plan"`
	Request  Request `json:"request"`
}

// IronicOut is where the node ended.
type IronicOut struct {
	ProvisionState string `json:"provision_state"`
}

func (e *Executor) ironicSteps() map[string]stepFn {
	return map[string]stepFn{StepIronicEnrol: bind(e.IronicEnrol)}
}

// IronicEnrol runs phases 4-7 on the routed instance.
func (e *Executor) IronicEnrol(ctx context.Context, in IronicIn) (IronicOut, error) {
	p, ok := e.Ironic[in.Instance]
	if !ok || p == nil {
		return IronicOut{}, NotImplemented.New("Ironic phases: no IronicPhases for instance %q in the executor", in.Instance)
	}
	return p.Enrol(ctx, in)
}

// ironic runs phases 4-7 from the workflow body.
func (f *flow) ironic(ctx context.Context) error {
	var out IronicOut
	err := f.run(ctx, StepIronicEnrol, IronicIn{Instance: f.instance, Plan: f.plan, Request: f.req}, &out)
	if err != nil {
		return err
	}
	f.res.ProvisionState = out.ProvisionState
	return nil
}
