package simpleswitch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lookupEnv is the last value of key in env, as exec.Cmd uses it.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// TestCLICommand: bmv2's Python CLI runs under Options.Python; a wrapper (build.sh's /bin/sh
// one, which failed as "python3 wrapper" with a SyntaxError) or a binary runs itself, with
// Python's directory first on PATH.
func TestCLICommand(t *testing.T) {
	const py = "/usr/bin/python3"
	wrapper := "#!/bin/sh\nPYTHONPATH=/opt/p4tools/lib/python3/site-packages exec python3 /opt/p4tools/lib/python3/site-packages/sswitch_CLI.py \"$@\"\n"
	tests := []struct {
		name, head string
		python     bool
	}{
		{"bmv2's script (env python3)", "#!/usr/bin/env python3\n\n# SPDX", true},
		{"absolute python3", "#!/usr/bin/python3\nimport sys\n", true},
		{"python3.11 with a flag", "#! /usr/bin/python3.11 -u\n", true},
		{"env with a flag and a variable", "#!/usr/bin/env -S A=1 python3 -u\n", true},
		{"python2", "#!/usr/bin/python\n", true},
		{"build.sh's sh wrapper", wrapper, false},
		{"bash wrapper", "#!/bin/bash\nexec python3 x.py\n", false},
		{"env sh", "#!/usr/bin/env sh\n", false},
		{"no shebang (a binary)", "\x7fELF\x02\x01\x01", false},
		{"empty file", "", false},
		{"empty shebang", "#!\n", false},
	}
	env := []string{"HOME=/root", "PATH=/root/.pyenv/shims:/usr/bin"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			argv, got := cliCommand("/opt/p4tools/bin/simple_switch_CLI", []byte(tc.head), py, env)
			if v, _ := lookupEnv(got, "PYTHONUNBUFFERED"); v != "1" {
				t.Errorf("PYTHONUNBUFFERED=%q, want 1", v)
			}
			path, _ := lookupEnv(got, "PATH")
			if tc.python {
				if want := []string{py, "-u", "/opt/p4tools/bin/simple_switch_CLI"}; !slices.Equal(argv, want) {
					t.Errorf("argv %q, want %q", argv, want)
				}
				if path != "/root/.pyenv/shims:/usr/bin" {
					t.Errorf("PATH=%q changed for a Python script", path)
				}
				return
			}
			if want := []string{"/opt/p4tools/bin/simple_switch_CLI"}; !slices.Equal(argv, want) {
				t.Errorf("argv %q, want %q", argv, want)
			}
			if path != "/usr/bin:/root/.pyenv/shims:/usr/bin" {
				t.Errorf("PATH=%q, want Python's directory first", path)
			}
		})
	}
	// The caller's environment is not changed.
	if len(env) != 2 {
		t.Errorf("env changed: %q", env)
	}
	// No PATH at all: Python's directory alone.
	if _, got := cliCommand("cli", []byte("#!/bin/sh\n"), py, nil); !slices.Contains(got, "PATH=/usr/bin") {
		t.Errorf("env %q, want PATH=/usr/bin", got)
	}
}

// TestReadHead reads the "#!" line from files, the short and the long.
func TestReadHead(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{"", "#!/bin/sh\n", "#!/usr/bin/env python3\n" + strings.Repeat("x", 1000)} {
		p := filepath.Join(dir, "cli")
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		head, err := readHead(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(content, string(head)) || len(head) != min(len(content), 256) {
			t.Errorf("head %q of %q", head, content[:min(len(content), 40)])
		}
	}
	if _, err := readHead(filepath.Join(dir, "missing")); err == nil {
		t.Error("no error for a missing CLI")
	}
}
