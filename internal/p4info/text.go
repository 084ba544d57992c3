package p4info

import "regexp"

var (
	emptyMsg    = regexp.MustCompile(`(?m)^(\s*)([A-Za-z_][A-Za-z0-9_]*):?\s*\{\}$`)
	msgField    = regexp.MustCompile(`(?m)^(\s*[A-Za-z_][A-Za-z0-9_]*):\s*\{$`)
	scalarField = regexp.MustCompile(`(?m)^(\s*[A-Za-z_][A-Za-z0-9_]*):\s+`)
)

// NormalizeText gives prototext output the stable layout p4c writes ("name {" and "key:
// value"); the protobuf library deliberately varies the spacing between builds.
func NormalizeText(s string) string {
	s = emptyMsg.ReplaceAllString(s, "$1$2 {\n$1}")
	s = msgField.ReplaceAllString(s, "$1 {")
	return scalarField.ReplaceAllString(s, "$1: ")
}
