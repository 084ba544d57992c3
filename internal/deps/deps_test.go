// Package deps holds the dependency check of netlock's vocabulary packages and pure cores (after
// Tailscale's depaware): each builds from a short, reviewed list of packages, recorded in
// testdata/<name>.txt, and never from the heavy ones (gRPC, the P4 engine, viper, gopacket,
// Prometheus). A change that pulls a new package into a core fails TestDeps until the list is
// rewritten (go test ./internal/deps -update) and the diff reviewed.
package deps

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt from go list -deps")

const module = "github.com/netlock-go/netlock/"

// cores are the packages whose dependencies are held to a list.
var cores = []string{
	"wire",
	"lockcore",
	"alloc",
	"lockserver/srvcore",
	"client/clientcore",
	"internal/clock",
	"internal/des",
	"p4/dataplane",
	"controlplane/ctlcore",
}

// forbidden are prefixes no core may depend on.
var forbidden = []string{
	"google.golang.org/grpc",
	"github.com/p4lang/",
	module + "bmv2/",
	"github.com/spf13/viper",
	"github.com/gopacket/",
	"github.com/prometheus/",
	module + "internal/config",
}

// deps returns the non-standard-library packages pkg depends on (itself excluded), sorted.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+pkg)
	cmd.Dir = testenv.ModuleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var r []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && l != module+pkg {
			r = append(r, l)
		}
	}
	slices.Sort(r)
	return r
}

func TestDeps(t *testing.T) {
	for _, pkg := range cores {
		t.Run(pkg, func(t *testing.T) {
			got := deps(t, pkg)
			for _, d := range got {
				for _, f := range forbidden {
					if strings.HasPrefix(d, f) {
						t.Errorf("%s depends on %s", pkg, d)
					}
				}
			}
			file := filepath.Join("testdata", strings.ReplaceAll(pkg, "/", "_")+".txt")
			text := strings.Join(got, "\n") + "\n"
			if *update {
				if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (go test ./internal/deps -update writes it)", err)
			}
			if string(b) != text {
				t.Errorf("%s's dependencies changed:\nnow:\n%swas (%s):\n%s\nreview, then go test ./internal/deps -update", pkg,
					text, file, b)
			}
		})
	}
}

// TestForbiddenIsEnforced is the negative control: packages known to use gRPC (the P4Runtime
// client) and the engine (the data plane's program on it, beside the vocabulary) are caught by
// the same check.
func TestForbiddenIsEnforced(t *testing.T) {
	for _, pkg := range []string{"controlplane/p4rtclient", "p4/dataplane/dpengine"} {
		caught := false
		for _, d := range deps(t, pkg) {
			for _, f := range forbidden {
				caught = caught || strings.HasPrefix(d, f)
			}
		}
		if !caught {
			t.Errorf("%s passes the check: the forbidden list catches nothing", pkg)
		}
	}
}
