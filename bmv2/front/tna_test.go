package front

import (
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
