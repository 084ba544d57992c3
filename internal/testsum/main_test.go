package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sample is a test package with a passing, a failing, a skipped and an opt-in test, a subtest
// skipped and a parent that passes.
const sample = `package sample

import "testing"

func TestPass(t *testing.T) { t.Log("quiet when it passes") }

func TestFail(t *testing.T) { t.Log("shown because it fails"); t.Fatal("broken") }

func TestSkip(t *testing.T) { t.Skip("needs a tool that is missing") }

func TestMeasure(t *testing.T) { t.Skip("opt-in measurement: set X to run it") }

func TestParent(t *testing.T) {
	t.Run("child", func(t *testing.T) { t.Skip("too slow here") })
}
`

// TestRunAndReport runs a real ` + "`go test -json`" + ` on the sample package through runCmd: the
// failed test's output is printed and the passing one's is not; the log holds every verdict; the
// report lists the skips, the opt-in one apart, and fails under CI only for the others.
func TestRunAndReport(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module sample\n\ngo 1.22\n", "sample_test.go": sample} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go: %v", err)
	}
	log := filepath.Join(t.TempDir(), "log.jsonl")
	var out bytes.Buffer
	status := runTo(&out, log, []string{goBin, "test", "-C", dir, "-json", "-count=1", "."})
	if status == 0 {
		t.Errorf("status 0 for a failing package")
	}
	text := out.String()
	for _, want := range []string{"shown because it fails", "--- FAIL: TestFail", "FAIL\tsample"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	for _, not := range []string{"quiet when it passes", "=== RUN", "needs a tool"} {
		if strings.Contains(text, not) {
			t.Errorf("output has %q:\n%s", not, text)
		}
	}
	recs, err := readLog(log)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, r := range recs {
		verdicts[r.Test] = r.Action
	}
	for test, want := range map[string]string{"TestPass": "pass", "TestFail": "fail", "TestSkip": "skip",
		"TestMeasure": "skip", "TestParent": "pass", "TestParent/child": "skip"} {
		if verdicts[test] != want {
			t.Errorf("%s: %q in the log, want %q", test, verdicts[test], want)
		}
	}

	var rep bytes.Buffer
	if !report(&rep, recs, false) {
		t.Error("the report failed without CI")
	}
	for _, want := range []string{"3 tests, 1 of them opt-in", "sample TestSkip: sample_test.go:9: needs a tool that is missing",
		"TestParent/child", "TestMeasure: sample_test.go:11: opt-in measurement"} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, rep.String())
		}
	}
	rep.Reset()
	if report(&rep, recs, true) || !strings.Contains(rep.String(), "FAIL: under CI=true") {
		t.Errorf("under CI the report passed with two skips that are not opt-in:\n%s", rep.String())
	}
	// A later pass that runs the skipped tests clears them; the opt-in one stays and is allowed.
	more := append(recs, record{Package: "sample", Test: "TestSkip", Action: "pass"},
		record{Package: "sample", Test: "TestParent/child", Action: "pass"})
	rep.Reset()
	if !report(&rep, more, true) || !strings.Contains(rep.String(), "1 tests, 1 of them opt-in") {
		t.Errorf("with the skips run by another pass:\n%s", rep.String())
	}
}
