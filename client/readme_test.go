package client_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeSnippet: README.md's Go snippet is useLocks of example_test.go, byte for byte, so
// that what the README shows compiles and runs (Example).
func TestReadmeSnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	snippet, ok := between(string(readme), "```go\n", "```\n")
	if !ok {
		t.Fatal("README.md has no ```go block")
	}
	fn, ok := between(string(src), "\nfunc useLocks(", "\n}\n")
	if !ok {
		t.Fatal("example_test.go has no func useLocks")
	}
	fn = "func useLocks(" + fn + "\n}\n"
	if snippet != fn {
		t.Errorf("README.md's Go snippet differs from useLocks in example_test.go:\nREADME:\n%s\nexample_test.go:\n%s", snippet, fn)
	}
}

// between returns the text of s after the first open and before the next close.
func between(s, open, close string) (string, bool) {
	i := strings.Index(s, open)
	if i < 0 {
		return "", false
	}
	s = s[i+len(open):]
	j := strings.Index(s, close)
	if j < 0 {
		return "", false
	}
	return s[:j], true
}
