package front_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
)

// bmv2RuleCase is one program of testdata/bmv2: its first line says what p4c-bm2-ss says of it
// ("// want: ok", or "// want: " and p4c's error message).
type bmv2RuleCase struct {
	path, want string
}

func bmv2RuleCases(t *testing.T) []bmv2RuleCase {
	t.Helper()
	files, err := filepath.Glob("testdata/bmv2/*.p4")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/bmv2 programs: %v", err)
	}
	var out []bmv2RuleCase
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Scan()
		fh.Close()
		want, ok := strings.CutPrefix(sc.Text(), "// want: ")
		if !ok {
			t.Fatalf("%s: the first line must be // want: ok or // want: MESSAGE", f)
		}
		out = append(out, bmv2RuleCase{f, want})
	}
	return out
}

// TestBMv2Rules checks CheckBMv2 against what p4c-bm2-ss says of each program of testdata/bmv2
// (TestRealBMv2Rules checks those expectations against the real compiler).
func TestBMv2Rules(t *testing.T) {
	for _, c := range bmv2RuleCases(t) {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			checked, err := front.Load(c.path)
			if err != nil {
				t.Fatal(err)
			}
			got := "ok"
			if errs := checked.CheckBMv2(); errs != nil {
				if len(errs) != 1 {
					t.Fatalf("%d errors, want one: %v", len(errs), errs)
				}
				got = errs[0].Msg
			}
			if got != c.want {
				t.Errorf("CheckBMv2: %s\nwant:       %s", got, c.want)
			}
		})
	}
}
