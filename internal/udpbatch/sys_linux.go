//go:build linux && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64 || mips64 || mips64le)

package udpbatch

import (
	"errors"
	"net/netip"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// batched: recvmmsg and sendmmsg, sends beside the descriptor's write lock (writerSys).
const batched = true

// mmsghdr is struct mmsghdr on 64-bit Linux.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// sysBufs are the kernel-facing arrays of a Reader or Writer.
type sysBufs struct {
	rc    syscall.RawConn
	hdrs  []mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6 // large enough for sockaddr_in too
	v6    bool                    // the socket is AF_INET6 (write v4-mapped addresses)
}

func (s *sysBufs) init(c interface {
	SyscallConn() (syscall.RawConn, error)
}, bufs [][]byte) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	s.rc = rc
	var serr error
	err = rc.Control(func(fd uintptr) {
		var sa unix.Sockaddr
		sa, serr = unix.Getsockname(int(fd))
		_, s.v6 = sa.(*unix.SockaddrInet6)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	n := len(bufs)
	s.hdrs, s.iovs, s.names = make([]mmsghdr, n), make([]unix.Iovec, n), make([]unix.RawSockaddrInet6, n)
	for i := range s.hdrs {
		s.iovs[i].Base = &bufs[i][0]
		s.iovs[i].SetLen(len(bufs[i]))
		h := &s.hdrs[i].hdr
		h.Iov = &s.iovs[i]
		h.SetIovlen(1)
		h.Name = (*byte)(unsafe.Pointer(&s.names[i]))
	}
	return nil
}

// readerSys keeps the state of one recvmmsg call in fields, and the callback given to
// RawConn.Read is a method value bound once, so that a read allocates nothing.
type readerSys struct {
	sysBufs
	fn    func(fd uintptr) bool
	n     int
	errno syscall.Errno
}

func (s *readerSys) init(r *Reader) error {
	s.fn = s.recv
	return s.sysBufs.init(r.conn, r.bufs)
}

func (s *readerSys) recv(fd uintptr) bool {
	r1, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&s.hdrs[0])), uintptr(len(s.hdrs)),
		0, 0, 0)
	if e == unix.EAGAIN {
		return false
	}
	s.n, s.errno = int(r1), e
	return true
}

func (s *readerSys) read(r *Reader) (int, error) {
	for i := range s.hdrs {
		s.hdrs[i].hdr.Namelen = uint32(unsafe.Sizeof(s.names[i]))
		s.hdrs[i].hdr.Flags = 0
		s.hdrs[i].len = 0
	}
	s.n, s.errno = 0, 0
	err := s.rc.Read(s.fn)
	runtime.KeepAlive(r.bufs)
	if err != nil {
		return 0, err
	}
	if s.errno != 0 {
		return 0, s.errno
	}
	n := s.n
	for i := 0; i < n; i++ {
		r.lens[i] = min(int(s.hdrs[i].len), len(r.bufs[i]))
		r.from[i] = fromSockaddr(&s.names[i])
	}
	return n, nil
}

func fromSockaddr(sa *unix.RawSockaddrInet6) netip.AddrPort {
	switch sa.Family {
	case unix.AF_INET:
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		p := (*[2]byte)(unsafe.Pointer(&sa4.Port))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), uint16(p[0])<<8|uint16(p[1]))
	case unix.AF_INET6:
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(p[0])<<8|uint16(p[1]))
	}
	return netip.AddrPort{}
}

// writerSys is readerSys's counterpart for sendmmsg: hdrs[off:k] are sent by one call.
//
// A send is first tried through RawConn.Control, which only pins the descriptor, so that the
// writers of one socket send in parallel; RawConn.Write, which also takes the descriptor's write
// lock (one writer at a time: a writer whose thread is descheduled in its system call holds up
// every other writer of the socket) and waits until the socket is writable, is used only when
// the non-blocking socket refuses with EAGAIN (a full send buffer).
type writerSys struct {
	sysBufs
	fn     func(fd uintptr) bool
	ctl    func(fd uintptr)
	off, k int
	n      int
	again  bool
	errno  syscall.Errno
}

func (s *writerSys) init(w *Writer) error {
	s.fn = s.send
	s.ctl = s.sendNow
	return s.sysBufs.init(w.conn, w.bufs)
}

// sendNow is send for RawConn.Control: again records an EAGAIN.
func (s *writerSys) sendNow(fd uintptr) { s.again = !s.send(fd) }

func (s *writerSys) send(fd uintptr) bool {
	r1, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&s.hdrs[s.off])), uintptr(s.k-s.off), 0, 0, 0)
	if e == unix.EAGAIN {
		return false
	}
	s.n, s.errno = int(r1), e
	return true
}

// toSockaddr fills sa with to and returns its length, or 0 if the address cannot be sent on this
// socket (IPv6 on an IPv4 socket).
func (s *writerSys) toSockaddr(sa *unix.RawSockaddrInet6, to netip.AddrPort) uint32 {
	port := to.Port()
	if !s.v6 {
		a := to.Addr().Unmap()
		if !a.Is4() {
			return 0
		}
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		sa4.Family = unix.AF_INET
		p := (*[2]byte)(unsafe.Pointer(&sa4.Port))
		p[0], p[1] = byte(port>>8), byte(port)
		sa4.Addr = a.As4()
		return uint32(unsafe.Sizeof(*sa4))
	}
	*sa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: to.Addr().As16()}
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))
	p[0], p[1] = byte(port>>8), byte(port)
	return uint32(unsafe.Sizeof(*sa))
}

func (s *writerSys) write(w *Writer) (int, error) {
	var first error
	sent := 0
	k := 0 // hdrs[0:k] are ready
	for i := 0; i < w.n; i++ {
		h := &s.hdrs[k].hdr
		nl := s.toSockaddr(&s.names[k], w.to[i])
		if nl == 0 {
			w.Errors++
			if first == nil {
				first = errors.New("udpbatch: address family not supported by the socket")
			}
			continue
		}
		h.Namelen = nl
		// Datagram i's bytes live in bufs[i]; point slot k at them.
		s.iovs[k].Base = &w.bufs[i][0]
		s.iovs[k].SetLen(w.lens[i])
		k++
	}
	s.k = k
	for s.off = 0; s.off < k; {
		s.n, s.errno, s.again = 0, 0, false
		err := s.rc.Control(s.ctl)
		if err == nil && s.again {
			err = s.rc.Write(s.fn)
		}
		if err != nil {
			w.Errors += uint64(k - s.off)
			if first == nil {
				first = err
			}
			break
		}
		if s.errno != 0 {
			// The datagram at off was refused: drop it, send the rest.
			w.Errors++
			if first == nil {
				first = s.errno
			}
			s.off++
			continue
		}
		sent += s.n
		s.off += s.n
	}
	runtime.KeepAlive(w.bufs)
	return sent, first
}
