package front

import (
	"fmt"
	"strings"
	"testing"
)

// nestCase builds a program that nests one construct n levels deep.
type nestCase struct {
	name  string
	build func(n int) string
}

var nestCases = []nestCase{
	{"unary minus", func(n int) string { return "const int c = " + strings.Repeat("-", n) + "1;\n" }},
	{"casts", func(n int) string { return "const bit<8> c = " + strings.Repeat("(bit<8>)", n) + "1;\n" }},
	{"parentheses", func(n int) string {
		return "const int c = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + ";\n"
	}},
	// A left-associative chain is parsed by a loop, not recursion; its tree is n deep all the same.
	{"operator chain", func(n int) string { return "const int c = 1" + strings.Repeat(" + 1", n) + ";\n" }},
	{"member chain", func(n int) string { return "const int c = a" + strings.Repeat(".b", n) + ";\n" }},
	{"call chain", func(n int) string { return "const int c = f" + strings.Repeat("()", n) + ";\n" }},
	{"ternaries", func(n int) string {
		return "const int c = " + strings.Repeat("true ? 1 : ", n) + "1;\n"
	}},
	{"list expressions", func(n int) string {
		return "const int c = " + strings.Repeat("{", n) + "1" + strings.Repeat("}", n) + ";\n"
	}},
	{"blocks", func(n int) string {
		return "action a() " + strings.Repeat("{", n) + strings.Repeat("}", n) + "\n"
	}},
	{"else-if chain", func(n int) string {
		return "action a() { " + strings.Repeat("if (true) {} else ", n) + "{} }\n"
	}},
	{"tuple types", func(n int) string {
		return "typedef " + strings.Repeat("tuple<", n) + "bit<8>" + strings.Repeat(">", n) + " t;\n"
	}},
	{"#if expression", func(n int) string { return "#if " + strings.Repeat("!", n) + "0\n#endif\n" }},
	{"macro expansion", func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "#define M%d M%d\n", i, i+1)
		}
		b.WriteString("const int c = M0;\n")
		return b.String()
	}},
}

// parseNested preprocesses and parses src with the nesting bound max.
func parseNested(src string, max int) error {
	opts := Options{MaxNesting: max, ReadFile: func(p string) ([]byte, error) {
		if p == "n.p4" {
			return []byte(src), nil
		}
		return nil, errNotFound(p)
	}}
	toks, errs := PreprocessWith("n.p4", opts)
	if len(errs) > 0 {
		return errs
	}
	_, err := ParseWith(toks, opts)
	return err
}

// TestNestingBound: every construct that nests is accepted at half the bound and rejected, with
// the nesting error at the place it passes the bound, one level past it and 100,000 levels
// past it (before the bound existed, 500,000 unary minuses overflowed the engine's stack:
// issue 18, item 5).
func TestNestingBound(t *testing.T) {
	const max = 40
	for _, tc := range nestCases {
		if err := parseNested(tc.build(max/2), max); err != nil {
			t.Errorf("%s, %d levels: %v", tc.name, max/2, err)
		}
		for _, n := range []int{max + 1, 100_000} {
			if tc.name == "macro expansion" && n > max+1 {
				continue // 100,000 #defines is a large file, not a deep one
			}
			err := parseNested(tc.build(n), max)
			if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
				t.Errorf("%s, %d levels: got %v, want a nesting error", tc.name, n, err)
				continue
			}
			if !strings.HasPrefix(err.Error(), "n.p4:") {
				t.Errorf("%s: the error has no position: %v", tc.name, err)
			}
		}
	}
}

// TestNestingDefault: the default bound (Options.MaxNesting 0) is DefaultMaxNesting, and a
// program at it parses and checks.
func TestNestingDefault(t *testing.T) {
	src := "const int c = " + strings.Repeat("-", DefaultMaxNesting-2) + "1;\n"
	if err := parseNested(src, 0); err != nil {
		t.Fatalf("%d unary minuses: %v", DefaultMaxNesting-2, err)
	}
	toks, errs := PreprocessSource("n.p4", src, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	prog, err := Parse(toks)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(prog); err != nil {
		t.Fatal(err)
	}
	src = "const int c = " + strings.Repeat("-", DefaultMaxNesting+1) + "1;\n"
	if err := parseNested(src, 0); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d levels", DefaultMaxNesting)) {
		t.Fatalf("%d unary minuses: got %v, want the default bound's error", DefaultMaxNesting+1, err)
	}
}

// TestNestingRepositoryPrograms: the repository's programs nest well within the default bound
// (a quarter of it: p4/tna/netlock.p4's decisions are one if-else chain of some thirty
// branches, each `else if` a level). Only the bound's error counts here: p4/tna/netlock.p4
// breaks a Tofino rule (TestTNAStatefulALUNetlock).
func TestNestingRepositoryPrograms(t *testing.T) {
	for _, f := range []string{"../../p4/netlock.p4", "../../p4/tna/netlock.p4", "testdata/accept/features.p4"} {
		_, err := LoadOptions(f, Options{MaxNesting: DefaultMaxNesting / 4})
		if err != nil && strings.Contains(err.Error(), errNesting) {
			t.Errorf("%s at a nesting bound of %d: %v", f, DefaultMaxNesting/4, err)
		}
	}
}

// TestConstantWidthBound: constant folding refuses values wider than maxConstBits instead of
// computing them (every multiplication can double the width: the twenty below would take 2^37
// bits), and still folds values up to that width.
func TestConstantWidthBound(t *testing.T) {
	a := "const int a = 1 << 2000;\nconst int b = a" + strings.Repeat(" * a", 63) + ";\n" // 128,001 bits
	if err := parseAndCheck(a); err != nil {
		t.Fatalf("a constant of 128,001 bits: %v", err)
	}
	err := parseAndCheck(a + "const int c = b" + strings.Repeat(" * b", 19) + ";\n")
	if err == nil || !strings.Contains(err.Error(), "n.p4:3:") {
		t.Fatalf("got %v, want an error at the constant too wide (line 3)", err)
	}
}

func parseAndCheck(src string) error {
	toks, errs := PreprocessSource("n.p4", src, nil)
	if len(errs) > 0 {
		return errs
	}
	prog, err := Parse(toks)
	if err != nil {
		return err
	}
	_, err = Check(prog)
	return err
}

// TestCheckerNestingBound: a tree built without the parser (which bounds nesting) is still
// bounded by the checker: a million nested unary minuses are refused, not a stack overflow; one
// within the bound checks.
func TestCheckerNestingBound(t *testing.T) {
	build := func(n int) *Program {
		var e Expr = &IntExpr{Lit: &IntLit{Value: bigInt(1)}}
		for i := 0; i < n; i++ {
			e = &UnaryExpr{Op: "-", X: e}
		}
		return &Program{File: "built", MaxNesting: 100, Decls: []Decl{&ConstDecl{Name: "c", Type: &BaseTypeRef{Kind: "int"}, Value: e}}}
	}
	if _, err := Check(build(150)); err != nil {
		t.Fatalf("150 levels under a bound of 2 x 100: %v", err)
	}
	_, err := Check(build(1_000_000))
	if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Fatalf("a million levels: got %v, want the nesting error", err)
	}
}
