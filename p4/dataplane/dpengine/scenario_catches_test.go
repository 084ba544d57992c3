package dpengine

import (
	"path/filepath"
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
//
// wd0_op and wd_step have no entries for a force-release (the reply to the controller next):
// they had, and no input told their mutants apart. forced is WF_FORCED, which only pass_forced
// sets, in the first pass of an admin force-release, whose type it makes P_REL; a later pass
// keeps the flags (hdr.recirc.wflags, parsed only from the recirculation port), a fresh one
// starts at 0. The withdrawal's passes are P_WD0, the first pass of a client's release with
// token 0 (kind K_LOCK: fresh, flags 0), and P_WD, whose phase PH_WDRAW only wd0_op's and
// wd_step's actions set: every withdrawal pass has forced 0 (and so has the ended table's
// e_expire entry for P_WD).
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
		{mutant{"withdrawal-none-waiting-walks", "a withdrawal at a level where nobody waits is refused at once",
			"(1, _, 0) : w0_none1();", "(1, _, 0) : w0_go1();"}, "withdraw"},
		{mutant{"withdrawal-none-waiting-walks-level0", "a withdrawal at a level where nobody waits is refused at once",
			"(0, 0, _) : w0_none0();", "(0, 0, _) : w0_go0();"}, "withdraw"},
		{mutant{"withdrawal-walk-uncounted", "the withdrawal walk counts down the live requests it passes",
			"(_, _, _, SS_LIVE) : ws_go_live();", "(_, _, _, SS_LIVE) : ws_go();"}, "withdraw"},
		{mutant{"unrouted-answer-uncounted", "an answer with no route to its client is counted as a no-route drop",
			"(_, _, _, _, _, _, 1, 1, 0) : o_drop_noroute();", "(_, _, _, _, _, _, 1, 1, 0) : o_drop();"}, "routing"},
		{mutant{"probe-level0-no-slots", "a probe of level 0 of a lock with no slots there is a bad request",
			"(0, 0) : ap_bad0();", "(0, 0) : ap_go0();"}, "admin"},
		{mutant{"probe-level1-no-slots", "a probe of level 1 of a lock with no slots there is a bad request",
			"(_, 0) : ap_bad1();", "(_, 0) : ap_go1();"}, "admin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := mutate(t, dataplane.TNA, c.from, c.to)
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

// TestTNAMutantsFailInterleaved is the interleavings' negative control, as
// TestTNAMutantsFailScenarios is the scenarios': each mutant of p4/tna/netlock.p4 must fail the
// ilCases case named (the faults only an interleaving reaches: the engine runs a packet's passes
// to their end before the next packet, so no scenario or differential test can).
func TestTNAMutantsFailInterleaved(t *testing.T) {
	for _, c := range []struct {
		mutant
		il string
	}{
		{mutant{"withdrawal-walk-past-its-steps", "the withdrawal walk ends when its steps run out",
			"(_, _, 1, _) : ws_stop();", "(_, _, 1, _) : ws_go();"}, "withdrawal-walk-ends-when-its-steps-run-out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := mutate(t, dataplane.TNA, c.from, c.to)
			var il *ilCase
			for i := range ilCases {
				if ilCases[i].name == c.il {
					il = &ilCases[i]
				}
			}
			if il == nil {
				t.Fatalf("no interleaving %q in ilCases", c.il)
			}
			msg := ilRun(t, src, il.regions, il.steps)
			if msg == "" {
				t.Fatalf("mutant %s (breaks: %s) passed interleaving %s", c.name, c.rule, c.il)
			}
			t.Logf("caught (%s): %s", c.rule, msg)
		})
	}
}
