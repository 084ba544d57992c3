package main

import "github.com/spf13/cobra"

// benchCmd is the parent of every benchmark; each benchmark registers itself on it from the init
// function of its own file (bench_*.go).
var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Run a benchmark and print results as ratios against a reference measured in the same run",
}

func init() { addCommand(benchCmd) }
