package tofino

// This file counts the logical tables of a table dependency graph: the IDs bf-p4c's table
// placement gives them, 16 a stage on Tofino 1 and 2, ingress and egress together (a stage's
// logical table IDs are one space). A program with more than Stages x 16 of them fits no layout
// of one pass, whatever its critical path.

// LogicalIDs is the number of logical table IDs a stage has (Tofino 1 and 2).
const LogicalIDs = 16

// LogicalTables counts the logical tables the graph's tables take: one for every table (a run
// of statements, an action called from the apply block, a table applied), and one for every
// gateway that merges with no table. bf-p4c merges a gateway with a table of one of its
// branches (mau/table_placement.cpp, gateway_merge_choices): a table that runs directly in the
// branch, not under an if nested in it, that is not a gateway itself, and that no table before
// it in the branch orders (a dependency of any kind on a table of the branch before it, or on
// one running under such a table: the sequence's TableSeqDeps and happens_logi_before). A
// gateway whose branches hold only ifs, or only tables that wait for others of their branch,
// takes an ID of its own. Not modelled: the tables a branch shares with another sequence
// (none in the programs the model builds, which copies nothing), the liveness checks of dark
// containers, and gateways bf-p4c splits ($split) when one does not fit a stage.
func (g *Graph) LogicalTables() (tables, gateways int) {
	for _, t := range g.Tables {
		if t.Kind != TGateway {
			tables++
		} else if !g.mergeable(t) {
			gateways++
		}
	}
	return tables, gateways
}

// mergeable reports whether gateway gw has a table it can merge with.
func (g *Graph) mergeable(gw *Table) bool {
	depth := len(gw.arms) // a table of gw's branches has gw's arm at this index
	for _, x := range g.Tables[gw.idx+1 : gw.end] {
		if x.ctl != gw || x.Kind == TGateway {
			continue
		}
		ordered := false
		for _, e := range x.in {
			u := e.from
			if u.idx > gw.idx && u.idx < x.idx && len(u.arms) > depth && u.arms[depth] == x.arms[depth] {
				ordered = true
				break
			}
		}
		if !ordered {
			return true
		}
	}
	return false
}

// StageBound is the fewest stages the logical tables of the graphs (a pipe's ingress and
// egress, whose tables share a stage's IDs) fit in, given each one's earliest stage
// (Table.Stage): the tables that can go no earlier than stage s take (stages - s) x 16 IDs at
// least, so the pipe needs s + ceil(n_s / 16) stages, n_s their count, for every s. Each
// table counts once and each gateway that merges with no table once, at its own earliest
// stage. It is a bound, not a placement: bf-p4c's first placement round put the TNA program in
// this many stages or up to two more at every commit compared (docs/dataplane.md, "The real
// compiler").
func StageBound(graphs ...*Graph) int {
	at := map[int]int{} // logical tables by earliest stage
	last := 0
	for _, g := range graphs {
		if g == nil {
			continue
		}
		for _, t := range g.Tables {
			if t.Kind == TGateway && g.mergeable(t) {
				continue
			}
			at[t.Stage]++
			last = max(last, t.Stage)
		}
	}
	bound, n := 0, 0
	for s := last; s >= 0; s-- {
		n += at[s]
		if n > 0 {
			bound = max(bound, s+(n+LogicalIDs-1)/LogicalIDs)
		}
	}
	return bound
}
