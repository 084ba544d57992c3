package tofino

func DebugMergeable(g *Graph, t *Table) bool { return t.Kind != TGateway || g.mergeable(t) }
