package rma

// Counts are the protocol events of one process (a Handle), so that a benchmark can show
// whether a threshold acted: how often T_R was reached and a counter reset by a reader, how
// often a writer took the lock from the readers and gave it back, and how many hand-overs
// happened below and at T_L,i at each level. They are derived from the step machine's
// transitions by the driver (Handle); the machine itself stays pure. Each field counts one
// category only; none is a sum of others.
type Counts struct {
	// ReaderEntries are shared acquisitions that entered (RMA-RW).
	ReaderEntries int64 `json:"reader_entries"`
	// BackOffs are reader arrivals that found T_R reached or a flag set and subtracted
	// themselves again (each is followed by a retry).
	BackOffs int64 `json:"back_offs"`
	// TRHits are reader arrivals whose FAA returned exactly T_R: the arrivals that may reset
	// the counter.
	TRHits int64 `json:"tr_hits"`
	// TRWriterQueued are T_R hits that found a writer queued at the machine level and left the
	// reset to it.
	TRWriterQueued int64 `json:"tr_writer_queued"`
	// TRClaimLost are T_R hits whose reset claim found a flag (a writer or another reader's
	// claim) already there.
	TRClaimLost int64 `json:"tr_claim_lost"`
	// TRResets are counter resets done by readers (T_R-triggered resets).
	TRResets int64 `json:"tr_resets"`
	// WritePhases are writer phases begun: a writer added the WRITE flag to every counter
	// (it found the machine-level queue empty, or was handed MODE_CHANGE).
	WritePhases int64 `json:"write_phases"`
	// WriterResets are writer phases ended: the last writer of a phase (no successor, or
	// T_L,1 passes done) reset every counter.
	WriterResets int64 `json:"writer_resets"`
	// Passes[l] are hand-overs of 0-based level l (0 is the machine) to a successor in the
	// same queue with the run's count below T_L,l+1 (RMA-MCS at the machine level: every
	// hand-over, there is no threshold there).
	Passes [MaxLevels]int64 `json:"passes"`
	// TLHits[l] are releases of level l that found a successor but whose run had reached
	// T_L,l+1: the lock leaves the element (l > 0) or goes to the readers (l = 0, RMA-RW).
	TLHits [MaxLevels]int64 `json:"tl_hits"`
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.ReaderEntries += o.ReaderEntries
	c.BackOffs += o.BackOffs
	c.TRHits += o.TRHits
	c.TRWriterQueued += o.TRWriterQueued
	c.TRClaimLost += o.TRClaimLost
	c.TRResets += o.TRResets
	c.WritePhases += o.WritePhases
	c.WriterResets += o.WriterResets
	for i := range c.Passes {
		c.Passes[i] += o.Passes[i]
		c.TLHits[i] += o.TLHits[i]
	}
}

// Sub returns c - o (the events between two snapshots).
func (c Counts) Sub(o Counts) Counts {
	neg := o
	neg.ReaderEntries, neg.BackOffs, neg.TRHits = -o.ReaderEntries, -o.BackOffs, -o.TRHits
	neg.TRWriterQueued, neg.TRClaimLost, neg.TRResets = -o.TRWriterQueued, -o.TRClaimLost, -o.TRResets
	neg.WritePhases, neg.WriterResets = -o.WritePhases, -o.WriterResets
	for i := range neg.Passes {
		neg.Passes[i], neg.TLHits[i] = -o.Passes[i], -o.TLHits[i]
	}
	c.Add(neg)
	return c
}

// observe classifies one transition of the machine: b is the state before Resume, a the
// state after, next the batch Resume returned.
func (c *Counts) observe(b, a *State, next []Op) {
	switch b.pc {
	case pcRdFAA:
		switch a.pc {
		case pcHeldR:
			c.ReaderEntries++
		case pcRdTail:
			c.TRHits++
		case pcRdBack:
			c.BackOffs++
		}
	case pcRdTail:
		if a.pc == pcRdBack {
			c.TRWriterQueued++
			c.BackOffs++
		}
	case pcRdClaim:
		if a.pc == pcRdBack {
			c.TRClaimLost++
			c.BackOffs++
		}
	case pcRr3, pcPr2:
		c.TRResets++
	case pcRst3:
		c.WriterResets++
	case pcR1Wait:
		if a.pc == pcRPass && len(next) == 1 && next[0].Arg == statusFirstHolder {
			c.Passes[0]++ // RMA-MCS: the successor linked itself after the tail CAS failed
		}
	case pcRRead:
		l := b.lvl
		switch {
		case a.pc == pcRPass && a.top == l && len(next) == 1 && next[0].Arg >= statusFirstHolder:
			c.Passes[l]++
		case a.pc == pcRRead && a.lvl == l-1 && a.saved[l] != 0:
			c.TLHits[l]++
		case l == 0 && a.pc == pcRst1 && a.after == afterMC:
			c.TLHits[0]++
		}
	}
	if a.pc == pcWSetW && b.pc != pcWSetW {
		c.WritePhases++
	}
}
