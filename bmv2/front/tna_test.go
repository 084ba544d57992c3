package front

import (
	"os"
	"strings"
	"testing"
)

// TestTokenPaste checks the ## operator in object-like and function-like macros (bf-p4c
// programs build parser state names with it).
func TestTokenPaste(t *testing.T) {
	src := `#define CAT(a, b) a ## b
#define STATE(n) state_##n
#define PREFIX pre##fix
CAT(foo, 1) STATE(7) PREFIX CAT(x, ) CAT(8, w3)
`
	toks, errs := PreprocessSource("main.p4", src, nil)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	var got []string
	for _, tk := range toks {
		if tk.Kind != TEOF {
			got = append(got, tk.Text)
		}
	}
	want := "foo1 state_7 prefix x 8w3"
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
	if toks[0].Pos.Line != 4 || toks[0].Pos.Col != 1 {
		t.Errorf("pasted token at %s, want main.p4:4:1 (the macro's use)", toks[0].Pos)
	}
}

// TestIncludeDirs checks that quoted includes fall back to Options.IncludeDirs, in order, and
// that a file next to the including file wins.
func TestIncludeDirs(t *testing.T) {
	files := map[string]string{
		"prog/main.p4":     "#include \"common/a.p4\"\n#include \"b.p4\"\n",
		"inc1/common/a.p4": "from_inc1\n",
		"inc2/common/a.p4": "from_inc2\n",
		"prog/b.p4":        "local_b\n",
		"inc1/b.p4":        "inc1_b\n",
		"prog/missing.p4":  "#include \"nowhere.p4\"\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, errNotFound(p)
	}
	toks, errs := PreprocessWith("prog/main.p4", Options{ReadFile: read, IncludeDirs: []string{"inc1", "inc2"}})
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if len(toks) < 2 || toks[0].Text != "from_inc1" || toks[0].Pos.File != "inc1/common/a.p4" || toks[1].Text != "local_b" {
		t.Errorf("got %v", toks)
	}
	_, errs = PreprocessWith("prog/missing.p4", Options{ReadFile: read, IncludeDirs: []string{"inc1"}})
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, `cannot include "nowhere.p4"`) {
		t.Errorf("missing include: %v", errs)
	}
}

// TestTNAP4InfoIDs checks the TNA P4Info names and ids against the scheme bf-p4c uses (see
// p4info_tna.go), computed here from the names: tables and externs named without the pipe
// prefix but hashed with it; actions hashed without it. A Pipeline constructed in Switch's
// arguments takes the parameter's name (pipe0) as its prefix.
func TestTNAP4InfoIDs(t *testing.T) {
	src, err := os.ReadFile("testdata/accept/tna_features.p4")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, pipe, program string
	}{
		{"named pipeline", "pipe", string(src)},
		{"inline pipeline", "pipe0", strings.Replace(strings.Replace(string(src),
			"Pipeline(IgParser(), SwitchIngress(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;", "", 1),
			"Switch(pipe) main;", "Switch(Pipeline(IgParser(), SwitchIngress(), IgDeparser(), EgParser(), Eg(), EgDeparser())) main;", 1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checked, err := LoadWith("tna.p4", func(p string) ([]byte, error) {
				if p == "tna.p4" {
					return []byte(tt.program), nil
				}
				return nil, errNotFound(p)
			})
			if err != nil {
				t.Fatal(err)
			}
			info, err := checked.P4Info()
			if err != nil {
				t.Fatal(err)
			}
			id := func(prefix uint32, hashed string) uint32 {
				return prefix<<24 | JenkinsOneAtATime(hashed)&0xffffff
			}
			got := map[string]uint32{}
			for _, x := range info.Tables {
				got["table "+x.Preamble.Name] = x.Preamble.Id
			}
			for _, x := range info.Actions {
				got["action "+x.Preamble.Name] = x.Preamble.Id
			}
			for _, x := range info.Counters {
				got["counter "+x.Preamble.Name] = x.Preamble.Id
			}
			for _, x := range info.Registers {
				got["register "+x.Preamble.Name] = x.Preamble.Id
			}
			for _, x := range info.Digests {
				got["digest "+x.Preamble.Name] = x.Preamble.Id
			}
			want := map[string]uint32{
				"table SwitchIngress.forward":    id(0x02, tt.pipe+".SwitchIngress.forward"),
				"table SwitchIngress.ecmp":       id(0x02, tt.pipe+".SwitchIngress.ecmp"),
				"action SwitchIngress.hit":       id(0x01, "SwitchIngress.hit"),
				"action NoAction":                id(0x01, "NoAction"),
				"counter SwitchIngress.cnt":      id(0x12, tt.pipe+".SwitchIngress.cnt"),
				"register SwitchIngress.flows":   id(0x16, tt.pipe+".SwitchIngress.flows"),
				"digest IgDeparser.learn_digest": id(0x17, tt.pipe+".IgDeparser.learn_digest"),
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: id %#x, want %#x", k, got[k], w)
				}
			}
			if info.PkgInfo.GetArch() != "tna" {
				t.Errorf("pkg_info.arch %q, want tna", info.PkgInfo.GetArch())
			}
			// The pair register's cells are described by its struct type.
			if len(info.Registers) != 1 || info.Registers[0].TypeSpec.GetStruct().GetName() != "pair_t" || info.Registers[0].Size != 1024 {
				t.Errorf("registers %v", info.Registers)
			}
		})
	}
}
