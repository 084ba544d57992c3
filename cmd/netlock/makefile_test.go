package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/internal/testenv"
)

var (
	fuzzFunc   = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	fuzzTarget = regexp.MustCompile(`(?m)^\t\$\(FUZZ\) (\./\S+) -fuzz '\^(Fuzz\w+)\$\$'`)
)

// makeFuzzTargets returns the fuzzers the Makefile's fuzz target runs, as "./pkg Name".
func makeFuzzTargets(makefile string) map[string]bool {
	out := map[string]bool{}
	for _, m := range fuzzTarget.FindAllStringSubmatch(makefile, -1) {
		out[m[1]+" "+m[2]] = true
	}
	return out
}

// repoFuzzers returns every func Fuzz in the *_test.go files under root, as "./pkg Name".
func repoFuzzers(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(b), -1) {
			out = append(out, "./"+filepath.ToSlash(dir)+" "+m[1])
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// TestMakeFuzzListsEveryFuzzer: `make fuzz` runs every fuzzer of the repository. A new func
// Fuzz must be added to the Makefile's fuzz target.
func TestMakeFuzzListsEveryFuzzer(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	listed := makeFuzzTargets(string(mk))
	all, err := repoFuzzers(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no func Fuzz found in the repository: the search is broken")
	}
	for _, f := range all {
		if !listed[f] {
			pkg, name, _ := strings.Cut(f, " ")
			t.Errorf("make fuzz misses %s in %s: add \"$(FUZZ) %s -fuzz '^%s$$'\" to the Makefile", name, pkg, pkg, name)
		}
		delete(listed, f)
	}
	for f := range listed {
		t.Errorf("make fuzz runs %s, which is not a func Fuzz of the repository", f)
	}
}

// TestMakeFuzzCheckCatchesMissing is the negative control: a Makefile without one of the
// fuzzers fails the check.
func TestMakeFuzzCheckCatchesMissing(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	line := "\t$(FUZZ) ./wire -fuzz '^FuzzParseLockStats$$'\n"
	if !strings.Contains(string(mk), line) {
		t.Fatalf("the Makefile has no line %q", line)
	}
	if makeFuzzTargets(strings.Replace(string(mk), line, "", 1))["./wire FuzzParseLockStats"] {
		t.Fatal("a removed fuzz line is still found")
	}
}

// TestMakeInstall: `make install` (README's first command for a user) installs a working netlock
// into GOBIN and says where it went and that the directory is not in PATH.
func TestMakeInstall(t *testing.T) {
	testenv.RequireTool(t, "make", "apt-get install -y make")
	gobin := t.TempDir()
	cmd := exec.Command("make", "-s", "install", "GOBIN="+gobin)
	cmd.Dir = testenv.ModuleRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	bin := filepath.Join(gobin, "netlock")
	for _, want := range []string{"installed " + bin + "\n", gobin + " is not in PATH"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make install printed %q, want it to say %q", out, want)
		}
	}
	if help, err := exec.Command(bin, "server", "--help").CombinedOutput(); err != nil || !strings.Contains(string(help), "--init") {
		t.Errorf("%s server --help: %v\n%s", bin, err, help)
	}
}

// TestMakefileExportsKnownVariables: every NETLOCK_ variable the Makefile exports to its
// recipes (`export NAME` or a target's `target: export NAME := ...`) is one that netlock's commands accept (config.OtherEnv or a key's): an unknown
// NETLOCK_ variable stops every command, so `make demo` would fail at once.
func TestMakefileExportsKnownVariables(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	exports := regexp.MustCompile(`(?m)^(?:[\w.-]+:\s*)?export\s+(.*)$`).FindAllStringSubmatch(string(b), -1)
	n := 0
	for _, m := range exports {
		for _, name := range strings.Fields(m[1]) {
			if !strings.HasPrefix(name, "NETLOCK_") {
				continue
			}
			n++
			if err := checkEnv([]string{name + "=x"}); err != nil {
				t.Errorf("the Makefile exports %s, which netlock refuses: %v", name, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("the Makefile exports no NETLOCK_ variable: the test lost its case")
	}
}
