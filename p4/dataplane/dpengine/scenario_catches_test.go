package dpengine

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// TestTNAMutantsFailScenarios is the scenarios' negative control on the TNA program: each mutant
// is one fault in a decision of p4/tna/netlock.p4 that the differential tests miss (or catch
// only on some seeds), and the scenario named, run on the mutant as TestScenarios runs it, must
// fail. (The v1model program runs the same scenarios: what one catches, both must do.) Its name
// does not match -run TestScenarios: with a mutant written into the program, its sites would
// fail to match and read as catches.
func TestTNAMutantsFailScenarios(t *testing.T) {
	for _, c := range []struct {
		mutant
		scn string
	}{
		{mutant{"setb-zero-asks-queue-empty", "set-buffered 0 with the switch queue empty sends no queue-empty",
			"(0, 0, 0, _, _, _, AD_SETB, 0, _) : qe_is(0);", "(0, 0, 0, _, _, _, AD_SETB, 0, _) : qe_is(1);"}, "admin"},
		{mutant{"forced-queue-empty-pass-examines-slot", "a force-release's queue-empty pass examines no slot (cleft 0)",
			"    action rw_clean_0() {\n        clean = 1;\n        hdr.recirc.clevel = meta.level;\n        hdr.recirc.cleft = 0;",
			"    action rw_clean_0() {\n        clean = 1;\n        hdr.recirc.clevel = meta.level;\n        hdr.recirc.cleft = 1;"}, "admin"},
		{mutant{"push-back-lease0-not-forwarded", "a push-back without a lease is answered to its client, marked forwarded",
			"    action rn_pb(bit<1> f) {\n        meta.rq_fwd = 1;", "    action rn_pb(bit<1> f) {\n        meta.rq_fwd = 0;"}, "overflow"},
		{mutant{"push-back-lease0-from-server", "a push-back without a lease names its client (cip, cport), not the server",
			"(K_PB, 0, _) : rn_pb(0);", "(K_PB, 0, _) : rn_lock(0);"}, "overflow"},
		{mutant{"push-back-lease0-zero-lease", "a push-back without a lease gets the rack's default lease",
			"(K_PB, 0, _) : rn_pb(0);", "(K_PB, 0, _) : rn_pb_l(0);"}, "overflow"},
		{mutant{"push-back-uncounted-counted", "a push-back that overflows while nothing is buffered leaves the count at 0",
			"(P_ACQ, 1, 0, 0, K_PB, 0, _, _) : ov_is(1, 1, 0);", "(P_ACQ, 1, 0, 0, K_PB, 0, _, _) : ov_is(1, 1, 1);"}, "overflow"},
		{mutant{"push-back-overflow-uncounted", "a push-back that overflows is counted as buffered again",
			"(P_ACQ, 1, 0, 0, K_PB, _, _, _) : ov_is(1, 1, 1);", "(P_ACQ, 1, 0, 0, K_PB, _, _, _) : ov_is(1, 1, 0);"}, "overflow"},
		{mutant{"shared-release-walks", "a release that leaves holders starts no grant walk",
			"(1, _) : nhold0_is(0);", "(1, _) : nhold0_is(1);"}, "release"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Count(string(dataplane.TNA.Source), c.from) != 1 {
				t.Fatalf("the mutation site %q is not in p4/%s exactly once: update the mutant", c.from, dataplane.TNA.File)
			}
			src := []byte(strings.Replace(string(dataplane.TNA.Source), c.from, c.to, 1))
			checked, err := loadScenarioProgram(dataplane.TNA, src)
			if err != nil {
				t.Fatal(err)
			}
			fails, err := runScenario(checked, dataplane.TNA, engine.PipelineInterpreted,
				filepath.Join(scenarioDir, "scenarios", c.scn+".scn"))
			if err != nil {
				t.Fatal(err)
			}
			if len(fails) == 0 {
				t.Fatalf("mutant %s (breaks: %s) passed scenario %s", c.name, c.rule, c.scn)
			}
			t.Logf("caught (%s): %s", c.rule, fails[0])
		})
	}
}
