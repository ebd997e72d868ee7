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

// develVersion is what the go command records for a build of the main
// module from its source tree.
const develVersion = "(devel)"

// versionInfo is what `hostforge version` reports.
type versionInfo struct {
	Version string `json:"version"`
	// Commit and CommitTime are the VCS revision and its time, recorded
	// by the go command when it builds in a git clone (-buildvcs).
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	GoVersion  string `json:"go_version"`
	Platform   string `json:"platform"`
}

func buildVersion() versionInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionFrom(Version, bi)
}

// versionFrom reads the version from the release version, else the module
// version (a 'go install module@version' build), and the VCS revision and
// time the go command stamped.
func versionFrom(release string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: release, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				v.CommitTime = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = develVersion
	}
	return v
}

// line is the text form: the version, and the commit when there is one.
func (v versionInfo) line() string {
	s := "hostforge " + v.Version
	switch {
	case v.Commit != "":
		s += " (commit " + v.Commit
		if v.CommitTime != "" {
			s += " of " + v.CommitTime
		}
		if v.Modified {
			s += ", with uncommitted changes"
		}
		s += ")"
	case v.Version == develVersion:
		s += " (no version or commit recorded: build from a git clone with 'go install -buildvcs=true ./cmd/hostforge', or install a tagged release)"
	}
	return s + " " + v.GoVersion + " " + v.Platform
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
		_, err := fmt.Fprintln(cmd.OutOrStdout(), v.line())
		return err
	}
	return cmd
}
