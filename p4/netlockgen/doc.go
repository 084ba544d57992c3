// Package netlockgen holds p4/netlock.p4 compiled to Go by the engine's Go backend
// (engine.GenerateGo, netlock p4 gen-go): one pipeline, NetlockPipeline, that runs the
// program with any sizing. The sizing is the program's parameters (its -D values: locks, pool
// part bits, tenant meters, ended cells, CPU port; p4/dataplane.Sizing): the pipeline's Bind
// reads their values from the switch it binds to (engine.Switch.GenConst), and its fingerprint
// covers the program without them. A binary that links the package runs p4/netlock.p4 on it
// by naming it: engine.Config{Generated: netlockgen.NetlockPipeline} (with
// engine.PipelineAuto, a program it was not generated from runs on the interpreter; with
// engine.PipelineGenerated, Load fails).
//
// The file is generated: run `make gen` (or `go generate ./p4/netlockgen`) after changing
// p4/netlock.p4 or the generator; TestGeneratedUpToDate fails when it is stale.
package netlockgen
