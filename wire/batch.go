package wire

import "errors"

// MaxBatch is the most headers one batch datagram may carry: 30 x 48 = 1440 bytes, which with
// the IPv4 and UDP headers (28 bytes) fits a 1500-byte Ethernet MTU without fragmentation.
const MaxBatch = 30

// Batch decoding errors. A batch that fails any check is dropped whole: its sender retransmits
// each request, and retransmissions may go single.
var (
	// ErrBatchLen: the datagram is not a whole number of headers (a partial header trails).
	ErrBatchLen = errors.New("wire: batch length not a multiple of the header length")
	// ErrBatchCount: more than MaxBatch headers.
	ErrBatchCount = errors.New("wire: batch of more than MaxBatch headers")
	// ErrBatchFlag: a header of the batch does not carry FlagBatch.
	ErrBatchFlag = errors.New("wire: batch header without the batch flag")
)

// IsBatch reports whether the datagram b announces a batch: its first header carries
// [FlagBatch]. It reads one byte and does not validate anything.
func IsBatch(b []byte) bool { return len(b) > offFlags && Flags(b[offFlags])&FlagBatch != 0 }

// ParseBatch checks the batch datagram b and returns the number of headers it holds, k >= 1:
// len(b) must be k*[Len] with k <= [MaxBatch], and every header must be valid ([Header.Validate])
// and carry FlagBatch. Any failure rejects the whole datagram (the first error found, in header
// order). Read the headers with [BatchHeader]. It never allocates.
func ParseBatch(b []byte) (int, error) {
	if len(b) < Len {
		return 0, ErrShort
	}
	if len(b)%Len != 0 {
		return 0, ErrBatchLen
	}
	k := len(b) / Len
	if k > MaxBatch {
		return 0, ErrBatchCount
	}
	for i := 0; i < k; i++ {
		h := BatchHeader(b, i)
		if err := h.Validate(); err != nil {
			return 0, err
		}
		if !h.Has(FlagBatch) {
			return 0, ErrBatchFlag
		}
	}
	return k, nil
}

// BatchHeader returns header i of a batch datagram that [ParseBatch] accepted.
func BatchHeader(b []byte, i int) Header { return Header(b[i*Len : (i+1)*Len : (i+1)*Len]) }

// AppendBatch appends the headers fs as one batch datagram to b: each encoded with FlagBatch
// added. Tests and tools use it; the client packs its outbox in place.
func AppendBatch(b []byte, fs ...Fields) []byte {
	for i := range fs {
		f := fs[i]
		f.Flags |= FlagBatch
		b = Append(b, &f)
	}
	return b
}
