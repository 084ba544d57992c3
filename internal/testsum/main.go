// Command testsum runs `go test -json` for `make test`, prints what a person needs to read (the
// packages' results, the whole output of every failed test, build errors) and keeps every test's
// verdict in a log, from which it then reports the tests that no pass of `make test` ran: skips
// are otherwise invisible in a CI log. Under CI=true the report fails on a skip that is not an
// opt-in measurement (a skip whose message says "opt-in": internal/testenv's OptIn and
// RealTool). A test skipped by one pass (under the race detector, say) and run by another is not
// a skip.
//
//	testsum run LOG -- go test -json [flags] [packages]   # exits with go test's status
//	testsum report LOG
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "run" {
		args := os.Args[3:]
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) == 0 {
			usage()
		}
		os.Exit(runCmd(os.Args[2], args))
	}
	if len(os.Args) == 3 && os.Args[1] == "report" {
		recs, err := readLog(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
		if !report(os.Stdout, recs, os.Getenv("CI") == "true") {
			os.Exit(1)
		}
		return
	}
	usage()
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testsum run LOG -- go test -json ...  |  testsum report LOG")
	os.Exit(2)
}

// runCmd runs the command, renders its JSON events on stdout as they come (unbuffered: a
// package's result shows when it ends) and appends the verdicts to the log. It returns the
// command's exit status (2 if it could not run it or write the log).
func runCmd(logPath string, args []string) int {
	return runTo(os.Stdout, logPath, args)
}

// runTo is runCmd writing to w.
func runTo(w io.Writer, logPath string, args []string) int {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 2
	}
	defer logf.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 2
	}
	r := newRenderer(w, logf)
	rerr := r.read(out)
	err = cmd.Wait()
	r.finish()
	if rerr != nil {
		fmt.Fprintln(os.Stderr, "testsum:", rerr)
		return 2
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 2
	}
	return 0
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Output     string
}

// record is one verdict in the log: a test of a package passed, failed or was skipped (with
// the message it logged).
type record struct {
	Package string `json:"package"`
	Test    string `json:"test"`
	Action  string `json:"action"`
	Message string `json:"message,omitempty"`
}

// renderer turns events into the text a person reads: per package its result line; per failed
// test its whole output; build output as it comes. Passed and skipped tests print nothing (the
// report lists the skips), nor do packages without a test that matched (counted in one line).
type renderer struct {
	w       io.Writer
	log     *json.Encoder
	buf     map[string][]string // package + "\x00" + test -> output lines not printed yet
	noTests int
	logErr  error
}

func newRenderer(w io.Writer, log io.Writer) *renderer {
	return &renderer{w: w, log: json.NewEncoder(log), buf: map[string][]string{}}
}

func (r *renderer) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintf(r.w, "%s\n", line) // not an event (go vet's output, say): as it is
			continue
		}
		r.event(e)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return r.logErr
}

func (r *renderer) event(e event) {
	key := e.Package + "\x00" + e.Test
	switch {
	case e.Action == "build-output":
		fmt.Fprint(r.w, e.Output)
	case e.Test == "" && e.Action == "output":
		switch out := e.Output; {
		case out == "PASS\n", strings.HasPrefix(out, "=== "), strings.HasPrefix(out, "testing: warning: no tests to run"):
		case strings.Contains(out, "[no tests to run]"), strings.Contains(out, "[no test files]"):
			r.noTests++
		default:
			fmt.Fprint(r.w, out)
		}
	case e.Test == "" && e.Action == "fail":
		// A panic or a timeout ends the package with tests still running: their output explains it.
		for k, lines := range r.buf {
			if strings.HasPrefix(k, e.Package+"\x00") {
				fmt.Fprint(r.w, strings.Join(lines, ""))
				delete(r.buf, k)
			}
		}
	case e.Test == "":
	case e.Action == "output":
		r.buf[key] = append(r.buf[key], e.Output)
	case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
		rec := record{Package: e.Package, Test: e.Test, Action: e.Action}
		if e.Action == "skip" {
			rec.Message = skipMessage(r.buf[key])
		}
		if e.Action == "fail" {
			for _, l := range r.buf[key] {
				if !strings.HasPrefix(l, "=== ") { // RUN, PAUSE, CONT: as go test without -v
					fmt.Fprint(r.w, l)
				}
			}
		}
		delete(r.buf, key)
		if err := r.log.Encode(rec); err != nil && r.logErr == nil {
			r.logErr = err
		}
	}
}

// finish prints what is left: the output of tests that never ended (the command died), and the
// count of packages with nothing to run.
func (r *renderer) finish() {
	keys := make([]string, 0, len(r.buf))
	for k := range r.buf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprint(r.w, strings.Join(r.buf[k], ""))
	}
	if r.noTests > 0 {
		fmt.Fprintf(r.w, "(%d packages had no test to run in this pass)\n", r.noTests)
	}
}

// skipMessage is what a skipped test logged: its output without the "=== RUN" and "--- SKIP"
// lines, each line's "file.go:N: " prefix kept, joined on one line.
func skipMessage(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, " ")
}

func readLog(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []record
	dec := json.NewDecoder(f)
	for {
		var r record
		if err := dec.Decode(&r); err == io.EOF {
			return recs, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		recs = append(recs, r)
	}
}

// report prints the tests that were skipped and run by no pass, opt-in measurements apart, and
// returns false when ci is set and one of them is not an opt-in measurement.
func report(w io.Writer, recs []record, ci bool) bool {
	type key struct{ pkg, test string }
	ran := map[key]bool{}
	skipped := map[key]string{}
	for _, r := range recs {
		k := key{r.Package, r.Test}
		switch r.Action {
		case "pass", "fail":
			ran[k] = true
		case "skip":
			if _, ok := skipped[k]; !ok {
				skipped[k] = r.Message
			}
		}
	}
	var optIn, other []string
	for k, msg := range skipped {
		if ran[k] {
			continue
		}
		line := fmt.Sprintf("  %s %s: %s", shortPkg(k.pkg), k.test, msg)
		if strings.Contains(msg, "opt-in") {
			optIn = append(optIn, line)
		} else {
			other = append(other, line)
		}
	}
	sort.Strings(optIn)
	sort.Strings(other)
	fmt.Fprintf(w, "skipped by every pass of make test: %d tests, %d of them opt-in measurements\n",
		len(optIn)+len(other), len(optIn))
	for _, l := range other {
		fmt.Fprintln(w, l)
	}
	for _, l := range optIn {
		fmt.Fprintln(w, l)
	}
	if ci && len(other) > 0 {
		fmt.Fprintf(w, "FAIL: under CI=true every test runs but the opt-in measurements: %d skipped\n", len(other))
		return false
	}
	return true
}

// shortPkg drops the module path: "./p4/dataplane".
func shortPkg(p string) string {
	const mod = "github.com/netlock-go/netlock"
	if p == mod {
		return "."
	}
	if rest, ok := strings.CutPrefix(p, mod+"/"); ok {
		return "./" + rest
	}
	return p
}
