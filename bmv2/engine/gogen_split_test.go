package engine

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
)

// typeCheck type-checks a generated file (its engine import from this package's source).
func typeCheck(fset *token.FileSet, imp types.Importer, src []byte) error {
	f, err := parser.ParseFile(fset, "gen.go", src, 0)
	if err != nil {
		return err
	}
	conf := types.Config{Importer: imp}
	_, err = conf.Check("gen", fset, []*ast.File{f}, nil)
	return err
}

// TestSplitTypeChecks: generated pipelines split at a small limit (statement lists of 40
// lines, runs from 4: many more moves than the production limit makes, of every kind: runs
// with returns, written and array variables passed by pointer, moves nested in moves, the
// branches of if-else chains and switches) type-check, and the blocks shrink. The negative
// control: the output with one parameter of a moved function dropped does not type-check.
// (That the split code runs as the unsplit one is what the differential tests of the
// generated pipelines show: gogentest, dataplane's, the STF runs.)
func TestSplitTypeChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: type-checks the engine from source")
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	movedRE := regexp.MustCompile(`(?m)^func \(p \*\w+\) (parser|verify|ingress|egress|compute|deparser)\d+\(g \*engine\.Gen, s \*\[\d+\]uint64, (\w+) ([^,)]+)`)
	ptrRE := regexp.MustCompile(`(?m)^func \(p \*\w+\) \w+\d+\(g \*engine\.Gen, s \*\[\d+\]uint64,.* \*`)
	boolRE := regexp.MustCompile(`(?m)^func \(p \*\w+\) \w+\d+\(.*\) bool \{$`)
	controls := 0
	for _, prog := range []string{
		"../stf/testdata/round3.p4", "../stf/testdata/l3.p4", "../stf/testdata/tables.p4",
		"gogentest/testdata/shapes.p4", "gogentest/testdata/params.p4", "../../p4/netlock.p4",
	} {
		t.Run(filepath.Base(prog), func(t *testing.T) {
			c, err := front.Load(prog)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := GenerateGo(c, GenOptions{Package: "gen", Name: "pl", split: splitLimits{lines: 1 << 30, min: 1 << 30}})
			if err != nil {
				t.Fatal(err)
			}
			split, err := GenerateGo(c, GenOptions{Package: "gen", Name: "pl", split: splitLimits{lines: 40, min: 4}})
			if err != nil {
				t.Fatal(err)
			}
			nw, ns := strings.Count(string(whole), "\nfunc "), strings.Count(string(split), "\nfunc ")
			if ns <= nw {
				t.Fatalf("split at 40 lines: %d functions, as many as unsplit (%d)", ns, nw)
			}
			if err := typeCheck(fset, imp, split); err != nil {
				t.Fatalf("the split pipeline does not type-check: %v", err)
			}
			t.Logf("%d functions (unsplit %d), %d of them take a variable by pointer, %d return true", ns, nw,
				len(ptrRE.FindAll(split, -1)), len(boolRE.FindAll(split, -1)))
			m := movedRE.FindSubmatchIndex(split)
			if m == nil {
				return
			}
			// Drop the moved function's first parameter (", name type"): its body no longer
			// compiles.
			broken := append(append([]byte{}, split[:m[4]-2]...), split[m[7]:]...)
			if typeCheck(fset, imp, broken) == nil {
				t.Errorf("control: %s without parameter %s type-checks", split[m[0]:m[1]], split[m[4]:m[5]])
			}
			controls++
		})
	}
	if controls == 0 {
		t.Error("no moved function with a parameter: the control ran nowhere")
	}
}
