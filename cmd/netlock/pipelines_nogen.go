//go:build netlock_nogen

package main

import "github.com/netlock-go/netlock/bmv2/engine"

// netlockPipeline names no generated pipeline in a binary built with -tags netlock_nogen (the
// generator's own build, see pipelines.go): p4/netlock.p4 runs on the interpreter.
var netlockPipeline engine.Generated
