package p4info

import "strings"

// InPipeline reports whether an object named full is the object name, or the copy of it that one
// Pipeline of a program of several holds: its name under the Pipeline's prefix ("pipe_a.Ing.t"
// for "Ing.t"), as bf-p4c names a TNA program's objects per Pipeline and as the engine names
// its copies (bmv2/engine, pipelineNames). One rule for the engine, its tests and the
// P4Runtime client, which write every Pipeline's copy of a table of the program.
func InPipeline(full, name string) bool {
	if full == name {
		return true
	}
	_, rest, ok := strings.Cut(full, ".")
	return ok && rest == name
}
