package enrolltest

import (
	"log/slog"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/verify"
)

// ironicPhases wires the Ironic phases of every fake Ironic instance the
// site has (fakes.Site.AddIronic), on the site's clock, with the per-host
// credentials from the site's vault and link state from its fake BMCs.
func ironicPhases(site *fakes.Site, log *slog.Logger) map[string]enrollment.IronicPhases {
	out := map[string]enrollment.IronicPhases{}
	for name, ir := range site.Ironic {
		out[name] = &ironic.Phases{Verifier: verify.Verifier{},
			Client:      ir,
			Credentials: ironic.VaultCredentials{Vault: site.Vault},
			Links:       site.BMCs,
			Clock:       site.Clock,
			Log:         log,
		}
	}
	return out
}
