//go:build !netlock_nogen

package main

import "github.com/netlock-go/netlock/p4/netlockgen"

// netlockPipeline is p4/netlock.p4's generated Go pipeline (p4/netlockgen), which the switch,
// the demo's rack and the software-rack figures run the program on, whatever its sizing
// (engine.Config.Generated; --pipeline auto or gen). Build with -tags netlock_nogen to leave it
// out: the generator itself (netlock p4 gen-go, make gen) is built that way, so a stale or
// broken generated package never stops it from regenerating the package.
var netlockPipeline = netlockgen.NetlockPipeline
