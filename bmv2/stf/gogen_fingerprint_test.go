package stf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
)

// TestGoFingerprintFiles: engine.Fingerprint, what binds a generated pipeline to a program,
// follows the program's text, included files too, and not the directory it was loaded from.
// The program is testdata/round3.p4 included by a main file, written to two directories.
func TestGoFingerprintFiles(t *testing.T) {
	body, err := os.ReadFile("testdata/round3.p4")
	if err != nil {
		t.Fatal(err)
	}
	const from, to = "== 8w1", "== 8w2"
	if !bytes.Contains(body, []byte(from)) {
		t.Fatalf("%q is not in testdata/round3.p4: update the test", from)
	}
	// fp writes main.p4 (#include "body.p4") and body.p4 under dir and fingerprints main.p4.
	fp := func(dir string, body []byte) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.p4"), []byte("#include \"body.p4\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "body.p4"), body, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := front.Load(filepath.Join(dir, "main.p4"))
		if err != nil {
			t.Fatal(err)
		}
		return engine.Fingerprint(c)
	}
	tmp := t.TempDir()
	base := fp(filepath.Join(tmp, "a"), body)
	if got := fp(filepath.Join(tmp, "b", "deeper"), body); got != base {
		t.Error("the same program loaded from another directory has another fingerprint")
	}
	if got := fp(filepath.Join(tmp, "c"), bytes.Replace(body, []byte(from), []byte(to), 1)); got == base {
		t.Error("a change in an included file kept the fingerprint")
	}
	// The included file's text itself, not only what the main file names: the same body
	// again gives the same fingerprint after the change above.
	if got := fp(filepath.Join(tmp, "c"), body); got != base {
		t.Error("the included file restored: the fingerprint did not come back")
	}
}
