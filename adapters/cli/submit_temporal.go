package cli

import (
	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
)

// temporalSubmit is what a command that submits its runs to Temporal
// ('enroll --temporal', 'retire --temporal') opens: the config, the
// systems a submission reads (NetBox and the site's gates; the phases run
// on the workers, so nothing else is connected here) and a submitter on
// the dialled client with its task queue, NetBox and log set.
type temporalSubmit struct {
	cfg *wiring.Config
	ws  *wiring.Systems
	sub *temporal.Submitter
}

// openTemporalSubmit opens a temporalSubmit from --config and the
// --temporal flags; an invalid config is a usage error. The func it
// returns closes the client, then the systems.
func (a *app) openTemporalSubmit(cmd *cobra.Command, config string, t temporalFlags) (*temporalSubmit, func(), error) {
	log, cfg, err := a.loggerAndConfig(cmd, config)
	if err != nil {
		return nil, nil, err
	}
	ctx := cmd.Context()
	ws, err := a.openWiringWith(ctx, cfg, wiring.Options{Log: log, SubmitOnly: true})
	if err != nil {
		return nil, nil, err
	}
	c, err := temporal.Dial(ctx, t.address, t.namespace, log)
	if err != nil {
		_ = ws.Close()
		return nil, nil, err
	}
	s := &temporalSubmit{cfg: cfg, ws: ws,
		sub: &temporal.Submitter{Client: c, TaskQueue: t.queue, NetBox: ws.NetBox, Log: log}}
	return s, func() { c.Close(); _ = ws.Close() }, nil
}
