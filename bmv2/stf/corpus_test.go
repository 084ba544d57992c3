package stf

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/internal/testenv"
)

// TestP4CCorpus runs p4c's p4_16_samples/*.stf v1model tests when NETLOCK_P4C_SAMPLES names
// the extracted directory (never committed). It prints the pass rate and failure groups; it
// fails only if the runner itself panics.
func TestP4CCorpus(t *testing.T) {
	dir := testenv.OptIn(t, "NETLOCK_P4C_SAMPLES", "p4c's testdata/p4_16_samples (docs/p4.md, Conformance)")
	stfs, _ := filepath.Glob(filepath.Join(dir, "*.stf"))
	sort.Strings(stfs)
	v1 := regexp.MustCompile(`#include\s*<v1model.p4>`)
	var total, accepted, passed int
	groups := map[string][]string{}
	for _, s := range stfs {
		p4 := strings.TrimSuffix(s, ".stf") + ".p4"
		src, err := os.ReadFile(p4)
		if err != nil || !v1.Match(src) {
			continue
		}
		total++
		base := filepath.Base(p4)
		checked, err := front.Load(p4)
		if err != nil {
			continue
		}
		accepted++
		group, ok := runOne(checked, s)
		if ok {
			passed++
			continue
		}
		groups[group] = append(groups[group], base)
	}
	// Also compile every v1model sample the front end accepts (with or without .stf).
	all, _ := filepath.Glob(filepath.Join(dir, "*.p4"))
	var nAll, nLoaded int
	var panics []string
	loadFail := map[string][]string{}
	for _, p4 := range all {
		src, err := os.ReadFile(p4)
		if err != nil || !v1.Match(src) {
			continue
		}
		checked, err := front.Load(p4)
		if err != nil {
			continue
		}
		nAll++
		sw, err := engine.Load(checked, engine.Config{})
		if err != nil {
			msg := err.Error()
			if i := strings.Index(msg, "not supported"); i >= 0 {
				msg = msg[i:]
			}
			k := numRE.ReplaceAllString(firstLine(msg), "N")
			loadFail[k] = append(loadFail[k], filepath.Base(p4))
			continue
		}
		nLoaded++
		if msg := shake(sw, 200, false); msg != "" {
			panics = append(panics, filepath.Base(p4)+": "+msg)
		}
	}
	t.Logf("random packets (200 per compiled sample, 0-95 bytes, random ports): %d samples panicked", len(panics))
	for _, p := range panics {
		t.Logf("  panic: %s", p)
	}
	t.Logf("v1model samples accepted by the front end: %d; compiled by the engine: %d (%.1f%%)", nAll, nLoaded, 100*float64(nLoaded)/float64(max(nAll, 1)))
	for k, v := range loadFail {
		t.Logf("  load failure %3d  %s: %s", len(v), k, strings.Join(v, " "))
	}
	t.Logf("v1model STF tests: %d; accepted by the front end: %d; passed: %d (%.1f%% of accepted)", total, accepted, passed, 100*float64(passed)/float64(max(accepted, 1)))
	type g struct {
		k string
		v []string
	}
	var gs []g
	for k, v := range groups {
		gs = append(gs, g{k, v})
	}
	sort.Slice(gs, func(i, j int) bool {
		return len(gs[i].v) > len(gs[j].v) || len(gs[i].v) == len(gs[j].v) && gs[i].k < gs[j].k
	})
	for _, x := range gs {
		t.Logf("%3d  %s: %s", len(x.v), x.k, strings.Join(x.v, " "))
	}
}

var numRE = regexp.MustCompile(`[0-9]+`)

func runOne(checked *front.Checked, stfPath string) (group string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			group, ok = fmt.Sprintf("panic: %v", r), false
			if len(group) > 90 {
				group = group[:90]
			}
		}
	}()
	now := time.Unix(1000, 0)
	sw, err := engine.Load(checked, engine.Config{Now: func() time.Time { now = now.Add(time.Microsecond); return now }})
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "not supported"); i >= 0 {
			msg = msg[i:]
		}
		return "load: " + numRE.ReplaceAllString(firstLine(msg), "N"), false
	}
	f, err := os.Open(stfPath)
	if err != nil {
		return "open", false
	}
	defer f.Close()
	cmds, err := Parse(f)
	if err != nil {
		return "stf parse", false
	}
	res, err := Run(sw, cmds)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return "stf: " + numRE.ReplaceAllString(firstLine(msg), "N"), false
	}
	if !res.Passed() {
		m := res.Failures[0]
		switch {
		case strings.Contains(m, "expected") && strings.Contains(m, "packets, got"):
			return "wrong number of output packets", false
		case strings.Contains(m, "processing packet"):
			return "runtime: " + numRE.ReplaceAllString(firstLine(m[strings.Index(m, "processing packet"):]), "N"), false
		case strings.Contains(m, "counter") || strings.Contains(m, "register"):
			return "wrong counter/register value", false
		}
		return "wrong packet contents", false
	}
	return "", true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// shake sends random packets through sw and reports the first panic.
func shake(sw *engine.Switch, n int, failOnErr bool) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = firstLine(fmt.Sprint(r))
		}
	}()
	rng := rand.New(rand.NewPCG(7, 9))
	buf := make([]byte, 96)
	for i := 0; i < n; i++ {
		b := buf[:rng.IntN(len(buf))]
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		if i%3 == 0 && len(b) > 14 {
			b[12], b[13] = 0x08, 0x00
		}
		if _, err := sw.Process(rng.IntN(8), b); err != nil && failOnErr {
			return fmt.Sprintf("packet %X: %v", b, err)
		}
	}
	return ""
}
