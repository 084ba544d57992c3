package modelfig

import (
	"fmt"
	"io"

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

// netChainName names a NetChain row with its retries: rejects per grant in the window.
func netChainName(r Result) string {
	return fmt.Sprintf("NetChain (switch only, %.2f rejects/grant)", float64(r.Counters.Rejects)/float64(max(r.Counters.Granted, 1)))
}

// netChainNote says what the NetChain rows are and how they differ from the paper's NetChain.
func (f *Figure) netChainNote(w io.Writer) {
	var nc *Result
	for i := range f.Results {
		if f.Results[i].NetChain != nil {
			nc = &f.Results[i]
			break
		}
	}
	if nc == nil {
		return
	}
	slots := nc.NetChain.Slots
	if slots == 0 {
		slots = netchain.DefaultSlots
	}
	b := nc.NetChain.Backoff
	if b.Base == 0 {
		b = client.DefaultNetChainBackoff
	}
	lat := PaperNetChainLatency[f.Name]
	fmt.Fprintf(w, "\nNetChain: the same rack with p4/netchain/netchain.p4 as the switch (on the engine, as netlock.p4) and no "+
		"lock server or controller: %d lock slots, every TPC-C lock hashed onto one (client.NetChainLocks: NetLock \"adapt[s] "+
		"the lock granularity\" so that NetChain holds every lock), every lock exclusive, no queue: an acquire of a held slot "+
		"is rejected and the client sends it again after %v doubling to %v with equal jitter (client.NetChainBackoff; neither "+
		"paper gives the backoff), holding the locks it has (the slots are taken in ascending order, so the retries do not "+
		"deadlock). Not modelled: NetChain's chain replication over several switches (one switch answers, nothing is "+
		"replicated) and its failure handling; a grant has no lease. The paper's latency reductions over NetChain (up to "+
		"%.1fx average, %.1fx tail) are beside the mean / p99 column above.\n", slots, b.Base, b.Max, lat[0], lat[1])
}
