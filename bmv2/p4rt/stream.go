package p4rt

import (
	"context"
	"io"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// electionID is a 128-bit election id; ok is false when the client sent none.
type electionID struct {
	hi, lo uint64
	ok     bool
}

func toElection(u *p4v1.Uint128) electionID {
	if u == nil {
		return electionID{}
	}
	return electionID{hi: u.GetHigh(), lo: u.GetLow(), ok: true}
}

func (e electionID) less(f electionID) bool {
	if e.ok != f.ok {
		return !e.ok
	}
	return e.hi < f.hi || (e.hi == f.hi && e.lo < f.lo)
}

func (e electionID) proto() *p4v1.Uint128 {
	if !e.ok {
		return nil
	}
	return &p4v1.Uint128{High: e.hi, Low: e.lo}
}

// roleState is the arbitration state of one role (the default role is "").
// Guarded by Server.mu.
type roleState struct {
	streams map[*stream]struct{}
	primary *stream    // the stream with the highest election id, nil if none has one
	highest electionID // highest election id ever seen for the role
}

// stream is one StreamChannel.
type stream struct {
	srv   p4v1.P4Runtime_StreamChannelServer
	out   chan *p4v1.StreamMessageResponse // packet-ins, digest lists
	ctrl  chan *p4v1.StreamMessageResponse // arbitration updates, stream errors
	quit  chan struct{}
	sent  chan struct{} // closed when the send loop has ended
	role  *p4v1.Role    // as arbitrated; nil before the first arbitration
	eid   electionID
	peer  string // callerID of the stream's client (auth.go)
	arbOK bool   // has arbitrated
}

// streamQueue is how many packet-ins and digest lists may wait for a slow
// client before more are dropped; ctrlQueue is the same for arbitration
// updates and stream errors.
const (
	streamQueue = 1024
	ctrlQueue   = 64
)

// send queues m without ever blocking (callers may hold Server.mu): data
// messages (packet-ins, digest lists) go to the data queue, control messages
// (arbitration, errors) to the control queue, which the send loop serves
// first. A full queue drops the message; it reports whether m was queued.
func (st *stream) send(m *p4v1.StreamMessageResponse, data bool) bool {
	q := st.ctrl
	if data {
		q = st.out
	}
	select {
	case q <- m:
		return true
	default:
		return false
	}
}

// sendWait queues a control message from the stream's own handler goroutine,
// waiting for room (back-pressure on a client that floods bad requests).
func (st *stream) sendWait(m *p4v1.StreamMessageResponse) {
	select {
	case st.ctrl <- m:
	case <-st.srv.Context().Done():
	}
}

func (st *stream) sendLoop() {
	defer close(st.sent)
	for {
		var m *p4v1.StreamMessageResponse
		select {
		case m = <-st.ctrl:
		default:
			select {
			case m = <-st.ctrl:
			case m = <-st.out:
			case <-st.quit:
				return
			}
		}
		if err := st.srv.Send(m); err != nil {
			<-st.quit
			return
		}
	}
}

// checkPrimary returns PERMISSION_DENIED unless eid is the election id of the
// current primary of role and the caller of ctx is the primary's client (auth.go).
func (s *Server) checkPrimary(ctx context.Context, role string, eid *p4v1.Uint128) error {
	id := callerID(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.roles[role]
	if rs == nil || rs.primary == nil {
		return status.Errorf(codes.PermissionDenied, "no primary client for role %q: open a StreamChannel and arbitrate first", role)
	}
	if e := toElection(eid); e != rs.primary.eid {
		return status.Errorf(codes.PermissionDenied, "election id %v is not the primary's for role %q", e.proto(), role)
	}
	if id != rs.primary.peer {
		return status.Errorf(codes.PermissionDenied, "the request does not come from the primary client of role %q "+
			"(the election id is the primary's, the connection is not)", role)
	}
	return nil
}

// StreamChannel implements p4v1.P4RuntimeServer.
func (s *Server) StreamChannel(srv p4v1.P4Runtime_StreamChannelServer) error {
	st := &stream{srv: srv, out: make(chan *p4v1.StreamMessageResponse, streamQueue), ctrl: make(chan *p4v1.StreamMessageResponse, ctrlQueue), quit: make(chan struct{}), sent: make(chan struct{}),
		peer: callerID(srv.Context())}
	go st.sendLoop()
	s.streams.Add(1)
	defer s.streams.Add(-1)
	defer func() {
		s.leave(st)
		close(st.quit)
		<-st.sent
	}()
	for {
		req, err := srv.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch u := req.GetUpdate().(type) {
		case *p4v1.StreamMessageRequest_Arbitration:
			if err := s.arbitrate(st, u.Arbitration); err != nil {
				return err
			}
		case *p4v1.StreamMessageRequest_Packet:
			if !st.arbOK {
				return status.Error(codes.FailedPrecondition, "the first stream message must be a MasterArbitrationUpdate")
			}
			if err := s.packetOut(st, u.Packet); err != nil {
				sst := status.Convert(err)
				st.sendWait(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Error{Error: &p4v1.StreamError{
					CanonicalCode: int32(sst.Code()), Message: sst.Message(),
					Details: &p4v1.StreamError_PacketOut{PacketOut: &p4v1.PacketOutError{PacketOut: u.Packet}},
				}}})
			}
		case *p4v1.StreamMessageRequest_DigestAck:
			if !st.arbOK {
				return status.Error(codes.FailedPrecondition, "the first stream message must be a MasterArbitrationUpdate")
			}
			if err := s.digestAck(st, u.DigestAck); err != nil {
				sst := status.Convert(err)
				st.sendWait(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Error{Error: &p4v1.StreamError{
					CanonicalCode: int32(sst.Code()), Message: sst.Message(),
					Details: &p4v1.StreamError_DigestListAck{DigestListAck: &p4v1.DigestListAckError{DigestListAck: u.DigestAck}},
				}}})
			}
		default:
			if !st.arbOK {
				return status.Error(codes.FailedPrecondition, "the first stream message must be a MasterArbitrationUpdate")
			}
			st.sendWait(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Error{Error: &p4v1.StreamError{
				CanonicalCode: int32(codes.Unimplemented), Message: "unsupported stream message",
				Details: &p4v1.StreamError_Other{Other: &p4v1.StreamOtherError{Other: req.GetOther()}},
			}}})
		}
	}
}

// arbitrate handles a MasterArbitrationUpdate. A returned error closes the stream.
func (s *Server) arbitrate(st *stream, a *p4v1.MasterArbitrationUpdate) error {
	if err := s.checkDevice(a.GetDeviceId()); err != nil {
		return err
	}
	role := a.GetRole().GetName()
	eid := toElection(a.GetElectionId())
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.arbOK && st.role.GetName() != role {
		return status.Errorf(codes.FailedPrecondition, "this stream arbitrated for role %q; open another stream for role %q", st.role.GetName(), role)
	}
	rs := s.roles[role]
	if rs == nil {
		rs = &roleState{streams: map[*stream]struct{}{}}
		s.roles[role] = rs
	}
	if eid.ok {
		for o := range rs.streams {
			if o != st && o.eid == eid {
				return status.Errorf(codes.InvalidArgument, "election id %v is already used by another client of role %q", eid.proto(), role)
			}
		}
	}
	st.arbOK, st.eid = true, eid
	st.role = proto.Clone(a.GetRole()).(*p4v1.Role)
	if a.GetRole() == nil {
		st.role = nil
	}
	rs.streams[st] = struct{}{}
	if rs.highest.less(eid) {
		rs.highest = eid
	}
	old := rs.primary
	s.electLocked(rs)
	if rs.primary != old {
		s.cfg.Logf("p4rt: role %q: primary is now election id %v", role, rs.primary.eid.proto())
		s.notifyLocked(rs, nil)
	} else {
		s.notifyLocked(rs, st)
	}
	return nil
}

// electLocked makes the stream with the highest election id the primary.
// Precondition: s.mu is held.
func (s *Server) electLocked(rs *roleState) {
	var best *stream
	for o := range rs.streams {
		if o.eid.ok && (best == nil || best.eid.less(o.eid)) {
			best = o
		}
	}
	rs.primary = best
}

// notifyLocked sends the arbitration outcome to only (or, if nil, to every
// stream of the role): OK to the primary, ALREADY_EXISTS to backups when
// there is a primary, NOT_FOUND when there is none. The election id is the
// primary's, or the highest seen. Precondition: s.mu is held.
func (s *Server) notifyLocked(rs *roleState, only *stream) {
	eid := rs.highest
	if rs.primary != nil {
		eid = rs.primary.eid
	}
	for o := range rs.streams {
		if only != nil && o != only {
			continue
		}
		code, msg := codes.NotFound, "no primary"
		switch {
		case o == rs.primary:
			code, msg = codes.OK, "primary"
		case rs.primary != nil:
			code, msg = codes.AlreadyExists, "backup: another client is primary"
		}
		if !o.send(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Arbitration{Arbitration: &p4v1.MasterArbitrationUpdate{
			DeviceId:   s.cfg.DeviceID,
			Role:       o.role,
			ElectionId: eid.proto(),
			Status:     &spb.Status{Code: int32(code), Message: msg},
		}}}, false) {
			s.cfg.Logf("p4rt: role %q: arbitration update dropped for a client that does not read its stream", o.role.GetName())
		}
	}
}

// leave removes a closing stream; if it was the primary, the backup with the
// highest election id takes over and the role's clients are told.
func (s *Server) leave(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !st.arbOK {
		return
	}
	rs := s.roles[st.role.GetName()]
	if rs == nil {
		return
	}
	delete(rs.streams, st)
	if rs.primary == st {
		s.electLocked(rs)
		s.cfg.Logf("p4rt: role %q: primary left", st.role.GetName())
		s.notifyLocked(rs, nil)
	}
}

// packetOut injects a PacketOut from a primary.
func (s *Server) packetOut(st *stream, po *p4v1.PacketOut) error {
	s.mu.Lock()
	rs, sch := s.roles[st.role.GetName()], s.sch
	primary := rs != nil && rs.primary == st
	s.mu.Unlock()
	if !primary {
		return status.Error(codes.PermissionDenied, "only the primary client may send packet-outs")
	}
	if sch == nil {
		return status.Error(codes.FailedPrecondition, "no forwarding pipeline is installed")
	}
	frame, err := EncodePacketOut(sch.packetOut, po)
	if err != nil {
		return err
	}
	return toStatus(s.dev.PacketOut(frame))
}

// toPrimaries sends m to the primary of every role.
func (s *Server) toPrimariesLocked(m *p4v1.StreamMessageResponse) {
	for _, rs := range s.roles {
		if rs.primary != nil {
			rs.primary.send(m, true)
		}
	}
}

// PacketIn implements Listener: the frame's packet_in header becomes
// PacketIn metadata and the PacketIn goes to the primary of every role.
func (s *Server) PacketIn(frame []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sch == nil || s.closed {
		return
	}
	pi, err := DecodePacketIn(s.sch.packetIn, frame)
	if err != nil {
		s.cfg.Logf("p4rt: dropping packet-in: %v", err)
		return
	}
	s.toPrimariesLocked(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Packet{Packet: pi}})
}

// IdleTimeout implements Listener.
func (s *Server) IdleTimeout(entries []*p4v1.TableEntry) {
	if len(entries) == 0 {
		return
	}
	n := &p4v1.IdleTimeoutNotification{Timestamp: time.Now().UnixNano()}
	for _, e := range entries {
		n.TableEntry = append(n.TableEntry, proto.Clone(e).(*p4v1.TableEntry))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sch == nil || s.closed {
		return
	}
	s.toPrimariesLocked(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_IdleTimeoutNotification{IdleTimeoutNotification: n}})
}

// digestState batches digest data into DigestLists. Guarded by Server.mu.
type digestState struct {
	cfg     map[uint32]*p4v1.DigestEntry_Config
	pending map[uint32]*pendingList
	// outstanding maps a digest's data (its marshaled P4Data) to the list that
	// carried it while that list waits for its ack: identical data is not
	// sent again until then (or until the ack timeout).
	outstanding map[uint32]map[string]uint64
	lists       map[uint64]*sentList
	nextList    uint64
	gen         uint64 // bumped by reset; timers of older generations do nothing
}

type pendingList struct {
	data  []*p4v1.P4Data
	keys  []string
	timer *time.Timer
}

type sentList struct {
	digestID uint32
	keys     []string
	timer    *time.Timer
}

func (d *digestState) init() {
	d.cfg = map[uint32]*p4v1.DigestEntry_Config{}
	d.pending = map[uint32]*pendingList{}
	d.outstanding = map[uint32]map[string]uint64{}
	d.lists = map[uint64]*sentList{}
}

func (d *digestState) stopLocked() {
	for _, p := range d.pending {
		if p.timer != nil {
			p.timer.Stop()
		}
	}
	for _, l := range d.lists {
		if l.timer != nil {
			l.timer.Stop()
		}
	}
}

func (d *digestState) resetLocked() {
	d.stopLocked()
	gen := d.gen + 1
	next := d.nextList
	d.init()
	d.gen, d.nextList = gen, next
}

func (d *digestState) configsLocked() map[uint32]*p4v1.DigestEntry_Config {
	out := map[uint32]*p4v1.DigestEntry_Config{}
	for k, v := range d.cfg {
		out[k] = v
	}
	return out
}

func (s *Server) writeDigest(sch *schema, op p4v1.Update_Type, e *p4v1.DigestEntry) error {
	if _, ok := sch.digests[e.GetDigestId()]; !ok {
		return status.Errorf(codes.NotFound, "unknown digest id %d", e.GetDigestId())
	}
	c := e.GetConfig()
	if op != p4v1.Update_DELETE {
		if c == nil {
			return invalid("digest %d: %s needs a config", e.GetDigestId(), op)
		}
		if c.GetMaxTimeoutNs() < 0 || c.GetMaxListSize() < 0 || c.GetAckTimeoutNs() < 0 {
			return invalid("digest %d: negative config value", e.GetDigestId())
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, exists := s.dig.cfg[e.GetDigestId()]
	switch op {
	case p4v1.Update_INSERT:
		if exists {
			return status.Errorf(codes.AlreadyExists, "digest %d is already configured", e.GetDigestId())
		}
	case p4v1.Update_MODIFY, p4v1.Update_DELETE:
		if !exists {
			return status.Errorf(codes.NotFound, "digest %d is not configured", e.GetDigestId())
		}
	}
	if op == p4v1.Update_DELETE {
		delete(s.dig.cfg, e.GetDigestId())
		if p := s.dig.pending[e.GetDigestId()]; p != nil && p.timer != nil {
			p.timer.Stop()
		}
		delete(s.dig.pending, e.GetDigestId())
		return nil
	}
	s.dig.cfg[e.GetDigestId()] = proto.Clone(c).(*p4v1.DigestEntry_Config)
	return nil
}

// Digest implements Listener: data joins the digest's pending list, which is
// sent when it reaches max_list_size or max_timeout_ns after its first entry.
// Digests with no DigestEntry config are dropped.
func (s *Server) Digest(digestID uint32, data *p4v1.P4Data) {
	key, _ := proto.MarshalOptions{Deterministic: true}.Marshal(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &s.dig
	c, ok := d.cfg[digestID]
	if !ok || s.closed {
		return
	}
	if _, dup := d.outstanding[digestID][string(key)]; dup {
		return
	}
	p := d.pending[digestID]
	if p == nil {
		p = &pendingList{}
		d.pending[digestID] = p
	}
	for _, k := range p.keys {
		if k == string(key) {
			return
		}
	}
	p.data = append(p.data, proto.Clone(data).(*p4v1.P4Data))
	p.keys = append(p.keys, string(key))
	if c.GetMaxListSize() <= 1 || len(p.data) >= int(c.GetMaxListSize()) || c.GetMaxTimeoutNs() == 0 {
		s.flushLocked(digestID)
		return
	}
	if p.timer == nil {
		gen := d.gen
		p.timer = time.AfterFunc(time.Duration(c.GetMaxTimeoutNs()), func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.dig.gen == gen && s.dig.pending[digestID] == p {
				s.flushLocked(digestID)
			}
		})
	}
}

// flushLocked sends the pending list of a digest. Precondition: s.mu is held.
func (s *Server) flushLocked(digestID uint32) {
	d := &s.dig
	p := d.pending[digestID]
	delete(d.pending, digestID)
	if p == nil || len(p.data) == 0 {
		return
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	d.nextList++
	id := d.nextList
	l := &sentList{digestID: digestID, keys: p.keys}
	d.lists[id] = l
	out := d.outstanding[digestID]
	if out == nil {
		out = map[string]uint64{}
		d.outstanding[digestID] = out
	}
	for _, k := range p.keys {
		out[k] = id
	}
	if ack := d.cfg[digestID].GetAckTimeoutNs(); ack > 0 {
		gen := d.gen
		l.timer = time.AfterFunc(time.Duration(ack), func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.dig.gen == gen {
				s.dig.releaseLocked(id)
			}
		})
	}
	s.toPrimariesLocked(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Digest{Digest: &p4v1.DigestList{
		DigestId: digestID, ListId: id, Data: p.data, Timestamp: time.Now().UnixNano(),
	}}})
}

// releaseLocked forgets an outstanding list so its data may be sent again.
func (d *digestState) releaseLocked(id uint64) bool {
	l, ok := d.lists[id]
	if !ok {
		return false
	}
	delete(d.lists, id)
	if l.timer != nil {
		l.timer.Stop()
	}
	for _, k := range l.keys {
		if d.outstanding[l.digestID][k] == id {
			delete(d.outstanding[l.digestID], k)
		}
	}
	return true
}

func (s *Server) digestAck(st *stream, a *p4v1.DigestListAck) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.roles[st.role.GetName()]
	if rs == nil || rs.primary != st {
		return status.Error(codes.PermissionDenied, "only the primary client may acknowledge digest lists")
	}
	l, ok := s.dig.lists[a.GetListId()]
	if !ok || l.digestID != a.GetDigestId() {
		return status.Errorf(codes.NotFound, "no outstanding digest list %d for digest %d", a.GetListId(), a.GetDigestId())
	}
	s.dig.releaseLocked(a.GetListId())
	return nil
}

// OutstandingDigestLists reports how many digest lists wait for an ack.
func (s *Server) OutstandingDigestLists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dig.lists)
}
