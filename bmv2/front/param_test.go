package front

import (
	"fmt"
	"io/fs"
	"testing"
)

// TestParamLiterals: the literals of a macro -D may set (given with -D, or defined under an
// #ifndef of its own name) carry the macro's name in every expansion (IntLit.Param); those of
// any other macro (one under another name's #ifndef, in an #else, unguarded, function-like),
// and literals written in the program, do not.
func TestParamLiterals(t *testing.T) {
	const src = `#include <core.p4>
#ifndef SIZE
#define SIZE 16
#endif
#ifndef OTHER
#define UNRELATED 3
#endif
#ifndef ALT
#define ALT 13
#else
#undef ALT
#define ALT 4
#endif
#define FIXED 5
#define TWICE(x) (x + 7)
#ifndef NODEF
#define NODEF 6
#endif
const bit<32> a = SIZE;
const bit<32> b = SIZE + 2;
const bit<32> c = UNRELATED;
const bit<32> d = FIXED;
const bit<32> e = TWICE(8);
const bit<32> f = 9;
const bit<32> g = FROMD;
const bit<32> h = NODEF;
const bit<32> i = ALT;
`
	read := func(p string) ([]byte, error) {
		if p == "p.p4" {
			return []byte(src), nil
		}
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	c, err := LoadOptions("p.p4", Options{ReadFile: read, Defines: map[string]string{"FROMD": "11", "NODEF": "12", "ALT": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	// The literals of each constant, in order: their Param.
	want := map[string][]string{
		"a": {"SIZE"}, "b": {"SIZE", ""}, "c": {""}, "d": {""}, "e": {"", ""}, "f": {""}, "g": {"FROMD"}, "h": {"NODEF"}, "i": {""},
	}
	seen := 0
	for _, d := range c.Program.Decls {
		cd, ok := d.(*ConstDecl)
		if !ok {
			continue
		}
		var got []string
		walkExpr(cd.Value, func(e Expr) {
			if x, ok := e.(*IntExpr); ok {
				got = append(got, x.Lit.Param)
			}
		})
		if fmt.Sprint(got) != fmt.Sprint(want[cd.Name]) {
			t.Errorf("const %s: literals' params %q, want %q", cd.Name, got, want[cd.Name])
		}
		seen++
	}
	if seen != len(want) {
		t.Fatalf("%d constants checked, want %d", seen, len(want))
	}
	// A file that defines a parameter and includes the program (a P4Runtime bundle's main
	// file) sets it as -D would: the program's #ifndef finds it defined. A macro it defines
	// that the program does not test stays plain.
	inc := map[string]string{
		"main.p4": "#define SIZE 32\n#define PLAIN 5\nconst bit<32> early = SIZE;\n#include \"prog.p4\"\n",
		"prog.p4": "#include <core.p4>\n#ifndef SIZE\n#define SIZE 16\n#endif\nconst bit<32> late = SIZE;\nconst bit<32> plain = PLAIN;\n",
	}
	readInc := func(p string) ([]byte, error) {
		if src, ok := inc[p]; ok {
			return []byte(src), nil
		}
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	ci, err := LoadOptions("main.p4", Options{ReadFile: readInc})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range ci.Program.Decls {
		if cd, ok := d.(*ConstDecl); ok {
			got[cd.Name] = cd.Value.(*IntExpr).Lit.Param
		}
	}
	if want := map[string]string{"early": "SIZE", "late": "SIZE", "plain": ""}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parameters set by an including file: %v, want %v", got, want)
	}
	// Every use of a parameter shares its literal.
	var lits []*IntLit
	Inspect(c.Program, func(e Expr) {
		if x, ok := e.(*IntExpr); ok && x.Lit.Param == "SIZE" {
			lits = append(lits, x.Lit)
		}
	})
	if len(lits) != 2 || lits[0] != lits[1] {
		t.Errorf("the uses of SIZE: %d literals, shared %v", len(lits), len(lits) == 2 && lits[0] == lits[1])
	}
}
