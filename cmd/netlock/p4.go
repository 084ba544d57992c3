package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/bmv2/front"
)

func init() {
	p4 := &cobra.Command{
		Use:   "p4",
		Short: "P4_16 tools of the netlock software target (front end, P4Info)",
	}
	p4.AddCommand(&cobra.Command{
		Use:   "check FILE.p4",
		Short: "Preprocess, parse and type-check a v1model P4 program; print errors or OK",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := front.Load(args[0]); err != nil {
				fmt.Fprintln(cmd.OutOrStdout(), err)
				return fmt.Errorf("%s: check failed", args[0])
			}
			fmt.Fprintln(cmd.OutOrStdout(), "OK")
			return nil
		},
	})
	p4.AddCommand(&cobra.Command{
		Use:   "info FILE.p4",
		Short: "Print the P4Runtime P4Info (text format) of a v1model P4 program",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prog, err := front.Load(args[0])
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				return fmt.Errorf("%s: check failed", args[0])
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
	addCommand(p4)
}
