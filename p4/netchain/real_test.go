package netchain

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/internal/simpleswitch"
	"github.com/netlock-go/netlock/internal/testenv"
)

// TestRealCompile compiles netchain.p4 with p4c-bm2-ss (opt-in: make test-real, NETLOCK_P4TOOLS),
// at the default size and at the tests' size: the program is one p4c accepts, not only our front
// end.
func TestRealCompile(t *testing.T) {
	p4c := testenv.RealTool(t, "p4c-bm2-ss")
	src := filepath.Join(testenv.ModuleRoot(t), "p4", "netchain", File)
	for _, slots := range []int{DefaultSlots, testSlots} {
		_, _, diags, err := simpleswitch.Compile(p4c, src, t.TempDir(), Defines(slots))
		if err != nil {
			t.Fatalf("%d slots: %v", slots, err)
		}
		if d := strings.TrimSpace(diags); d != "" {
			t.Logf("p4c-bm2-ss, %d slots:\n%s", slots, d)
		}
	}
}
