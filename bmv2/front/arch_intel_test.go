package front

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/internal/testenv"
)

// TestArchMatchesIntel compares netlock's own declarations of TNA (tna.p4, Tofino 1) and T2NA
// (t2na.p4, Tofino 2) with Intel's, as p4c ships them (backends/tofino/bf-p4c/p4include of a p4c
// checkout; never committed): every declaration of Intel's files must be in ours with the same
// signature (fields and their types, extern constructors and methods with their parameters,
// directions, @optional marks and return types, block and package parameters, typedefs, enums,
// constants). A program may then use either file alike.
//
//	NETLOCK_P4C_DIR=/var/tmp/p4tools-build/p4c-src go test ./bmv2/front -run ArchMatchesIntel -v
func TestArchMatchesIntel(t *testing.T) {
	root := testenv.OptIn(t, "NETLOCK_P4C_DIR", "a p4c checkout (backends/tofino/bf-p4c/p4include) to compare the TNA declarations with")
	inc := filepath.Join(root, "backends", "tofino", "bf-p4c", "p4include")
	if _, err := os.Stat(filepath.Join(inc, "t2na.p4")); err != nil {
		t.Skipf("no Tofino includes in %s: %v", inc, err)
	}
	// The front end takes an include of a name it provides (tofino1_base.p4, ...) from its own
	// copies, quoted or not: Intel's files are copied as intel_NAME, their includes of each
	// other renamed.
	dir := t.TempDir()
	quote := regexp.MustCompile(`#include [<"](tofino[0-9]_[a-z]+\.p4)[>"]`)
	files, _ := filepath.Glob(filepath.Join(inc, "*.p4"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "intel_"+filepath.Base(f)), quote.ReplaceAll(b, []byte(`#include "intel_$1"`)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		arch, gen string
		files     []string
	}{
		{"tna.p4", "1", []string{"tofino1_specs.p4", "tofino1_base.p4", "tofino1_arch.p4"}},
		{"t2na.p4", "2", []string{"tofino2_specs.p4", "tofino2_base.p4", "tofino2_arch.p4"}},
	} {
		load := func(include, prefix string) map[string]string {
			t.Helper()
			main := filepath.Join(dir, "main_"+tc.gen+".p4")
			src := "#include <core.p4>\n#include " + include + "\n"
			if err := os.WriteFile(main, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := LoadOptions(main, Options{Defines: map[string]string{"__TARGET_TOFINO__": tc.gen}})
			if err != nil {
				t.Fatalf("%s: %v", include, err)
			}
			var files []string
			for _, f := range tc.files {
				files = append(files, prefix+f)
			}
			return declSignatures(c, files)
		}
		theirs := load(`"intel_`+tc.arch+`"`, "intel_")
		ours := load("<"+tc.arch+">", "")
		var missing, differ []string
		for name, sig := range theirs {
			o, ok := ours[name]
			switch {
			case !ok:
				missing = append(missing, name)
			case o != sig:
				differ = append(differ, fmt.Sprintf("%s\n\tIntel's: %s\n\tours:    %s", name, sig, o))
			}
		}
		sort.Strings(missing)
		sort.Strings(differ)
		for _, m := range missing {
			t.Errorf("%s: %s is not declared by ours", tc.arch, m)
		}
		for _, d := range differ {
			t.Errorf("%s: %s", tc.arch, d)
		}
		if len(theirs) < 50 {
			t.Errorf("%s: only %d declarations compared", tc.arch, len(theirs))
		}
		t.Logf("%s: %d declarations of Intel's compared, %d missing, %d different; ours has %d", tc.arch, len(theirs), len(missing), len(differ), len(ours))
	}
}

// declSignatures renders the top-level declarations of the named files (base names) as
// comparable strings, keyed by kind and name.
func declSignatures(c *Checked, files []string) map[string]string {
	in := map[string]bool{}
	for _, f := range files {
		in[f] = true
	}
	out := map[string]string{}
	params := func(ps []*Param) string {
		var xs []string
		for _, p := range ps {
			s := p.Dir.String() + " " + fmt.Sprint(p.T) + " " + p.Name
			if p.Annos.Get("optional") != nil {
				s = "@optional " + s
			}
			xs = append(xs, strings.TrimSpace(s))
		}
		return "(" + strings.Join(xs, ", ") + ")"
	}
	method := func(m *MethodDecl) string {
		s := m.Name
		if len(m.TypeParams) > 0 {
			s += "<" + strings.Join(m.TypeParams, ", ") + ">"
		}
		s += params(m.Params)
		if m.RetT != nil {
			s = fmt.Sprint(m.RetT) + " " + s
		}
		if m.Abstract {
			s = "abstract " + s
		}
		if m.Annos.Get("optional") != nil {
			s = "@optional " + s
		}
		return s
	}
	for _, ds := range c.Globals {
		for _, d := range ds {
			if !in[filepath.Base(d.Position().File)] {
				continue
			}
			switch d := d.(type) {
			case *StructDecl:
				var fs []string
				for _, f := range d.T.(*StructType).Fields {
					fs = append(fs, fmt.Sprintf("%s %s", f.T, f.Name))
				}
				out[d.Kind+" "+d.Name] = strings.Join(fs, "; ")
			case *ExternDecl:
				var ms []string
				for _, m := range d.Ctors {
					ms = append(ms, method(m))
				}
				for _, m := range d.Methods {
					ms = append(ms, method(m))
				}
				sort.Strings(ms)
				out["extern "+d.Name+"<"+strings.Join(d.TypeParams, ", ")+">"] = strings.Join(ms, "; ")
			case *MethodDecl:
				key := "function " + d.Name + params(d.Params)
				out[key] = method(d)
			case *TypedefDecl:
				out["typedef "+d.Name] = fmt.Sprint(d.T)
			case *EnumDecl:
				var ms []string
				for _, m := range d.Members {
					ms = append(ms, m.Name)
				}
				out["enum "+d.Name] = fmt.Sprint(d.T) + " {" + strings.Join(ms, ", ") + "}"
			case *ConstDecl:
				out["const "+d.Name] = fmt.Sprint(d.T) + " = " + fmt.Sprint(c.Const[d.Value])
			case *ParserDecl:
				out["parser "+d.Name] = "<" + strings.Join(d.TypeParams, ", ") + ">" + params(d.Params)
			case *ControlDecl:
				out["control "+d.Name] = "<" + strings.Join(d.TypeParams, ", ") + ">" + params(d.Params)
			case *PackageDecl:
				out["package "+d.Name] = "<" + strings.Join(d.TypeParams, ", ") + ">" + params(d.Params)
			}
		}
	}
	return out
}
