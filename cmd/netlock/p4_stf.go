package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/stf"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
)

// p4stfCommand runs a p4c Simple Test Framework file against the netlock engine.
func p4stfCommand() *cobra.Command {
	var defines []string
	var tofino, verbose bool
	cmd := &cobra.Command{
		Use:   "stf FILE.p4 FILE.stf",
		Short: "Run a p4c STF test (.stf) against the v1model execution engine",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := front.Options{Defines: map[string]string{}}
			if f := cmd.Flags().Lookup("define"); f != nil {
				if v, err := cmd.Flags().GetStringArray("define"); err == nil {
					defines = append(defines, v...)
				}
			}
			for _, d := range defines {
				name, value, _ := strings.Cut(d, "=")
				if name == "" {
					return fmt.Errorf("-D %q: missing macro name", d)
				}
				opts.Defines[name] = value
			}
			checked, err := front.LoadOptions(args[0], opts)
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				return fmt.Errorf("%s: check failed", args[0])
			}
			out := cmd.OutOrStdout()
			// p4/netlock.p4 (any sizing) runs on its generated pipeline, as netlock switch runs it.
			cfg := engine.Config{TofinoConstraints: tofino, Generated: netlockPipeline}
			if verbose {
				cfg.Log = func(s string) { fmt.Fprintln(out, "log_msg:", s) }
			}
			// A deterministic clock: each reading advances one microsecond.
			now := time.Unix(0, 0)
			cfg.Now = func() time.Time { now = now.Add(time.Microsecond); return now }
			sw, err := engine.Load(checked, cfg)
			if err != nil {
				return err
			}
			f, err := os.Open(args[1])
			if err != nil {
				return err
			}
			defer f.Close()
			cmds, err := stf.Parse(f)
			if err != nil {
				return err
			}
			// The scenarios' files (p4/testdata) are written in p4/netlock.p4's terms; the TNA
			// program (known by its level-1 queue register) runs them adapted as the tests do.
			if _, err := sw.Register(dataplane.RegisterQueueHigh); err == nil && checked.Arch() == front.ArchTNA {
				cmds = dpengine.ScenarioSTF(dataplane.TNA.Name, cmds)
			}
			res, err := stf.Run(sw, cmds)
			if err != nil {
				return err
			}
			if verbose {
				for _, l := range res.Log {
					fmt.Fprintln(out, l)
				}
			}
			for _, m := range res.Failures {
				fmt.Fprintln(out, "FAIL", m)
			}
			if !res.Passed() {
				return fmt.Errorf("%s: %d check(s) failed", args[1], len(res.Failures))
			}
			fmt.Fprintf(out, "PASS %s: %d packets in, %d out\n", args[1], res.Packets, res.Received)
			return nil
		},
	}
	cmd.Flags().BoolVar(&tofino, "tofino", false, "Tofino-constraint mode: a pass touching one register array twice is an error")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print log_msg output and register/counter reads")
	return cmd
}

func init() {
	// p4.go declares the parent "p4" command inside its init function; files are initialized
	// in name order (p4.go before p4_stf.go), so it is already registered on rootCmd here.
	for _, c := range rootCmd.Commands() {
		if c.Name() == "p4" {
			c.AddCommand(p4stfCommand())
			return
		}
	}
	c := p4stfCommand()
	c.Use = "p4stf FILE.p4 FILE.stf"
	addCommand(c)
}
