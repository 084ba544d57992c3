package dataplane

import (
	"github.com/netlock-go/netlock/bmv2/engine"
	_ "github.com/netlock-go/netlock/p4/netlockgen" // the generated pipelines of p4/netlock.p4
)

// pipelineRun is a program and what executes it: the interpreter (in Tofino-constraint mode
// where the test asks for it), or, for p4/netlock.p4, the generated Go pipeline of
// p4/netlockgen (engine.PipelineGenerated: Load fails when the package has no pipeline for the
// test's sizing).
type pipelineRun struct {
	name string
	prog Program
	pl   engine.Pipeline
}

// pipelineRuns are the runs the data-plane tests are table-driven over.
var pipelineRuns = []pipelineRun{
	{V1Model.Name, V1Model, engine.PipelineInterpreted},
	{V1Model.Name + "-gen", V1Model, engine.PipelineGenerated},
	{TNA.Name, TNA, engine.PipelineInterpreted},
}
