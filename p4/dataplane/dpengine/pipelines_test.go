package dpengine

import (
	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/netlockgen"
)

// pipelineConfig is cfg running pipeline pl: for any but the interpreter, the generated
// pipeline of p4/netlock.p4 (p4/netlockgen), which binds to it with any sizing (with
// engine.PipelineGenerated, Load fails for a program it was not generated from, such as a
// mutant of netlock.p4).
func pipelineConfig(cfg engine.Config, pl engine.Pipeline) engine.Config {
	cfg.Pipeline = pl
	if pl != engine.PipelineInterpreted {
		cfg.Generated = netlockgen.NetlockPipeline
	}
	return cfg
}

// pipelineRun is a program and what executes it: the interpreter (in Tofino-constraint mode
// where the test asks for it), or, for p4/netlock.p4, the generated Go pipeline of
// p4/netlockgen (engine.PipelineGenerated).
type pipelineRun struct {
	name string
	prog dataplane.Program
	pl   engine.Pipeline
}

// pipelineRuns are the runs the data-plane tests are table-driven over.
var pipelineRuns = []pipelineRun{
	{dataplane.V1Model.Name, dataplane.V1Model, engine.PipelineInterpreted},
	{dataplane.V1Model.Name + "-gen", dataplane.V1Model, engine.PipelineGenerated},
	{dataplane.TNA.Name, dataplane.TNA, engine.PipelineInterpreted},
	{dataplane.TNAFold.Label(), dataplane.TNAFold, engine.PipelineInterpreted},
}
