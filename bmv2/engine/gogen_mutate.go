package engine

import (
	"fmt"
	"path"
	"strconv"

	"github.com/netlock-go/netlock/bmv2/front"
)

// GenMutation is one deliberate fault for the negative controls of the tests that compare a
// generated pipeline with the interpreter: the binary operator at a position of the program
// is replaced by another. The tests make it in the interpreter's copy of the program and run
// the generated pipeline of the unmutated one against it (nothing mutated is generated or
// built): the comparison sees the same difference whichever side carries the fault. It exists
// for tests only.
type GenMutation struct {
	// At is the operator's position, "file:line:col" with the file's base name.
	At string
	// Op is the operator found there (checked, so that a program edit that moves it is an
	// error rather than a mutation of something else); To replaces it (of the same result
	// type: a comparison for a comparison, an arithmetic operator for an arithmetic one).
	Op, To string
}

// String renders the mutation as "file:line:col op -> to".
func (m GenMutation) String() string { return m.At + " " + m.Op + " -> " + m.To }

// Apply makes the mutation in checked's syntax tree in place and returns the function that
// undoes it. The mutated tree has its own Fingerprint: load the interpreter's switch from it,
// and the generated pipeline's from a separate copy of the unmutated program.
func (m GenMutation) Apply(checked *front.Checked) (undo func(), err error) {
	var found []*front.BinaryExpr
	front.Inspect(checked.Program, func(e front.Expr) {
		if b, ok := e.(*front.BinaryExpr); ok {
			p := b.Position()
			if path.Base(p.File)+":"+strconv.Itoa(p.Line)+":"+strconv.Itoa(p.Col) == m.At {
				found = append(found, b)
			}
		}
	})
	if len(found) != 1 {
		return nil, fmt.Errorf("%w: mutation %s: %d binary expressions at %s", ErrInvalid, m, len(found), m.At)
	}
	b := found[0]
	if b.Op != m.Op {
		return nil, fmt.Errorf("%w: mutation %s: the operator at %s is %s", ErrInvalid, m, m.At, b.Op)
	}
	b.Op = m.To
	return func() { b.Op = m.Op }, nil
}
