package front

import (
	"math/big"
	"os"
	"strings"
	"testing"
)

func TestLexLiterals(t *testing.T) {
	tests := []struct {
		src    string
		value  string
		width  int
		signed bool
		sized  bool
	}{
		{"42", "42", 0, false, false},
		{"8w0x1", "1", 8, false, true},
		{"16s5", "5", 16, true, true},
		{"0b1010_1010", "170", 0, false, false},
		{"0o17", "15", 0, false, false},
		{"0xFF_FF", "65535", 0, false, false},
		{"32w0xFFFF_FFFF", "4294967295", 32, false, true},
		{"4w0b1111", "15", 4, false, true},
		{"0d99", "99", 0, false, false},
		{"128w0x1_0000_0000_0000_0000", "18446744073709551616", 128, false, true},
	}
	for _, tc := range tests {
		var errs ErrorList
		toks := lexLine(tc.src, "t.p4", 1, &errs)
		if len(errs) > 0 || len(toks) != 1 || toks[0].Kind != TInt {
			t.Errorf("%s: tokens %v errors %v", tc.src, toks, errs)
			continue
		}
		l := toks[0].Lit
		if l.Value.String() != tc.value || l.Width != tc.width || l.Signed != tc.signed || l.HasWidth != tc.sized {
			t.Errorf("%s: got value %s width %d signed %v sized %v", tc.src, l.Value, l.Width, l.Signed, l.HasWidth)
		}
	}
	for _, bad := range []string{"0x", "8w0xZZ", "1s1", "0b102"} {
		var errs ErrorList
		lexLine(bad, "t.p4", 1, &errs)
		if len(errs) == 0 {
			t.Errorf("%s: accepted an invalid literal", bad)
		}
	}
}

func TestLexOperators(t *testing.T) {
	var errs ErrorList
	toks := lexLine("a |+| b |-| c &&& d .. e ++ f >> g != h", "t.p4", 1, &errs)
	var got []string
	for _, tk := range toks {
		got = append(got, tk.Text)
	}
	want := "a |+| b |-| c &&& d .. e ++ f > > g != h"
	if strings.Join(got, " ") != want || len(errs) > 0 {
		t.Errorf("got %q (errors %v), want %q", strings.Join(got, " "), errs, want)
	}
}

func TestPreprocessor(t *testing.T) {
	files := map[string]string{
		"lib/inc.p4": "const bit<8> FROM_INC = WIDTH;\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, errNotFound(p)
	}
	src := `#define WIDTH 8
#define ON
#ifdef ON
a
#else
b
#endif
#ifndef ON
c
#elif defined(WIDTH) && WIDTH >= 8
d
#else
e
#endif
#if !defined ON || 0
f
#endif
#undef ON
#ifdef ON
g
#endif
/* a comment
spanning lines */ h // trailing
#include "inc.p4"
`
	toks, errs := PreprocessSource("lib/main.p4", src, read)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	var got []string
	for _, tk := range toks {
		if tk.Kind != TEOF {
			got = append(got, tk.Text+"@"+tk.Pos.String())
		}
	}
	want := []string{
		"a@lib/main.p4:4:1", "d@lib/main.p4:11:1", "h@lib/main.p4:23:19",
		"const@lib/inc.p4:1:1", "bit@lib/inc.p4:1:7", "<@lib/inc.p4:1:10", "8@lib/inc.p4:1:11", ">@lib/inc.p4:1:12",
		"FROM_INC@lib/inc.p4:1:14", "=@lib/inc.p4:1:23", "8@lib/inc.p4:1:25", ";@lib/inc.p4:1:30",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

type errNotFound string

func (e errNotFound) Error() string { return string(e) + ": not found" }

// wrapProgram puts a control body around apply-block statements.
func wrapProgram(decls, body string) string {
	return `#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; bit<32> c; int<8> s; bool ok; }
struct H { h_t h; h_t[2] st; }
struct M { bit<32> x; }
enum bit<8> E { A = 1, B = 2 }
parser P(packet_in p, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
` + decls + `
    apply {
` + body + `
    }
}
control Eg(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out p, in H hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;
`
}

func checkSource(src string) error {
	toks, errs := PreprocessSource("t.p4", src, nil)
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

func TestTypeRules(t *testing.T) {
	tests := []struct {
		name, decls, body string
		wantErr           string // "" means the program must be accepted
	}{
		{"literal adapts", "", "hdr.h.a = 255; hdr.h.c = hdr.h.c + 1;", ""},
		{"cast widens", "", "hdr.h.c = (bit<32>)hdr.h.a;", ""},
		{"no implicit widening", "", "hdr.h.c = hdr.h.a;", "cannot use a value of type bit<8> where bit<32>"},
		{"no implicit narrowing", "", "hdr.h.a = hdr.h.b;", "bit<16> where bit<8>"},
		{"compare widths", "", "if (hdr.h.a == hdr.h.b) { }", "cannot compare bit<8> with bit<16>"},
		{"bool condition", "", "if (hdr.h.a) { }", "if condition must be bool"},
		{"bool is not bit", "", "hdr.h.a = hdr.h.ok;", "bool where bit<8>"},
		{"logical needs bool", "", "if (hdr.h.ok && hdr.h.a == 1) { }", ""},
		{"logical on bits", "", "if (hdr.h.ok && hdr.h.a) { }", "needs bool operands"},
		{"concat width", "", "hdr.h.b = hdr.h.a ++ hdr.h.a;", ""},
		{"concat wrong width", "", "hdr.h.c = hdr.h.a ++ hdr.h.a;", "bit<16> where bit<32>"},
		{"slice", "", "hdr.h.a = hdr.h.c[31:24];", ""},
		{"slice width", "", "hdr.h.a = hdr.h.c[15:0];", "bit<16> where bit<8>"},
		{"saturating", "", "hdr.h.a = hdr.h.a |+| 200; hdr.h.a = hdr.h.a |-| hdr.h.a;", ""},
		{"shift by bits", "", "hdr.h.c = hdr.h.c << hdr.h.a;", ""},
		{"shift by signed", "", "hdr.h.c = hdr.h.c << hdr.h.s;", "shift amount must be unsigned"},
		{"signed arith", "", "hdr.h.s = hdr.h.s - 1;", ""},
		{"sign mismatch", "", "hdr.h.s = hdr.h.a;", "bit<8> where int<8>"},
		{"ternary", "", "hdr.h.a = hdr.h.ok ? hdr.h.a : 8w3;", ""},
		{"ternary types", "", "hdr.h.a = hdr.h.ok ? hdr.h.a : hdr.h.b;", "different types"},
		{"enum compare", "", "if (hdr.h.a == (bit<8>)E.A) { }", ""},
		{"enum to underlying", "", "hdr.h.a = E.B;", ""},
		{"int to enum needs cast", "", "E e = 1;", "where enum E is expected"},
		{"stack index", "", "hdr.st[1].a = 1;", ""},
		{"stack out of bounds", "", "hdr.st[2].a = 1;", "out of bounds"},
		{"struct init", "", "h_t x = { 1, 2, 3, -1, true }; hdr.h = x;", ""},
		{"struct init count", "", "h_t x = { 1, 2 };", "has 5 fields but the list has 2"},
		{"struct expression", "", "M mm = { x = 5 }; m = mm;", ""},
		{"struct expression missing", "", "M mm = { };", "has 1 fields but the list has 0"},
		{"undeclared field", "", "hdr.h.zz = 1;", "has no field zz"},
		{"field suggestion", "", "hdr.h.okk = true;", "has no field okk; did you mean ok?"},
		{"name suggestion", "", "hdr.h.a = hdr.h.a + m.x[7:0]; hdrs.h.a = 1;", "hdrs: undeclared name; did you mean hdr?"},
		{"assign to const", "const bit<8> K = 3;", "K = 4;", "K is a constant"},
		{"const folding width", "const bit<32> W = 4; const bit<32> W2 = W * 2;", "bit<(W2)> v = hdr.h.a;", ""},
		{"header methods", "", "hdr.h.setValid(); if (!hdr.h.isValid()) { hdr.h.setInvalid(); }", ""},
		{"setValid on struct", "", "m.setValid();", "has no field setValid"},
		{"action directionless from control", "action a(bit<8> v) { hdr.h.a = v; }", "a(3);", ""},
		{"action argument count", "action a(bit<8> v) { hdr.h.a = v; }", "a();", "expects 1 arguments"},
		{"extern overload", "", "mark_to_drop(sm);", ""},
		{"extern arg width", "register<bit<8>>(4) r;", "r.write(0, hdr.h.b);", "bit<16> where bit<8>"},
		{"hash inference", "", "hash(m.x, HashAlgorithm.crc32, 32w0, { hdr.h.a, hdr.h.b }, 32w1024);", ""},
		{"hash untyped base", "", "hash(m.x, HashAlgorithm.crc32, 0, { hdr.h.a }, 32w1024);", "cannot infer a width"},
		{"random", "", "random(hdr.h.a, 0, 255);", ""},
		{"digest", "", "digest(1, { hdr.h.a });", ""},
		{"verify in control", "", "verify(true, error.NoError);", "verify can only be called from a parser"},
		{"exit and return", "", "if (hdr.h.ok) { exit; } return;", ""},
		{"switch on value", "", "switch (hdr.h.a) { 1: { } 2: 3: { } default: { } }", ""},
		{"switch duplicate label", "", "switch (hdr.h.a) { 1: { } 1: { } }", "duplicate switch label"},
		{"compound assign", "", "hdr.h.a += 1; hdr.h.c <<= 2; hdr.h.c >>= hdr.h.a; hdr.h.a |+|= 7; hdr.h.b ^= hdr.h.b;", ""},
		{"compound assign width", "", "hdr.h.a += hdr.h.b;", "operands have different types bit<8> and bit<16>"},
		{"compound assign to in", "action a(in bit<8> v) { v += 1; }", "a(1);", "read-only"},
		{"int variable", "", "int x = 1;", "variables of type int must be const"},
		{"shadowing parameter", "", "bit<8> hdr = 1;", "shadows a parameter"},
		{"recursive action", "action a() { a(); }", "a();", "recursion is not allowed"},
		{"inferred type arguments", "", "hdr.h.setValid();", ""},
		{"enum compares with underlying", "", "if (hdr.h.a == E.A) { }", ""},
		{"enum does not compare with other widths", "", "if (hdr.h.b == E.A) { }", "cannot compare"},
		{"signed constant shift", "", "hdr.h.c = hdr.h.c << 8s3;", ""},
		{"signed negative shift", "", "hdr.h.c = hdr.h.c << -8s3;", "shift amount must be unsigned"},
		{"dont care for in", "", "digest(_, { hdr.h.a });", "for out parameters"},
		{"dont care for inout", "", "mark_to_drop(_);", "for out parameters"},
		{"dont care for out", "register<bit<8>>(4) r;", "r.read(_, 0);", ""},
		{"table applied in a local initializer", "table t0 { actions = { NoAction; } } bool b = t0.apply().hit;", "", "can only be applied from a control's apply block"},
		{"table applied in apply block", "table t0 { actions = { NoAction; } }", "bool b = t0.apply().hit; if (t0.apply().miss) { }", ""},
		{"table may reuse a parameter name", "table m { actions = { NoAction; } }", "m.apply();", ""},
		{"named and default arguments", "action a(in bit<8> x, in bit<8> y = 3) { hdr.h.a = x + y; }", "a(y = 1, x = 2); a(4);", ""},
		{"missing argument", "action a(in bit<8> x, in bit<8> y = 3) { hdr.h.a = x + y; }", "a(y = 1);", "missing argument for parameter x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkSource(wrapProgram(tc.decls, tc.body))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("accepted, want error containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestConstFolding(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"8w255 + 8w1", "0"},
		{"8w3 - 8w5", "254"},
		{"4s7 + 4s1", "-8"},
		{"8w200 |+| 8w100", "255"},
		{"8w5 |-| 8w10", "0"},
		{"8w0x0f ++ 4w0x1", "241"},
		{"(8w1 << 3) | 8w1", "9"},
		{"16w0xABCD[15:8]", "171"},
		{"(bit<4>)8w0xff", "15"},
		{"~8w0", "255"},
		{"10 / 3 + 10 % 3", "4"},
		{"-(8w1)", "255"},
		{"(int<8>)8w255", "-1"},
		{"(bit<8>)E.B ++ 8w1", "513"},
		{"E.B ++ 8w1", "513"},
	}
	for _, tc := range tests {
		// Compare the expression with itself in a condition: both sides fold, and so does ==.
		src := "#include <core.p4>\nenum bit<8> E { A = 1, B = 2 }\n"
		full := src + "control C() { apply { if (" + tc.expr + " == " + tc.expr + ") { } } }\n"
		toks, errs := PreprocessSource("c.p4", full, nil)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		prog, err := Parse(toks)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		chk, err := Check(prog)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		var ctl *ControlDecl
		for _, d := range prog.Decls {
			if c, ok := d.(*ControlDecl); ok && c.Name == "C" {
				ctl = c
			}
		}
		cond := ctl.Body.Stmts[0].(*IfStmt).Cond.(*BinaryExpr)
		v, ok := chk.Const[cond.X].(*big.Int)
		if !ok {
			t.Errorf("%s: not folded (got %v)", tc.expr, chk.Const[cond.X])
			continue
		}
		if v.String() != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, v, tc.want)
		}
		if b, ok := chk.Const[cond].(bool); !ok || !b {
			t.Errorf("%s == itself did not fold to true", tc.expr)
		}
	}
}

// TestIDs checks the p4c id scheme against ids p4c generated for basic_routing-bmv2.p4.
func TestIDs(t *testing.T) {
	tests := []struct {
		prefix uint32
		name   string
		want   uint32
	}{
		{prefixTable, "ingress.bd", 48392551},
		{prefixTable, "ingress.ipv4_fib", 41084491},
		{prefixAction, "NoAction", 21257015},
		{prefixDirectCounter, "ingress.c", 330698586},
	}
	for _, tc := range tests {
		st := &symtab{byKey: map[string]*symbol{}, assigned: map[uint32]bool{}}
		s := st.add(tc.prefix, tc.name, nil, Pos{}, tc.name)
		if errs := st.assignIDs(); len(errs) > 0 {
			t.Fatal(errs)
		}
		if s.id != tc.want {
			t.Errorf("%s: id %d, want %d", tc.name, s.id, tc.want)
		}
	}
	// Controller headers are named by the annotation but hashed by the header type's name.
	st := &symtab{byKey: map[string]*symbol{}, assigned: map[uint32]bool{}}
	s := st.add(prefixControllerHeader, "packet_out", nil, Pos{}, "h")
	s.hashName = "packet_out_header_t"
	if errs := st.assignIDs(); len(errs) > 0 || s.id != 76689799 {
		t.Errorf("controller header id %d (%v), want 76689799", s.id, errs)
	}
	// @id overrides the hash and gets the prefix; a clash probes onward.
	st = &symtab{byKey: map[string]*symbol{}, assigned: map[uint32]bool{}}
	user := st.add(prefixTable, "a", Annotations{{Name: "id", Exprs: []Expr{&IntExpr{Lit: &IntLit{Value: big.NewInt(int64(JenkinsOneAtATime("b") & 0xffffff))}}}}}, Pos{}, "a")
	hashed := st.add(prefixTable, "b", nil, Pos{}, "b")
	if errs := st.assignIDs(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if user.id != prefixTable<<24|JenkinsOneAtATime("b")&0xffffff || hashed.id != user.id+1 {
		t.Errorf("ids %#x %#x: want the @id value and the next free id", user.id, hashed.id)
	}
}

func TestAliases(t *testing.T) {
	got := aliases([]string{"ingress.t", "egress.t", "ingress.u", "NoAction", "ingress.v", "ingress.v"})
	want := map[string]string{"ingress.t": "ingress.t", "egress.t": "egress.t", "ingress.u": "u", "NoAction": "NoAction", "ingress.v": "v"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("alias(%s) = %s, want %s", k, got[k], v)
		}
	}
}

// unresolved lists the expressions of a checked program that lack a type, or a declaration for a
// name, or a callee for a call: the contract with the execution engine.
func unresolved(prog *Program) (n int, bad []string) {
	Inspect(prog, func(e Expr) {
		n++
		pos := e.Position().String()
		if e.Type() == nil || isBad(e.Type()) {
			bad = append(bad, pos+": "+ExprString(e)+" has no type")
		}
		if ne, ok := e.(*NameExpr); ok && ne.Decl == nil && ne.Name != "error" && ne.Name != "accept" && ne.Name != "reject" {
			bad = append(bad, pos+": "+ne.Name+" is not resolved")
		}
		if ce, ok := e.(*CallExpr); ok && ce.Callee == nil && ce.Method == "" {
			bad = append(bad, pos+": call "+ExprString(e)+" has no callee")
		}
		if ce, ok := e.(*CallExpr); ok {
			if len(ce.Params) > 0 && len(ce.Ordered) != len(ce.Params) {
				if _, isCtor := ce.Type().(*ExternType); !isCtor {
					bad = append(bad, pos+": call "+ExprString(e)+" has no ordered arguments")
				}
			}
			if m, ok := ce.Callee.(*MethodDecl); ok && len(m.TypeParams) > 0 {
				if len(ce.TypeArgT) != len(m.TypeParams) {
					bad = append(bad, pos+": call "+ExprString(e)+" has no type arguments")
				}
				for _, ta := range ce.TypeArgT {
					if ta == nil || hasTypeVar(ta) {
						bad = append(bad, pos+": call "+ExprString(e)+" has an unresolved type argument")
					}
				}
			}
		}
	})
	return n, bad
}

// TestResolved checks the contract with the execution engine: after Check, every expression in
// the accept corpus has a type and every name reference a declaration.
func TestResolved(t *testing.T) {
	for _, f := range []string{"testdata/accept/basic.p4", "testdata/accept/lockqueue.p4"} {
		prog, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		n, bad := unresolved(prog.Program)
		for _, b := range bad {
			t.Error(b)
		}
		if n < 100 {
			t.Errorf("%s: only %d expressions visited", f, n)
		}
	}
}

// FuzzFrontEnd feeds arbitrary text through the whole front end: it must never panic or hang.
func FuzzFrontEnd(f *testing.F) {
	for _, name := range []string{"testdata/accept/basic.p4", "testdata/accept/lockqueue.p4", "testdata/reject/skel.inc"} {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(string(data))
		}
	}
	f.Add(wrapProgram("", "hdr.h.a = 1;"))
	f.Add(wrapProgram("action a(bit<8> v) { hdr.h.a = v; } table t { key = { hdr.h.a: exact; } actions = { a; } }", "switch (t.apply().action_run) { a: { } }"))
	f.Add("#define X 1\n#if X\nconst bit<8> c = 8w1 ++ 4w0;\n#endif\n")
	f.Add("parser p(packet_in b) { state start { transition select(b.lookahead<bit<8>>()) { 1 &&& 3: accept; 0 .. 9: reject; } } }")
	f.Add("header h { bit<8> a; } struct s { h[3] hs; } control c(inout s x) { apply { x.hs.push_front(1); } }")
	f.Fuzz(func(t *testing.T, src string) {
		read := func(p string) ([]byte, error) { return nil, errNotFound(p) }
		toks, errs := PreprocessSource("fuzz.p4", src, read)
		if len(errs) > 0 {
			return
		}
		prog, err := Parse(toks)
		if err != nil {
			if _, ok := err.(ErrorList); !ok {
				t.Fatalf("parse error of type %T", err)
			}
			return
		}
		chk, err := Check(prog)
		if err == nil && chk.Main != nil {
			if _, err := chk.P4InfoText(); err != nil {
				t.Fatalf("checked program without P4Info: %v", err)
			}
		}
	})
}

func TestDefines(t *testing.T) {
	src := "#if MODE == 2\nconst bit<8> X = WIDTH;\n#endif\n#ifdef FLAG\nconst bit<8> Y = 1;\n#endif\n"
	read := func(p string) ([]byte, error) { return []byte(src), nil }
	toks, errs := PreprocessWith("d.p4", Options{ReadFile: read, Defines: map[string]string{"MODE": "2", "WIDTH": "8w7", "FLAG": ""}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, tk := range toks {
		got = append(got, tk.Text)
	}
	want := "const bit < 8 > X = 8w7 ; const bit < 8 > Y = 1 ; "
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
	if _, errs := PreprocessWith("d.p4", Options{ReadFile: read, Defines: map[string]string{"9bad": "1"}}); len(errs) == 0 {
		t.Error("accepted an invalid macro name")
	}
}

func TestV1SwitchBlocks(t *testing.T) {
	for file, want := range map[string][6]string{
		"testdata/accept/basic.p4":    {"MyParser", "MyVerifyChecksum", "MyIngress", "MyEgress", "MyComputeChecksum", "MyDeparser"},
		"testdata/accept/features.p4": {"FeatParser", "FeatVerify", "FeatIngress", "FeatEgress", "FeatCompute", "FeatDeparser"},
	} {
		prog, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		sw, err := prog.V1Switch()
		if err != nil {
			t.Fatal(err)
		}
		got := [6]string{sw.Parser.Name(), sw.VerifyChecksum.Name(), sw.Ingress.Name(), sw.Egress.Name(), sw.ComputeChecksum.Name(), sw.Deparser.Name()}
		if got != want {
			t.Errorf("%s: blocks %v, want %v", file, got, want)
		}
	}
}

func TestBlockAnnotations(t *testing.T) {
	toks, errs := PreprocessSource("a.p4", wrapProgram("register<bit<8>>(4) r;", "@atomic { bit<8> v; r.read(v, 0); r.write(0, v + 1); }"), nil)
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
	for _, d := range prog.Decls {
		if c, ok := d.(*ControlDecl); ok && c.Name == "I" {
			b, ok := c.Body.Stmts[0].(*BlockStmt)
			if !ok || b.Annos.Get("atomic") == nil {
				t.Fatalf("first statement %T lost its @atomic annotation", c.Body.Stmts[0])
			}
			return
		}
	}
	t.Fatal("control I not found")
}

func TestHiddenFromP4Info(t *testing.T) {
	src := wrapProgram(`@hidden action secret() { }
    action open() { }
    @hidden table internal { key = { hdr.h.a: exact; } actions = { secret; open; } }
    table visible { key = { hdr.h.a: exact; } actions = { secret; open; } const default_action = secret(); }
    table unused_table { key = { hdr.h.b: exact; } actions = { open; } }`, "internal.apply(); visible.apply();")
	toks, errs := PreprocessSource("h.p4", src, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	prog, err := Parse(toks)
	if err != nil {
		t.Fatal(err)
	}
	chk, err := Check(prog)
	if err != nil {
		t.Fatal(err)
	}
	info, err := chk.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	var tables, actions []string
	for _, x := range info.Tables {
		tables = append(tables, x.Preamble.Name)
		if len(x.ActionRefs) != 1 || x.ConstDefaultActionId != 0 {
			t.Errorf("table %s: refs %v, const default %d: the hidden action must not appear", x.Preamble.Name, x.ActionRefs, x.ConstDefaultActionId)
		}
	}
	for _, x := range info.Actions {
		actions = append(actions, x.Preamble.Name)
	}
	if strings.Join(tables, ",") != "I.visible" || strings.Join(actions, ",") != "I.open" {
		t.Errorf("tables %v actions %v; want only I.visible and I.open", tables, actions)
	}
}

func TestWarnings(t *testing.T) {
	toks, errs := PreprocessSource("w.p4", wrapProgram("", "hdr.h.a = 300; hdr.h.a = 8w255; hdr.h.s = -128; mark_to_drop(); hdr.h.b = 16w70000;"), nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	prog, err := Parse(toks)
	if err != nil {
		t.Fatal(err)
	}
	chk, err := Check(prog)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range chk.Warnings {
		got = append(got, w.Error())
	}
	want := []string{
		"w.p4:14:11: 300: value does not fit in bit<8>; it is truncated",
		"w.p4:14:49: mark_to_drop is deprecated: Please use mark_to_drop(standard_metadata) instead.",
		"w.p4:14:75: 16w70000: value does not fit in bit<16>; it is truncated",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestP4InfoMap(t *testing.T) {
	prog, err := Load("testdata/accept/features.p4")
	if err != nil {
		t.Fatal(err)
	}
	info, m, err := prog.P4InfoWithMap()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range info.Tables {
		e := m.Tables[tb.Preamble.Id]
		if e == nil || e.Path+"."+e.Decl.Name != tb.Preamble.Name {
			t.Errorf("table %s: map entry %+v", tb.Preamble.Name, e)
		}
	}
	for _, a := range info.Actions {
		if m.Actions[a.Preamble.Id] == nil {
			t.Errorf("action %s missing from the map", a.Preamble.Name)
		}
	}
	for _, c := range info.Counters {
		e := m.Externs[c.Preamble.Id]
		if e == nil || e.Decl == nil || e.Path != "FeatIngress.counting" || e.Type.Decl.Name != "counter" {
			t.Errorf("counter %s: map entry %+v", c.Preamble.Name, e)
		}
	}
	for _, ap := range info.ActionProfiles {
		e := m.Externs[ap.Preamble.Id]
		if e == nil || e.Call == nil || e.Type.Decl.Name != "action_selector" {
			t.Errorf("action profile %s: map entry %+v", ap.Preamble.Name, e)
		}
	}
	if len(m.Tables) != len(info.Tables) || len(m.Externs) != len(info.Counters)+len(info.Registers)+len(info.ActionProfiles)+len(info.Meters)+len(info.DirectMeters)+len(info.DirectCounters) {
		t.Errorf("map sizes do not match the P4Info")
	}
}

func TestControlInstantiatedTwice(t *testing.T) {
	src := strings.Replace(wrapProgram("Sub() s1; Sub() s2;", "s1.apply(hdr); s2.apply(hdr);"),
		"control I(", `control Sub(inout H hdr) {
    action set(bit<8> v) { hdr.h.a = v; }
    table t { key = { hdr.h.b: exact; } actions = { set; } }
    apply { t.apply(); }
}
control I(`, 1)
	toks, errs := PreprocessSource("twice.p4", src, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	prog, err := Parse(toks)
	if err != nil {
		t.Fatal(err)
	}
	chk, err := Check(prog)
	if err != nil {
		t.Fatal(err)
	}
	info, m, err := chk.P4InfoWithMap()
	if err != nil {
		t.Fatal(err)
	}
	actionName := map[uint32]string{}
	for _, a := range info.Actions {
		actionName[a.Preamble.Id] = a.Preamble.Name
	}
	var got []string
	for _, tb := range info.Tables {
		var refs []string
		for _, r := range tb.ActionRefs {
			refs = append(refs, actionName[r.Id])
		}
		got = append(got, tb.Preamble.Name+"->"+strings.Join(refs, ","))
	}
	want := "I.s1.t->I.s1.set,NoAction I.s2.t->I.s2.set,NoAction"
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
	for id, e := range m.Actions {
		if e.Decl.Name == "set" && actionName[id] != e.Path+".set" {
			t.Errorf("action %s mapped to path %q", actionName[id], e.Path)
		}
	}
}
