package modelfig

import (
	"fmt"
	"io"
	"strings"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/p4/netchain"
)

// PaperNetChain is NetLock's transaction throughput over NetChain's in the paper's text: Figure 10
// by contention (3.5x low, 4.4x high), Figure 11 "up to" 5.5x (section 6.3).
var PaperNetChain = map[string]float64{"low": 3.5, "high": 4.4, "fig11-max": 5.5}

// PaperNetChainLatency is NetLock's reduction of NetChain's average and tail transaction latency
// in the text ("up to"): Figure 10 5.4x and 23.1x, Figure 11 7.7x and 34.4x.
var PaperNetChainLatency = map[string][2]float64{"fig10": {5.4, 23.1}, "fig11": {7.7, 34.4}}

// paperNetChain is the paper's NetLock / NetChain throughput ratio for the figure's contention.
func (f *Figure) paperNetChain(contention string) string {
	if f.Name == "fig11" {
		return fmt.Sprintf("up to %.1fx", PaperNetChain["fig11-max"])
	}
	if v, ok := PaperNetChain[contention]; ok {
		return fmt.Sprintf("%.1fx", v)
	}
	return ""
}

// netChainName names a NetChain row with its client policy and its retries: rejects per grant
// in the window, for the rollback rule rollbacks per committed transaction, and the workers
// that committed nothing in the window.
func netChainName(r Result) string {
	c := r.Counters
	p := client.NetChainPolicy{}
	if r.NetChain != nil {
		p = r.NetChain.Policy
	}
	s := fmt.Sprintf("NetChain, %v (switch only, %.2f rejects/grant", p, float64(c.Rejects)/float64(max(c.Granted, 1)))
	if p.Rule == client.NetChainRollback {
		s += fmt.Sprintf(", %.2f rollbacks/txn", float64(c.Rollbacks)/float64(max(c.Txns, 1)))
	}
	return s + fmt.Sprintf(", %d of %d workers without a commit)", r.Stalled, r.Clients*r.Workers)
}

// netChainNote says what the NetChain rows are and how they differ from the paper's NetChain.
func (f *Figure) netChainNote(w io.Writer) {
	var nc *Result
	rollback := false
	for i := range f.Results {
		if r := &f.Results[i]; r.NetChain != nil {
			if nc == nil {
				nc = r
			}
			rollback = rollback || r.NetChain.Policy.Rule == client.NetChainRollback
		}
	}
	if nc == nil {
		return
	}
	slots := nc.NetChain.Slots
	if slots == 0 {
		slots = netchain.DefaultSlots
	}
	b := nc.NetChain.Policy.Backoff
	if b.Base == 0 {
		b = client.DefaultNetChainBackoff
	}
	lat := PaperNetChainLatency[f.Name]
	fmt.Fprintf(w, "\nNetChain: the same rack with p4/netchain/netchain.p4 as the switch (on the engine, as netlock.p4) and no "+
		"lock server or controller: %d lock slots, every TPC-C lock hashed onto one (client.NetChainLocks: NetLock \"adapt[s] "+
		"the lock granularity\" so that NetChain holds every lock), every lock exclusive, no queue: an acquire of a held slot "+
		"is rejected. With \"backoff\" the client sends it again after %v doubling to %v with equal jitter (client.NetChainBackoff; neither "+
		"paper gives the backoff), holding the locks it has (the slots are taken in ascending order, so the retries do not "+
		"deadlock).", slots, b.Base, b.Max)
	if rollback {
		fmt.Fprint(w, " With \"rollback\" it runs NetLock's own client code's rule (client.NetChainRollback, from "+
			"netx-repo/NetLock's dpdk_code/client_code/client.c): a rejected acquire is sent again at once, and a run of a "+
			"transaction not granted every lock within timeout_slot (400 µs by default; console.py runs NetChain with 1000 µs) "+
			"is rolled back, every held lock released (the acquires out drained: each sent again until granted, then "+
			"released), and the same transaction runs again after r x timeout_slot / 400 x 30 µs, r uniform in 0..9; a "+
			"rerun's timer runs from the rollback's end. Without \"burst\" the client takes one lock at a time in "+
			"ascending order, as the rack's NetLock clients; with it, as client.c, it sends every acquire of a run at once.")
	}
	fmt.Fprintf(w, " Not modelled: NetChain's chain replication over several switches (one switch answers, nothing is "+
		"replicated) and its failure handling; a grant has no lease. The paper's latency reductions over NetChain (up to "+
		"%.1fx average, %.1fx tail) are beside the mean / p99 column above.\n", lat[0], lat[1])
}

// clientCName names a NetLock row whose clients run client.c's rule, with its rollbacks.
func clientCName(r Result) string {
	c := r.Counters
	p := client.NetChainPolicy{}
	if r.ClientC != nil {
		p = *r.ClientC
	}
	return fmt.Sprintf("netlock, client.c: %v (%.2f rollbacks/txn, %d of %d workers without a commit)", p,
		float64(c.Rollbacks)/float64(max(c.Txns, 1)), r.Stalled, r.Clients*r.Workers)
}

// clientCTable compares NetLock and NetChain with client.c's clients on both sides (every
// acquire of a run in one burst, rolled back at the deadline), as the paper's runs had: NetLock
// over NetChain, transactions per second, for each pair of timeouts.
func (f *Figure) clientCTable(w io.Writer) {
	type side struct{ label, name string }
	var nl, nc []side
	for _, v := range Fig10NetlockClientCs {
		nl = append(nl, side{v.Label, v.Policy.String()})
	}
	for _, v := range Fig10NetChains {
		if v.Policy.Burst {
			nc = append(nc, side{v.Label, v.Policy.String()})
		}
	}
	if f.find(fig10Phases[0].phase+", "+nl[0].label, -1) == nil || f.find(fig10Phases[0].phase+", "+nc[0].label, -1) == nil {
		return
	}
	fmt.Fprintln(w, "\nclient.c on both sides (NetLock's own client code, every acquire of a run in one burst, rolled back at "+
		"timeout_slot; console.py ran NetLock with 2 ms for Figure 10 and NetChain with 1 ms): NetLock / NetChain, TPS.")
	fmt.Fprint(w, "\n| TPC-C |")
	for _, a := range nl {
		for _, b := range nc {
			fmt.Fprintf(w, " NetLock %s / NetChain %s |", strings.TrimSuffix(a.name, ", burst"), strings.TrimSuffix(b.name, ", burst"))
		}
	}
	fmt.Fprint(w, " paper |\n|---|")
	for range len(nl) * len(nc) {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w, "---:|")
	for _, ph := range fig10Phases {
		fmt.Fprintf(w, "| %s |", ph.phase)
		for _, a := range nl {
			for _, b := range nc {
				x, y := f.find(ph.phase+", "+a.label, -1), f.find(ph.phase+", "+b.label, -1)
				if x == nil || y == nil {
					fmt.Fprint(w, "  |")
					continue
				}
				fmt.Fprintf(w, " %s |", ratio(x.TPS, y.TPS))
			}
		}
		fmt.Fprintf(w, " %s |\n", f.paperNetChain(ph.contention))
	}
}
