package dpengine

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// Negative controls for Tofino's register rules: copies of p4/tna/netlock.p4, generated from
// the program as it is (so that they follow it), that break a rule must be refused when they
// are loaded, with the lines named. The engine enforces the rules for every TNA program
// (bmv2/engine/tna_rules.go); these tests show that the program's own register actions are
// within its reach.

// stageBlocks returns the program's stage blocks: for each "/* ===... stage: NAME ===... */"
// marker of the ingress, the line range up to the next marker (1-based, inclusive).
func stageBlocks(src string) map[string][2]int {
	lines := strings.Split(src, "\n")
	marker := regexp.MustCompile(`^\s*/\* =+ (stage: [^=]+?|decisions|[a-z ]+?) =+ \*/`)
	blocks := map[string][2]int{}
	name, start := "", 0
	for i, l := range lines {
		m := marker.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if name != "" {
			blocks[name] = [2]int{start, i}
		}
		name, start = strings.TrimPrefix(m[1], "stage: "), i+1
	}
	return blocks
}

// tableExec is the first register action call (of actions) in the actions of table name, as
// lines declare them, and its line (1-based); "" if none.
func tableExec(lines []string, name string, exec *regexp.Regexp, actions map[string]string) (string, int) {
	decl := regexp.MustCompile(`^\s*table ` + name + ` \{`)
	list := regexp.MustCompile(`^\s*actions = \{([^}]*)\}`)
	for i, l := range lines {
		if !decl.MatchString(l) {
			continue
		}
		for _, l := range lines[i:] {
			m := list.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			for _, a := range strings.Split(m[1], ";") {
				head := regexp.MustCompile(`^\s*action ` + strings.TrimSpace(a) + `\(`)
				for j, al := range lines {
					if !head.MatchString(al) {
						continue
					}
					if x := exec.FindStringSubmatch(al); x != nil && actions[x[1]] != "" {
						return x[0], j + 1
					}
				}
			}
			return "", 0
		}
	}
	return "", 0
}

// registerActions maps each RegisterAction of the TNA program's ingress to its register.
func registerActions(t *testing.T) map[string]string {
	checked, err := CheckProgram(dataplane.TNA, dataplane.DefaultSizing)
	if err != nil {
		t.Fatal(err)
	}
	pipes, err := checked.TNAPipes()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range pipes[0].Ingress.Control.Locals {
		inst, ok := d.(*front.InstanceDecl)
		if !ok || len(inst.Args) == 0 {
			continue
		}
		if et, ok := inst.T.(*front.ExternType); ok && et.Decl.Name == "RegisterAction" {
			if n, ok := inst.Args[0].Value.(*front.NameExpr); ok {
				out[inst.Name] = n.Name
			}
		}
	}
	return out
}

// TestTNARulesRefuseTwoActions: for each per-lock register, a copy of the program that runs a
// second register action of it right after its stage block (in the same pass as the block's
// own) is refused, naming both lines.
func TestTNARulesRefuseTwoActions(t *testing.T) {
	src := string(dataplane.TNA.Source)
	blocks := stageBlocks(src)
	actions := registerActions(t)
	lines := strings.Split(src, "\n")
	exec := regexp.MustCompile(`(\w+)\.execute\(([^)]*)\)`)
	apply := regexp.MustCompile(`^\s*(\w+)\.apply\(\);`)
	tested := 0
	for _, block := range []string{"lk_floor", "lk_buf", "lk_q, lk_q_hi", "lk_state", "lk_wait", "the grant counter", "the heads",
		"the tails", "gnext", "the cookie", "ended requests"} {
		r, ok := blocks[block]
		if !ok {
			t.Fatalf("no stage block %q in p4/%s (blocks: %v): update the test", block, dataplane.TNA.File, blocks)
		}
		// The block's first register action call, in the block or in an action of a table
		// it applies (decision tables: pass_type's comment): run it again after the block.
		first, line := "", 0
		var sites []int // lines an error may name as the register's first use: the call's
		for i := r[0]; i < r[1] && first == ""; i++ {
			if m := exec.FindStringSubmatch(lines[i]); m != nil && actions[m[1]] != "" {
				first, line = m[0], i+1
			} else if m := apply.FindStringSubmatch(lines[i]); m != nil {
				if call, at := tableExec(lines, m[1], exec, actions); call != "" {
					first, line = call, i+1
					sites = append(sites, at)
				}
			}
		}
		if first == "" {
			t.Fatalf("stage block %q has no register action", block)
		}
		register := actions[exec.FindStringSubmatch(first)[1]]
		t.Run(register, func(t *testing.T) {
			tested++
			copyLines := append([]string(nil), lines[:r[1]]...)
			copyLines = append(copyLines, "        "+first+";")
			copyLines = append(copyLines, lines[r[1]:]...)
			added := r[1] + 1
			err := loadCopy(strings.Join(copyLines, "\n"))
			want := fmt.Sprintf("register %s is accessed by two register actions in one pass", register)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("the copy with a second action of %s after line %d loaded: %v (want %q)", register, r[1], err, want)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), fmt.Sprintf("netlock.p4:%d:", added)) {
				t.Errorf("the error does not name the added line %d: %v", added, err)
			}
			// The block's first site, or another of the block's sites of the register (for a
			// table, its action's call), is named.
			named := false
			for i := r[0]; i < r[1]; i++ {
				if strings.Contains(err.Error(), fmt.Sprintf("netlock.p4:%d:", i+1)) {
					named = true
				}
			}
			for _, at := range sites {
				if strings.Contains(err.Error(), fmt.Sprintf("netlock.p4:%d:", at)) {
					named = true
				}
			}
			if !named {
				t.Errorf("the error names no line of the %s block (lines %d-%d, first action at %d): %v", register, r[0]+1, r[1], line, err)
			}
		})
	}
	if tested < 10 {
		t.Errorf("%d registers tested", tested)
	}
	// The pool's register actions run from macros: a second action of the grant-number
	// register after its stage block.
	r, ok := blocks["the pool's grant number and time"]
	if !ok {
		t.Fatalf("no stage block of the pool's s_hold in p4/%s: update the test", dataplane.TNA.File)
	}
	copyLines := append(append(append([]string(nil), lines[:r[1]]...), "        hold_chk.execute(meta.hd_idx);"), lines[r[1]:]...)
	err := loadCopy(strings.Join(copyLines, "\n"))
	if actions["hold_chk"] != "s_hold" || err == nil ||
		!strings.Contains(err.Error(), "register s_hold is accessed by two register actions in one pass") ||
		!strings.Contains(err.Error(), fmt.Sprintf("netlock.p4:%d:", r[1]+1)) {
		t.Errorf("a second action of s_hold after line %d: %v", r[1], err)
	} else {
		t.Log(err)
	}
}

// TestTNARulesRefuseWide: copies that update a register with 64-bit arithmetic are refused,
// naming the line: the grant counter's low half made a 64-bit cell, and the floor compared as
// one 64-bit value inside its register action.
func TestTNARulesRefuseWide(t *testing.T) {
	src := string(dataplane.TNA.Source)
	lineOf := func(s, sub string) int {
		i := strings.Index(s, sub)
		if i < 0 {
			t.Fatalf("%q is not in p4/%s: update the test", sub, dataplane.TNA.File)
		}
		return strings.Count(s[:i], "\n") + 1
	}
	// 1. lk_tok as a 64-bit cell: every register action of lk_tok on bit<64>.
	cell := src
	reg := "Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_tok;"
	if strings.Count(cell, reg) != 1 {
		t.Fatalf("%q is not in p4/%s once: update the test", reg, dataplane.TNA.File)
	}
	cell = strings.Replace(cell, reg, "Register<bit<64>, lock_t>(NETLOCK_LOCKS) lk_tok;", 1)
	ra := regexp.MustCompile(`(?s)RegisterAction<bit<32>, lock_t, bit<32>>\(lk_tok\) (\w+) = \{\s*void apply\(inout bit<32> v`)
	n := 0
	cell = ra.ReplaceAllStringFunc(cell, func(m string) string {
		n++
		return strings.Replace(strings.Replace(m, "<bit<32>, lock_t, bit<32>>", "<bit<64>, lock_t, bit<32>>", 1),
			"inout bit<32> v", "inout bit<64> v", 1)
	})
	if n < 2 {
		t.Fatalf("%d register actions of lk_tok found: update the test", n)
	}
	cell = strings.Replace(cell, "rv = v;\n            /* v + 1 == 0", "rv = v[31:0];\n            /* v + 1 == 0", 1)
	cell = strings.Replace(cell, "void apply(inout bit<64> v, out bit<32> rv) { rv = v; }", "void apply(inout bit<64> v, out bit<32> rv) { rv = v[31:0]; }", 1)
	cell = strings.Replace(cell, "void apply(inout bit<64> v) { v = hdr.recirc.a_lo; }", "void apply(inout bit<64> v) { v = ADM_HI ++ hdr.recirc.a_lo; }", 1)
	first := lineOf(cell, "RegisterAction<bit<64>, lock_t, bit<32>>(lk_tok)")
	err := loadCopy(cell)
	if err == nil || !strings.Contains(err.Error(), "not bit<64>") || !strings.Contains(err.Error(), "lk_tok") {
		t.Errorf("lk_tok with 64-bit cells: %v, want a refusal of the 64-bit cell", err)
	} else if !strings.Contains(err.Error(), fmt.Sprintf("netlock.p4:%d:", first)) {
		t.Errorf("the error does not name line %d (the first register action of lk_tok): %v", first, err)
	}

	// 2. The floor's low half compared as part of one 64-bit value.
	cmp := "            if (meta.tseq_lo > v) { rv = 1; }"
	if strings.Count(src, cmp) != 1 {
		t.Fatalf("the floor comparison is not in p4/%s once: update the test", dataplane.TNA.File)
	}
	// (Zero-extended: with meta.tseq_hi in it, the register would read three PHV inputs, an
	// error of its own.)
	wide := strings.Replace(src, cmp, "            if ((32w0 ++ meta.tseq_lo) > (32w0 ++ v)) { rv = 1; }", 1)
	at := lineOf(wide, "if ((32w0 ++ meta.tseq_lo) > (32w0 ++ v))")
	err = loadCopy(wide)
	if err == nil || !strings.Contains(err.Error(), "computes on 64 bits") {
		t.Errorf("a 64-bit comparison in floor_lo_cmp: %v, want a refusal", err)
	} else if !strings.Contains(err.Error(), fmt.Sprintf("netlock.p4:%d:", at)) {
		t.Errorf("the error does not name line %d: %v", at, err)
	}

	// The program itself loads (the positive control).
	if err := loadCopy(src); err != nil {
		t.Fatalf("p4/%s: %v", dataplane.TNA.File, err)
	}
}

// loadCopy checks and loads a version of the TNA program.
func loadCopy(src string) error {
	s := dataplane.Sizing{Locks: 8, PartBits: 6}
	checked, err := checkSource(dataplane.TNA, s, []byte(src))
	if err != nil {
		return err
	}
	_, err = engine.Load(checked, engine.Config{})
	return err
}
