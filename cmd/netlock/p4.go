package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/tofino"
)

func init() {
	var defines, includes []string
	options := func() (front.Options, error) {
		opts := front.Options{Defines: map[string]string{}, IncludeDirs: includes}
		for _, d := range defines {
			name, value, _ := strings.Cut(d, "=")
			if name == "" {
				return opts, fmt.Errorf("-D %q: missing macro name", d)
			}
			opts.Defines[name] = value
		}
		return opts, nil
	}
	// load checks one program for a command that needs it checked: warnings and errors go
	// to stderr.
	load := func(cmd *cobra.Command, file string) (*front.Checked, error) {
		opts, err := options()
		if err != nil {
			return nil, err
		}
		prog, err := front.LoadOptions(file, opts)
		printWarnings(cmd, prog)
		if err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), err)
			return nil, fmt.Errorf("%s: check failed", file)
		}
		return prog, nil
	}
	p4 := &cobra.Command{
		Use:   "p4",
		Short: "P4_16 tools of the netlock software target (front end, P4Info)",
	}
	p4.PersistentFlags().StringArrayVarP(&defines, "define", "D", nil, "predefine a macro, NAME or NAME=VALUE (as p4c -D)")
	p4.PersistentFlags().StringArrayVarP(&includes, "include", "I", nil, "search DIR for quoted #includes not found next to the including file (as p4c -I)")
	p4.AddCommand(&cobra.Command{
		Use:   "check FILE.p4...",
		Short: "Preprocess, parse and type-check v1model or TNA P4 programs; print errors or OK",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := options()
			if err != nil {
				return err
			}
			failed := 0
			for _, file := range args {
				prefix := ""
				if len(args) > 1 {
					prefix = file + ": "
				}
				prog, err := front.LoadOptions(file, opts)
				printWarnings(cmd, prog)
				if err != nil {
					fmt.Fprintln(cmd.OutOrStdout(), err)
					failed++
					continue
				}
				fmt.Fprintln(cmd.OutOrStdout(), prefix+"OK")
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d programs failed the check", failed, len(args))
			}
			return nil
		},
	})
	p4.AddCommand(&cobra.Command{
		Use:   "info FILE.p4",
		Short: "Print the P4Runtime P4Info (text format) of a v1model or TNA P4 program",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prog, err := load(cmd, args[0])
			if err != nil {
				return err
			}
			text, err := prog.P4InfoText()
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				return fmt.Errorf("%s: P4Info generation failed", args[0])
			}
			fmt.Fprint(cmd.OutOrStdout(), text)
			return nil
		},
	})
	var target string
	var passFlags []string
	var chain bool
	tofinoCmd := &cobra.Command{
		Use:   "tofino FILE.p4",
		Short: "Estimate a TNA program's Tofino stages, stateful ALUs, SRAM, PHV demand, super clusters and clusters of operands, each Pipeline's (not the compiler: docs/dataplane.md)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, ok := map[string]tofino.Resources{"tofino": tofino.Tofino1, "tofino2": tofino.Tofino2}[target]
			if !ok {
				return fmt.Errorf("--target %q: want tofino or tofino2", target)
			}
			prog, err := load(cmd, args[0])
			if err != nil {
				return err
			}
			ests, err := tofino.EstimatePipelines(prog, res)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			for _, est := range ests {
				if len(ests) > 1 {
					// A program of several Pipelines: each in a pipe of its own.
					fmt.Fprintf(cmd.OutOrStdout(), "pipeline %s (Switch's argument %d):\n", est.Pipeline, est.Index)
				}
				fmt.Fprint(cmd.OutOrStdout(), est.Text())
				if chain {
					fmt.Fprint(cmd.OutOrStdout(), est.ChainText())
				}
			}
			if len(passFlags) > 0 {
				passes, err := tofino.IngressPassPHV(prog, passFlags)
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				fmt.Fprint(cmd.OutOrStdout(), tofino.PassText(passes, chain))
			}
			return nil
		},
	}
	tofinoCmd.Flags().StringVar(&target, "target", "tofino", "tofino (Tofino 1) or tofino2")
	tofinoCmd.Flags().BoolVar(&chain, "chain", false, "print the critical path of the table dependency graph, a table a line")
	tofinoCmd.Flags().StringSliceVar(&passFlags, "pass-flags", nil,
		"the ingress's kinds of pass (the first Pipeline's): exclusive 1-bit variables of its apply block (FLAG), or values of one variable (VAR=N or VAR=CONST): the critical path and PHV demand of each pass (with --chain, each pass's chain)")
	p4.AddCommand(tofinoCmd)
	addCommand(p4)
}

// printWarnings writes the checker's warnings to stderr as file:line:col: warning: message.
func printWarnings(cmd *cobra.Command, prog *front.Checked) {
	if prog == nil {
		return
	}
	for _, w := range prog.Warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: warning: %s\n", w.Pos, w.Msg)
	}
}
