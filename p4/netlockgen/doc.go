// Package netlockgen holds p4/netlock.p4 compiled to Go by the engine's Go backend
// (engine.GenerateGo, netlock p4 gen-go): one pipeline per sizing the repository uses (the
// program as written, the tests' and the benchmark's -D sizes; a sizing is part of the
// program, so of its fingerprint). Each registers itself with the engine in init; a binary
// that imports this package runs p4/netlock.p4 with a matching sizing on the generated
// pipeline (engine.Config.Pipeline auto or gen), anything else on the interpreter.
//
// The files are generated: run `make gen` (or `go generate ./p4/netlockgen`) after changing
// p4/netlock.p4 or the generator; TestGeneratedUpToDate fails when they are stale.
package netlockgen
