package front

import (
	"fmt"
	"strings"
)

// Pos is a position in an original source file (before preprocessing). Line and Col are 1-based.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	if p.File == "" && p.Line == 0 {
		return "<unknown>"
	}
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Error is one diagnostic with the position it refers to.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList is a list of diagnostics, in the order they were found. It implements error.
type ErrorList []*Error

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns nil for an empty list and the list otherwise.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// unsupported builds the error for a construct outside the netlock subset.
func unsupported(pos Pos, what string, args ...any) *Error {
	return &Error{Pos: pos, Msg: "not supported by the netlock target: " + fmt.Sprintf(what, args...)}
}
