package front

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	p4infotext "github.com/netlock-go/netlock/internal/p4info"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ (review the diff)")

// TestAccept checks every program in testdata/accept: it must pass the checker, and its P4Info
// must equal the golden NAME.p4info.txtpb (compared as protobuf messages).
func TestAccept(t *testing.T) {
	files, err := filepath.Glob("testdata/accept/*.p4")
	if err != nil || len(files) == 0 {
		t.Fatalf("no accept corpus: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".h.p4") {
			continue // included by another test program
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			prog, err := Load(f)
			if err != nil {
				t.Fatalf("rejected:\n%v", err)
			}
			text, err := prog.P4InfoText()
			if err != nil {
				t.Fatalf("P4Info: %v", err)
			}
			golden := strings.TrimSuffix(f, ".p4") + ".p4info.txtpb"
			if *update {
				if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("missing golden (run with -update): %v", err)
			}
			w, err := p4infotext.Unmarshal(want)
			if err != nil {
				t.Fatalf("golden: %v", err)
			}
			g, err := p4infotext.Unmarshal([]byte(text))
			if err != nil {
				t.Fatalf("generated text does not parse: %v", err)
			}
			if !proto.Equal(w, g) {
				t.Errorf("P4Info differs from %s; got:\n%s", golden, text)
			}
		})
	}
}

// TestReject checks every program in testdata/reject: the checker must reject it with exactly the
// diagnostics in NAME.err (file:line:col: message).
func TestReject(t *testing.T) {
	files, err := filepath.Glob("testdata/reject/*.p4")
	if err != nil || len(files) == 0 {
		t.Fatalf("no reject corpus: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := Load(f)
			if err == nil {
				t.Fatalf("accepted, want an error")
			}
			if _, ok := err.(ErrorList); !ok {
				t.Fatalf("error is %T, want ErrorList", err)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(f, ".p4") + ".err"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("missing golden (run with -update): %v", err)
			}
			if got != string(want) {
				t.Errorf("diagnostics differ\ngot:\n%swant:\n%s", got, want)
			}
		})
	}
}
