package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
)

// p4genGoCommand compiles a v1model program to a Go package (the engine's Go backend).
func p4genGoCommand() *cobra.Command {
	var out, pkg, name, generate string
	cmd := &cobra.Command{
		Use:   "gen-go -o FILE -pkg NAME PROGRAM.p4",
		Short: "Compile a v1model P4 program to a Go pipeline package for the engine (the Go backend)",
		Long: "gen-go writes the Go source of a pipeline of the program (var <Name>Pipeline, an\n" +
			"engine.Generated): a binary that links the package and names it in engine.Config.Generated\n" +
			"runs the program's blocks as compiled Go (engine.Config.Pipeline auto or gen), with any\n" +
			"values of the program's parameters (its -D macros: the pipeline reads them when it binds;\n" +
			"-D here only sets the values the code is generated with). A construct the backend does not\n" +
			"support is an error naming file:line:col and the construct; the interpreter still runs such\n" +
			"programs.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := front.Options{Defines: map[string]string{}}
			defines, _ := cmd.Flags().GetStringArray("define")
			includes, _ := cmd.Flags().GetStringArray("include")
			opts.IncludeDirs = includes
			for _, d := range defines {
				n, v, _ := strings.Cut(d, "=")
				if n == "" {
					return fmt.Errorf("-D %q: missing macro name", d)
				}
				opts.Defines[n] = v
			}
			checked, err := front.LoadOptions(args[0], opts)
			if err != nil {
				return fmt.Errorf("%s: check failed: %w", args[0], err)
			}
			source := args[0]
			for _, d := range defines {
				source += " -D " + d
			}
			for _, i := range includes {
				source += " -I " + i
			}
			line := ""
			if generate != "" {
				// The //go:generate line: the prefix, then this command in a canonical form.
				q := func(a string) string {
					if a == "" || strings.ContainsAny(a, " \t\"'") {
						return strconv.Quote(a)
					}
					return a
				}
				words := []string{generate, "p4 gen-go --go-generate", q(generate), "--pkg", q(pkg), "--name", q(name)}
				for _, d := range defines {
					words = append(words, "-D", q(d))
				}
				for _, i := range includes {
					words = append(words, "-I", q(i))
				}
				words = append(words, "-o", q(out), q(args[0]))
				line = strings.Join(words, " ")
			}
			src, err := engine.GenerateGo(checked, engine.GenOptions{Package: pkg, Name: name, Source: source, Generate: line})
			if errors.Is(err, engine.ErrGenUnsupported) {
				return fmt.Errorf("%s: refused by the Go backend: %w", args[0], err)
			}
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = cmd.OutOrStdout().Write(src)
				return err
			}
			return os.WriteFile(out, src, 0o644)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the Go file to write (default: stdout)")
	cmd.Flags().StringVar(&pkg, "pkg", "main", "the Go package name")
	cmd.Flags().StringVar(&name, "name", "pipeline", "the pipeline's Go identifier (several pipelines may share a package)")
	cmd.Flags().StringVar(&generate, "go-generate", "", "write a //go:generate line: this command (how to run netlock from the output's directory) followed by this command line")
	return cmd
}

func init() {
	// p4.go registers the parent "p4" command in its init function (files initialize in name
	// order).
	for _, c := range rootCmd.Commands() {
		if c.Name() == "p4" {
			c.AddCommand(p4genGoCommand())
			return
		}
	}
}
