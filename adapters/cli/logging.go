package cli

import (
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// logLevelFlag adds --log-level and --log-file to a command that talks to
// systems.
func logLevelFlag(cmd *cobra.Command) {
	cmd.Flags().String("log-level", "warn", "log level of the structured log: debug, info, warn, error or off")
	cmd.Flags().String("log-file", "", "append the structured log to this file instead of standard error")
	_ = cmd.MarkFlagFilename("log-file")
}

// logLevel reads --log-level.
func logLevel(cmd *cobra.Command) (slog.Level, bool, error) {
	lvl, _ := cmd.Flags().GetString("log-level")
	switch strings.ToLower(lvl) {
	case "", "warn":
		return slog.LevelWarn, true, nil
	case "debug":
		return slog.LevelDebug, true, nil
	case "info":
		return slog.LevelInfo, true, nil
	case "error":
		return slog.LevelError, true, nil
	case "off":
		return 0, false, nil
	}
	return 0, false, inputErr("--log-level %q: want debug, info, warn, error or off", lvl)
}

// logger builds the slog logger of --log-level. It writes to --log-file,
// or to the error stream — above a live progress area while one is shown,
// never into it (see logWriter).
func (a *app) logger(cmd *cobra.Command) (*slog.Logger, error) {
	l, on, err := logLevel(cmd)
	if err != nil {
		return nil, err
	}
	if !on {
		return slog.New(slog.DiscardHandler), nil
	}
	var w io.Writer = logWriter{a}
	if path, _ := cmd.Flags().GetString("log-file"); path != "" {
		f, err := a.openLogFile(path)
		if err != nil {
			return nil, err
		}
		w = a.secrets.Writer(f)
	}
	return slog.New(a.secrets.Handler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))), nil
}

// logsToFile says the command's log goes to --log-file.
func logsToFile(cmd *cobra.Command) bool {
	path, _ := cmd.Flags().GetString("log-file")
	return path != ""
}

// openLogFile opens --log-file once per command (owner-only: a log names
// hosts and addresses), closed when Run returns.
func (a *app) openLogFile(path string) (*os.File, error) {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	if a.logFile != nil {
		return a.logFile, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, inputErr("--log-file %s: %v", path, err)
	}
	a.logFile = f
	return f, nil
}

// closeLog closes --log-file.
func (a *app) closeLog() {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	if a.logFile != nil {
		_ = a.logFile.Close()
		a.logFile = nil
	}
}

// logWriter writes log lines to the error stream, above the live area
// when one is on screen (slog writes each record in one Write).
type logWriter struct{ a *app }

func (w logWriter) Write(p []byte) (int, error) {
	if l := w.a.live.Load(); l != nil {
		return l.above(w.a.streams.Err, p)
	}
	return w.a.streams.Err.Write(p)
}
