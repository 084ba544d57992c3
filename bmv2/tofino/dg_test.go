package tofino

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
)

func TestDGDump(t *testing.T) {
	f := os.Getenv("DG_FILE")
	if f == "" {
		t.Skip()
	}
	prog, err := front.LoadOptions(f, front.Options{Defines: map[string]string{"NETLOCK_PART_BITS": "14"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeOf(prog)
	if err != nil {
		t.Fatal(err)
	}
	m := graphModel{bitSlices: os.Getenv("SL") != ""}
	g, err := m.build(p.Ingress.Control, prog.Const)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.Create("/tmp/dg.txt")
	for _, x := range g.Tables {
		by := "-"
		if x.By != nil {
			by = fmt.Sprintf("%s@%d:%s", x.By.Name, x.By.P.Line, x.ByK)
		}
		fmt.Fprintf(out, "%s %d %d %s\n", x.Name, x.Stage, x.P.Line, by)
	}
	out.Close()
	fmt.Println("stages", g.Stages)
	for _, w := range strings.Split(os.Getenv("DG_WHY"), ",") {
		if n, l, ok := strings.Cut(w, "@"); ok {
			ln, _ := strconv.Atoi(l)
			why(g, n, ln)
		}
	}
	for _, x := range g.Chain() {
		by := ""
		if x.By != nil {
			by = x.ByK.String()
		}
		fmt.Println(x.Stage, x.Name, by)
	}
}

func dumpArms(g *Graph, names ...string) {
	for _, t := range g.Tables {
		for _, n := range names {
			if fmt.Sprintf("%s@%d", t.Name, t.P.Line) == n {
				fmt.Println(n, t.arms, t.ctl != nil)
			}
		}
	}
}

func why(g *Graph, name string, line int) {
	for _, t := range g.Tables {
		if t.Name == name && t.P.Line == line && t.By != nil {
			u := t.By
			fmt.Println(name, "by", u.Name, u.P.Line, t.ByK)
			for k := range t.writes {
				for r := range u.match {
					if strings.HasPrefix(k, r) || strings.HasPrefix(r, k) {
						fmt.Println("  writes", k, t.writes[k], "match-read", r, u.match[r])
					}
				}
				for r := range u.action {
					if strings.HasPrefix(k, r) || strings.HasPrefix(r, k) {
						fmt.Println("  writes", k, t.writes[k], "action-read", r, u.action[r])
					}
				}
				if len(u.match[k]) > 0 || len(u.action[k]) > 0 {
					fmt.Println("  writes", k, t.writes[k], "read", u.match[k], u.action[k])
				}
			}
			for k := range u.writes {
				if len(t.match[k]) > 0 || len(t.action[k]) > 0 || len(t.writes[k]) > 0 {
					fmt.Println("  u writes", k, u.writes[k], "t", t.match[k], t.action[k], t.writes[k])
				}
			}
		}
	}
}
