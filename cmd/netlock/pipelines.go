//go:build !netlock_nogen

package main

// The generated pipelines of p4/netlock.p4 (engine.Config.Pipeline auto runs a program that
// matches one of them as compiled Go). Build with -tags netlock_nogen to leave them out: the
// generator itself (netlock p4 gen-go, make gen) is built that way, so a stale or broken
// generated package never stops it from regenerating the package.
import _ "github.com/netlock-go/netlock/p4/netlockgen"
