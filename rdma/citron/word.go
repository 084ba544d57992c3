package citron

import "github.com/netlock-go/netlock/rdma/verbs"

// Node words. The paper's Fig. 3 (bit layout) is an image missing from our copy; its text says
// an internal node holds two flags (Exp, Occ) and two counter pairs (TCnt/TMax, DCnt/DMax) in 64
// bits and limits concurrency to 2^15-1 clients. Our E word:
//
//	63..59 Mark  5 bits  scale-up visit mark (replaces the paper's Exp flag, see scale.go)
//	58     Occ   1 bit   occupied by an exclusive request at this node
//	57..44 TMax 14 bits  next bakery ticket at this node
//	43..30 TCnt 14 bits  ticket being served
//	29..15 DMax 15 bits  exclusive notifications from descendants
//	14..0  DCnt 15 bits  notifications released
//
// and the S word (shared mode, not in the paper):
//
//	63..59 Mark  5 bits  scale-up visit mark
//	58..44 SOcc 15 bits  shared requests occupying this node
//	29..15 SDMax 15 bits shared notifications from descendants
//	14..0  SDCnt 15 bits released
//
// Counters wrap modulo their width; equality tests are modular. So at most 2^14-1 requests may
// wait at one node and at most 2^15-1 notifications be outstanding on one node (the paper:
// 2^15-1 clients). A leaf's E word is the 64-unit bitmap; its S word is eight 8-bit counters of
// shared holders, one per 8-unit group (so shared and exclusive requests conflict at 8-unit
// granularity inside a leaf; 255 concurrent shared holders per group at most).
var (
	fMark = verbs.Field{Shift: 59, Width: 5}
	fOcc  = verbs.Field{Shift: 58, Width: 1}
	fTMax = verbs.Field{Shift: 44, Width: 14}
	fTCnt = verbs.Field{Shift: 30, Width: 14}
	fDMax = verbs.Field{Shift: 15, Width: 15}
	fDCnt = verbs.Field{Shift: 0, Width: 15}
	fSOcc = verbs.Field{Shift: 44, Width: 15}

	eBoundary    = verbs.Boundary(fMark, fOcc, fTMax, fTCnt, fDMax, fDCnt)
	sBoundary    = verbs.Boundary(fMark, fSOcc, fDMax, fDCnt)
	groupBound   = groupBoundary()
	spillBound   = verbs.Boundary(fXCnt, fSCnt, fXMax, fSMax)
	ticketModulo = uint64(1) << fTMax.Width
)

func groupBoundary() uint64 {
	var b uint64
	for i := uint(0); i < 8; i++ {
		b |= verbs.Field{Shift: 8 * i, Width: 8}.MSB()
	}
	return b
}

// The spillover lock is DSLR's reader-writer bakery on one word (the paper uses DSLR for the
// mutex; shared mode is DSLR's too): shared and exclusive ticket counters and their served
// counters, 16 bits each, updated with masked FAA so that no counter carries into another.
var (
	fXCnt = verbs.Field{Shift: 0, Width: 16}
	fSCnt = verbs.Field{Shift: 16, Width: 16}
	fXMax = verbs.Field{Shift: 32, Width: 16}
	fSMax = verbs.Field{Shift: 48, Width: 16}
)

// Control block on the server: the spillover lock, the maximizer and the published generation.
const (
	ctlSpill     = 0
	ctlMaximizer = 8
	ctlGen       = 16
	ctlBytes     = 64
)

// markCode is the mark a scale-up producing generation g writes (1..31; 0 = never visited).
func markCode(g int) uint64 { return uint64(g%31) + 1 }

// markAfter decodes a mark relative to a client's generation g: whether it was written by a
// scale-up producing a generation in (g, g+16] (then it returns that generation) as opposed to
// an older one (or none). See scale.go for why the window suffices.
func markAfter(mark uint64, g int) (int, bool) {
	if mark == 0 {
		return 0, false
	}
	d := (int(mark) - int(markCode(g+1)) + 31) % 31
	if d < 16 {
		return g + 1 + d, true
	}
	return 0, false
}

// markGen decodes the mark of the last visit of a node that received a unit while the client
// knew generation g, given that the visit came after the unit (so it is in (g, g+30]).
func markGen(mark uint64, g int) int {
	return g + 1 + (int(mark)-int(markCode(g+1))+31)%31
}
