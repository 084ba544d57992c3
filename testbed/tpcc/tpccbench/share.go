package tpccbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/testbed/tpcc"
)

// PaperShare is the switch's share of lock requests by switch slots that NetLock's own console
// script lists for its TPC-C runs (console.py, run_think_time: percent_dic, ten warehouses, ten
// client machines; the dictionary is unused by the script, the only record of the shares its
// allocations reached).
var PaperShare = map[int]float64{2000: 0.3292, 4000: 0.3716, 6000: 0.3976, 8000: 0.4166, 10000: 0.4316,
	12000: 0.4442, 14000: 0.4551, 16000: 0.4644, 18000: 0.4730, 20000: 0.4805, 30000: 0.5105, 40000: 0.5325,
	50000: 0.5500, 60000: 0.5643, 70000: 0.5769, 80000: 0.5875, 90000: 0.5972, 100000: 0.6059, 110000: 0.6140,
	120000: 0.6213, 130000: 0.6282}

// ShareOptions configure the switch-share sweep of the Figure 13 audit. Zero fields take the
// defaults in parentheses.
type ShareOptions struct {
	// Profiles (dslr-trace, dslr-nurand, spec) and total Warehouses (10: NetLock's low
	// contention as its traces held it; 100: ten per client machine, the rack model's tpcc-low).
	Profiles   []tpcc.Profile
	Warehouses []int
	// Terminals is the client threads (40: ten client machines with four sending cores, NetLock's
	// TPC-C runs) and Txns the transactions per terminal of the traces (1500, 5000).
	Terminals int
	Txns      []int
	// Slots are the switch sizes (2000, 4000, 10000, 30000, 100000, 130000: the paper's text says
	// 100 000, its code 130 000) and MaxLocks the switch's lock limit (55 000, NetLock's Tofino
	// program; -1: none). MaxContention caps c_i (0: the terminals that ask for the lock).
	Slots                   []int
	MaxLocks, MaxContention int
	// Ratio is a switch grant's latency over a server grant's for the latency bound (0.5).
	Ratio float64
	// Seed seeds the workload (1); the fresh traces use Seed+1.
	Seed uint64
}

func (o *ShareOptions) fill() {
	if len(o.Profiles) == 0 {
		o.Profiles = []tpcc.Profile{tpcc.DSLRTrace, tpcc.DSLRNURand, tpcc.Spec}
	}
	if len(o.Warehouses) == 0 {
		o.Warehouses = []int{10, 100}
	}
	if o.Terminals == 0 {
		o.Terminals = 40
	}
	if len(o.Txns) == 0 {
		o.Txns = []int{1500, 5000}
	}
	if len(o.Slots) == 0 {
		o.Slots = []int{2000, 4000, 10000, 30000, 100000, 130000}
	}
	if o.MaxLocks == 0 {
		o.MaxLocks = 55000
	}
	if o.MaxLocks < 0 {
		o.MaxLocks = 0
	}
	if o.Ratio == 0 {
		o.Ratio = 0.5
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// SharePoint is one trace and switch size.
type SharePoint struct {
	Profile    string `json:"profile"`
	Warehouses int    `json:"warehouses"`
	Terminals  int    `json:"terminals"`
	Txns       int    `json:"txns_per_terminal"`
	Requests   int    `json:"requests"`
	Distinct   int    `json:"distinct_locks"`
	Slots      int    `json:"slots"`
	// Locks and UsedSlots: what the knapsack placed.
	Locks     int `json:"locks"`
	UsedSlots int `json:"used_slots"`
	// InSample is the knapsack's share on the trace it was computed from (NetLock replayed the
	// traces it allocated from); Fresh on new transactions of the same terminals (a generator:
	// an allocation measured on the past, run on the future). RandomInSample and RandomFresh
	// are the random strawman's.
	InSample, Fresh, RandomInSample, RandomFresh float64
	// Paper is NetLock's recorded share at this size (PaperShare; ten warehouses), 0 if none.
	Paper float64 `json:"paper,omitempty"`
	// Caps on fresh transactions: 1/(1-s) against servers only, (1-s_random)/(1-s) against the
	// strawman, and the latency bounds for the options' Ratio.
	ServerBound, OverRandom, LatencySeq, LatencyPipelined float64
	// ByTable is the share of all requests the switch grants, by table, on fresh transactions.
	ByTable map[string]float64 `json:"by_table"`
}

// RunShares runs the sweep.
func RunShares(ctx context.Context, o ShareOptions, progress func(done, total int, p SharePoint)) ([]SharePoint, error) {
	o.fill()
	total := len(o.Profiles) * len(o.Warehouses) * len(o.Txns) * len(o.Slots)
	var out []SharePoint
	for _, prof := range o.Profiles {
		for _, w := range o.Warehouses {
			wl, err := tpcc.New(tpcc.Config{Warehouses: w, Profile: prof, Seed: o.Seed})
			if err != nil {
				return out, err
			}
			for _, n := range o.Txns {
				if err := ctx.Err(); err != nil {
					return out, err
				}
				var tr, fresh tpcc.Trace
				wl.Generate(&tr, o.Terminals, n, o.Seed)
				wl.Generate(&fresh, o.Terminals, n, o.Seed+1)
				ds := tr.Demands()
				for _, sl := range o.Slots {
					ac := tpcc.AllocConfig{Slots: sl, MaxLocks: o.MaxLocks, MaxContention: o.MaxContention}
					k := tpcc.Allocate(ds, ac)
					ac.Strategy, ac.Seed = alloc.StrategyRandom, o.Seed
					r := tpcc.Allocate(ds, ac)
					in, fr := tpcc.Analyze(&tr, k), tpcc.Analyze(&fresh, k)
					rin, rfr := tpcc.Analyze(&tr, r), tpcc.Analyze(&fresh, r)
					p := SharePoint{Profile: prof.String(), Warehouses: w, Terminals: o.Terminals, Txns: n,
						Requests: tr.Requests(), Distinct: len(ds), Slots: sl, Locks: k.Locks(), UsedSlots: k.Slots(),
						InSample: in.S, Fresh: fr.S, RandomInSample: rin.S, RandomFresh: rfr.S,
						ServerBound: fr.ServerBound(), OverRandom: fr.ServerBoundOver(rfr),
						LatencySeq: fr.LatencyBound(o.Ratio, false), LatencyPipelined: fr.LatencyBound(o.Ratio, true),
						ByTable: byTable(&fresh, k)}
					if w == 10 {
						p.Paper = PaperShare[sl]
					}
					out = append(out, p)
					if progress != nil {
						progress(len(out), total, p)
					}
				}
			}
		}
	}
	return out, nil
}

// byTable splits the switch's share of a trace's requests by the table of the lock.
func byTable(tr *tpcc.Trace, a tpcc.Alloc) map[string]float64 {
	m := map[string]float64{}
	for i := range tr.Txns() {
		_, locks := tr.Txn(i)
		for _, l := range locks {
			if f := a.Fraction(l); f > 0 {
				tb, _, _ := tpcc.Decode(l)
				m[tb.String()] += f
			}
		}
	}
	for k := range m {
		m[k] /= float64(tr.Requests())
	}
	return m
}

// WriteShares writes the sweep as a table.
func WriteShares(w io.Writer, ps []SharePoint, ratio float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "profile\tW\ttxns/term\tslots\tlocks\ts in-sample\ts fresh\tpaper s\trandom in/fresh\t1/(1-s)\tover random\tlatency (r=%.2f) seq/pipelined\tswitch share by table (fresh)\t\n", ratio)
	for _, p := range ps {
		paper := ""
		if p.Paper > 0 {
			paper = fmt.Sprintf("%.3f", p.Paper)
		}
		var tabs []string
		for t, v := range p.ByTable {
			if v >= 0.005 {
				tabs = append(tabs, fmt.Sprintf("%s %.2f", t, v))
			}
		}
		slices.Sort(tabs)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%s\t%.3f/%.3f\t%.2fx\t%.2fx\t%.2fx/%.2fx\t%v\t\n", p.Profile, p.Warehouses, p.Txns,
			p.Slots, p.Locks, p.InSample, p.Fresh, paper, p.RandomInSample, p.RandomFresh, p.ServerBound, p.OverRandom,
			p.LatencySeq, p.LatencyPipelined, tabs)
	}
	return tw.Flush()
}

// WriteSharesFiles writes shares.json and shares.txt into dir.
func WriteSharesFiles(dir string, ps []SharePoint, ratio float64) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	jf := filepath.Join(dir, "shares.json")
	b, err := json.MarshalIndent(ps, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(jf, b, 0o644); err != nil {
		return nil, err
	}
	tf := filepath.Join(dir, "shares.txt")
	f, err := os.Create(tf)
	if err != nil {
		return nil, err
	}
	if err := WriteShares(f, ps, ratio); err != nil {
		f.Close()
		return nil, err
	}
	return []string{jf, tf}, f.Close()
}

// SizeRow is the lock-set size of one transaction type in one profile.
type SizeRow struct {
	Profile string  `json:"profile"`
	Kind    string  `json:"kind"`
	Share   float64 `json:"share"` // of the transactions (a Delivery counts ten)
	// Locks and Reads: mean held locks and read-committed reads; MinLocks, MaxLocks their range.
	Locks, Reads       float64
	MinLocks, MaxLocks int
	// Requests is the type's share of all lock requests (reads included).
	Requests float64 `json:"requests"`
}

// Sizes draws txns transactions of each of terminals terminals of every profile over
// warehouses warehouses and returns the lock-set sizes per type.
func Sizes(profiles []tpcc.Profile, warehouses, terminals, txns int, seed uint64) ([]SizeRow, error) {
	var out []SizeRow
	for _, p := range profiles {
		wl, err := tpcc.New(tpcc.Config{Warehouses: warehouses, Profile: p, Seed: seed})
		if err != nil {
			return nil, err
		}
		rows := map[tpcc.Kind]*SizeRow{}
		n, reqs := 0, 0
		var tx tpcc.Txn
		for id := range terminals {
			term := wl.Terminal(id, seed+uint64(id))
			for range txns {
				term.Next(&tx)
				r := rows[tx.Kind]
				if r == nil {
					r = &SizeRow{Profile: p.String(), Kind: tx.Kind.String(), MinLocks: len(tx.Locks)}
					rows[tx.Kind] = r
				}
				r.Share++
				r.Locks += float64(len(tx.Locks))
				r.Reads += float64(len(tx.Reads))
				r.MinLocks, r.MaxLocks = min(r.MinLocks, len(tx.Locks)), max(r.MaxLocks, len(tx.Locks))
				r.Requests += float64(len(tx.Locks) + len(tx.Reads))
				n++
				reqs += len(tx.Locks) + len(tx.Reads)
			}
		}
		for _, k := range tpcc.Kinds {
			r := rows[k]
			if r == nil {
				continue
			}
			r.Locks /= r.Share
			r.Reads /= r.Share
			r.Share /= float64(n)
			r.Requests /= float64(reqs)
			out = append(out, *r)
		}
	}
	return out, nil
}

// WriteSizes writes the lock-set sizes as a table.
func WriteSizes(w io.Writer, rows []SizeRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "profile\ttype\tof txns\tlocks (mean)\tlocks (range)\treads (mean)\tof requests\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%.1f\t%d..%d\t%.1f\t%.1f%%\t\n", r.Profile, r.Kind, 100*r.Share, r.Locks, r.MinLocks, r.MaxLocks, r.Reads, 100*r.Requests)
	}
	return tw.Flush()
}
