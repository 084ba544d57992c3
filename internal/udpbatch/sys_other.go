//go:build !(linux && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64 || mips64 || mips64le))

package udpbatch

// Without recvmmsg/sendmmsg: one datagram per system call (ReadFromUDPAddrPort and
// WriteToUDPAddrPort do not allocate either).

// batched: one datagram per call, writes take the descriptor's write lock.
const batched = false

type readerSys struct{}

func (readerSys) init(*Reader) error { return nil }

func (readerSys) read(r *Reader) (int, error) {
	n, from, err := r.conn.ReadFromUDPAddrPort(r.bufs[0])
	if err != nil {
		return 0, err
	}
	r.lens[0], r.from[0] = n, from
	return 1, nil
}

type writerSys struct{}

func (writerSys) init(*Writer) error { return nil }

func (writerSys) write(w *Writer) (int, error) {
	var first error
	sent := 0
	for i := 0; i < w.n; i++ {
		if _, err := w.conn.WriteToUDPAddrPort(w.bufs[i][:w.lens[i]], w.to[i]); err != nil {
			w.Errors++
			if first == nil {
				first = err
			}
			continue
		}
		sent++
	}
	return sent, first
}
