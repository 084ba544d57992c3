// Command netlock is the single netlock binary: lock server, demo, benchmarks, P4 tools and the
// software switch, each a subcommand. Every subcommand lives in its own file and registers itself
// with addCommand from an init function.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/controlplane/controller"
	"github.com/netlock-go/netlock/internal/config"
	"github.com/netlock-go/netlock/lockserver/serverconfig"
)

var rootCmd = &cobra.Command{
	Use:           "netlock",
	Short:         "netlock: a switch-accelerated lock manager (NetLock) in Go",
	SilenceUsage:  true,
	SilenceErrors: true,
	// Only netlock server reads configuration from NETLOCK_ variables; every command refuses a
	// NETLOCK_ variable that no command knows (a typo would otherwise be ignored silently).
	PersistentPreRunE: func(*cobra.Command, []string) error { return checkEnv(os.Environ()) },
}

// init makes every command's key variables known to every command's configuration (one shell
// may export the server's and the controller's): config.Load then refuses only NETLOCK_
// variables that no netlock command knows.
func init() {
	for _, s := range []*config.Schema{serverconfig.ConfigSchema(), controller.ConfigSchema()} {
		config.OtherEnv = append(config.OtherEnv, s.EnvNames()...)
	}
}

// checkEnv refuses a NETLOCK_ variable of environ that no netlock command knows: neither a
// configuration key's (of any command) nor one of config.OtherEnv.
func checkEnv(environ []string) error {
	s := config.Schema{EnvPrefix: "NETLOCK"}
	return s.CheckEnv(environ, config.OtherEnv...)
}

// addCommand registers a subcommand; called from init functions of the files in this package.
func addCommand(c *cobra.Command) { rootCmd.AddCommand(c) }

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "netlock:", err)
		os.Exit(1)
	}
}

// writeJSON prints v as indented JSON, the --json output of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
