package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is the release version; a release build sets it with
// -ldflags "-X github.com/hostforge/hostforge/adapters/cli.Version=v1.2.3".
// Otherwise the module version from the build information is used.
var Version = ""

// versionInfo is what `hostforge version` reports.
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

func buildVersion() versionInfo {
	v := versionInfo{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	return v
}

func (a *app) versionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the hostforge version",
		Example: "  hostforge version\n  hostforge version -o json",
		Args:    cobra.NoArgs,
	}
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		v := buildVersion()
		if *out == formatJSON {
			return writeJSON(cmd.OutOrStdout(), v)
		}
		line := "hostforge " + v.Version
		if v.Commit != "" {
			line += " (" + v.Commit
			if v.Modified {
				line += ", modified"
			}
			line += ")"
		}
		_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %s %s\n", line, v.GoVersion, v.Platform)
		return err
	}
	return cmd
}
