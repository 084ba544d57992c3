/* netlock's portable Tofino 2 (T2NA) declarations: parser error flags, intrinsic metadata of
 * the ingress, egress and ghost threads, and the externs. Names, field order, widths and method
 * signatures as in Intel's tofino2_base.p4 (p4lang/p4c, backends/tofino/bf-p4c/p4include, T2NA
 * version 1.0.1); the text is our own, written from tofino1_base.p4 here with Tofino 2's
 * differences (see t2na.p4). */
#ifndef _TOFINO2_P4_BASE_
#define _TOFINO2_P4_BASE_

#define PACK_VERSION(a, b, c) (((a) << 24) + ((b) << 12) + (c))
#define COMPILER_VERSION PACK_VERSION(__p4c_major__, __p4c_minor__, __p4c_patchlevel__)

#include <core.p4>

/* Bits of parser_err in *_intrinsic_metadata_from_parser_t. */
const bit<16> PARSER_ERROR_OK           = 16w0x0000;
const bit<16> PARSER_ERROR_NO_MATCH     = 16w0x0001; /* no select case matched */
const bit<16> PARSER_ERROR_PARTIAL_HDR  = 16w0x0002; /* the packet ended inside a header */
const bit<16> PARSER_ERROR_CTR_RANGE    = 16w0x0004; /* parser counter out of range */
const bit<16> PARSER_ERROR_TIMEOUT_USER = 16w0x0008;
const bit<16> PARSER_ERROR_TIMEOUT_HW   = 16w0x0010;
const bit<16> PARSER_ERROR_SRC_EXT      = 16w0x0020;
const bit<16> PARSER_ERROR_PHV_OWNER    = 16w0x0080;
const bit<16> PARSER_ERROR_MULTIWRITE   = 16w0x0100;
const bit<16> PARSER_ERROR_ARAM_MBE     = 16w0x0400;
const bit<16> PARSER_ERROR_FCS          = 16w0x0800;
const bit<16> PARSER_ERROR_CSUM_MBE     = 16w0x1000;

/* What a meter measures, and the colours it returns (as bit<8>). */
enum MeterType_t { PACKETS, BYTES }
enum bit<8> MeterColor_t { GREEN = 8w0, YELLOW = 8w1, RED = 8w3 }

/* What a counter counts. */
enum CounterType_t {
    PACKETS,
    BYTES,
    PACKETS_AND_BYTES
}

/* How an action selector picks a member. */
enum SelectorMode_t { FAIR, RESILIENT }

/* The hash functions of the hash engine; CUSTOM takes a CRCPolynomial. */
enum HashAlgorithm_t {
    IDENTITY,
    RANDOM,
    XOR8,
    XOR16,
    XOR32,
    CRC8,
    CRC16,
    CRC32,
    CRC64,
    CUSTOM
}

/* Match kinds beyond core.p4's exact, ternary and lpm. */
match_kind {
    range,
    selector,
    dleft_hash,            /* d-left dynamic caching */
    atcam_partition_index
}

/* Parser errors beyond core.p4's. */
error {
    CounterRange,
    Timeout,
    PhvOwner,
    MultiWrite,
    IbufOverflow,
    IbufUnderflow
}

/* ---- ingress intrinsic metadata ---------------------------------------------------------- */

/* Prepended to every packet the ingress parser sees (64 bits), followed by PORT_METADATA_SIZE
 * bits of port metadata, or of resubmit data when resubmit_flag is 1. */
@__intrinsic_metadata
header ingress_intrinsic_metadata_t {
    bit<1> resubmit_flag;        /* 1: the packet was resubmitted */
    @padding bit<1> _pad1;
    bit<2> packet_version;
    @padding bit<(4 - PORT_ID_WIDTH % 8)> _pad2;
    PortId_t ingress_port;       /* the port the packet arrived on */
    bit<48> ingress_mac_tstamp;  /* arrival time at the MAC, in ns */
}

/* Requests of the ingress pipeline to the traffic manager. */
@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_tm_t {
    PortId_t ucast_egress_port;  /* unicast destination */
    bit<1> bypass_egress;        /* skip the egress pipeline */
    bit<1> deflect_on_drop;
    bit<3> ingress_cos;
    QueueId_t qid;
    bit<3> icos_for_copy_to_cpu;
    bit<1> copy_to_cpu;          /* also send a copy to the CPU port */
    bit<2> packet_color;
    bit<1> disable_ucast_cutthru;
    bit<1> enable_mcast_cutthru;
    MulticastGroupId_t mcast_grp_a;  /* first multicast group (0: none) */
    MulticastGroupId_t mcast_grp_b;  /* second multicast group (0: none) */
    bit<13> level1_mcast_hash;
    bit<13> level2_mcast_hash;
    L1ExclusionId_t level1_exclusion_id;
    L2ExclusionId_t level2_exclusion_id;
    bit<16> rid;
}

/* What the ingress parser knows of the packet. */
@__intrinsic_metadata
struct ingress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;       /* arrival time in ns */
    bit<32> global_ver;
    bit<16> parser_err;          /* PARSER_ERROR_* flags */
}

/* Requests of the ingress pipeline to the ingress deparser. */
@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;             /* bit 0: drop (no unicast, multicast or resubmit) */
    DigestType_t digest_type;
    ResubmitType_t resubmit_type;
    MirrorType_t mirror_type;
    bit<1> mirror_io_select;     /* mirror the packet as it arrived (0) or as it leaves (1) */
    /* Set, these override the mirror session's settings. */
    bit<13> mirror_hash;
    bit<3> mirror_ingress_cos;
    bit<1> mirror_deflect_on_drop;
    bit<1> mirror_multicast_ctrl;
    PortId_t mirror_egress_port;
    QueueId_t mirror_qid;
    bit<8> mirror_coalesce_length;  /* in units of 4 bytes */
    bit<32> adv_flow_ctl;        /* advanced flow control for the traffic manager */
    bit<14> mtu_trunc_len;
    bit<1> mtu_trunc_err_f;
    bit<1> pktgen;               /* trigger the packet generator (without a resubmit) */
    bit<14> pktgen_address;
    bit<10> pktgen_length;
}

/* ---- ghost thread intrinsic metadata ----------------------------------------------------- */

/* Queue-length updates the ghost thread sees. */
@__intrinsic_metadata @__ghost_metadata
header ghost_intrinsic_metadata_t {
    bit<1> ping_pong;            /* which copy of the state to update */
    bit<18> qlength;
    bit<11> qid;
    bit<2> pipe_id;
}

/* ---- egress intrinsic metadata ----------------------------------------------------------- */

/* Prepended to every packet the egress parser sees. */
@__intrinsic_metadata
header egress_intrinsic_metadata_t {
    @padding bit<(8 - PORT_ID_WIDTH % 8)> _pad0;
    PortId_t egress_port;        /* the port the packet leaves on */
    @padding bit<5> _pad1;
    bit<19> enq_qdepth;
    @padding bit<6> _pad2;
    bit<2> enq_congest_stat;
    bit<32> enq_tstamp;
    @padding bit<5> _pad3;
    bit<19> deq_qdepth;
    @padding bit<6> _pad4;
    bit<2> deq_congest_stat;
    bit<8> app_pool_congest_stat;
    bit<32> deq_timedelta;
    bit<16> egress_rid;          /* replication id of a multicast copy */
    @padding bit<7> _pad5;
    bit<1> egress_rid_first;
    @padding bit<(8 - QUEUE_ID_WIDTH % 8)> _pad6;
    QueueId_t egress_qid;
    @padding bit<5> _pad7;
    bit<3> egress_cos;
    @padding bit<7> _pad8;
    bit<1> deflection_flag;
    bit<16> pkt_length;          /* packet length in bytes */
    @padding bit<8> _pad9;       /* to a multiple of 4 bytes */
}

/* What the egress parser knows of the packet. */
@__intrinsic_metadata
struct egress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}

/* Requests of the egress pipeline to the egress deparser. */
@__intrinsic_metadata
struct egress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;             /* bit 0: drop */
    MirrorType_t mirror_type;
    bit<1> coalesce_flush;
    bit<7> coalesce_length;
    bit<1> mirror_io_select;
    bit<13> mirror_hash;
    bit<3> mirror_ingress_cos;
    bit<1> mirror_deflect_on_drop;
    bit<1> mirror_multicast_ctrl;
    PortId_t mirror_egress_port;
    QueueId_t mirror_qid;
    bit<8> mirror_coalesce_length;
    bit<32> adv_flow_ctl;
    bit<14> mtu_trunc_len;
    bit<1> mtu_trunc_err_f;
}

/* Requests to the egress MAC. */
@__intrinsic_metadata
struct egress_intrinsic_metadata_for_output_port_t {
    bit<1> capture_tstamp_on_tx;
    bit<1> update_delay_on_tx;
}

/* ---- packet generator headers ------------------------------------------------------------ */

header pktgen_timer_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_port_down_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<(16 - PORT_ID_WIDTH % 8)> _pad2;
    PortId_t port_num;
    bit<16> packet_id;
}

header pktgen_recirc_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_deparser_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_pfc_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<40> _pad2;
}

/* ---- time synchronization ---------------------------------------------------------------- */

header ptp_metadata_t {
    bit<8> udp_cksum_byte_offset;
    bit<8> cf_byte_offset;
    bit<48> updated_cf;
}

/* ---- parser and deparser externs --------------------------------------------------------- */

/* The 16-bit ones' complement checksum unit of the parser and the deparser. */
extern Checksum {
    Checksum();
    /* Adds byte-aligned fields to the sum. */
    void add<T>(in T data);
    /* Subtracts byte-aligned fields from the sum. */
    void subtract<T>(in T data);
    /* True when the sum verifies (the complemented sum is zero). */
    bool verify();
    /* Writes the residual of the fields added so far; fields extracted later are
     * subtracted. */
    void subtract_all_and_deposit<T>(out T residual);
    /* The checksum of the fields added so far. */
    bit<16> get();
    /* The checksum of data (deparser). */
    bit<16> update<T>(in T data, @optional in bool zeros_as_ones);
}

/* The parser's 8-bit signed counter, with a stack of four for nested lengths. */
extern ParserCounter {
    ParserCounter();
    void set<T>(in T value);
    void set<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<8> mask, in bit<8> add);
    void push<T>(in T value, @optional bool update_with_top);
    void push<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<8> mask, in bit<8> add,
                 @optional bool update_with_top);
    void pop();
    bool is_zero();
    bool is_negative();
    void increment(in bit<8> value);
    void decrement(in bit<8> value);
}

/* Priority of the packet in the ingress buffer. */
extern ParserPriority {
    ParserPriority();
    void set(in bit<3> prio);
}

/* ---- hashing and random numbers ---------------------------------------------------------- */

/* A CRC: coeff is the polynomial without its top bit, reversed reflects input and output,
 * init and xor are the initial value and the final xor. */
extern CRCPolynomial<T> {
    CRCPolynomial(T coeff, bool reversed, bool msb, bool extended, T init, T xor);
}

/* A hash of width W. */
extern Hash<W> {
    Hash(HashAlgorithm_t algo);
    Hash(HashAlgorithm_t algo, CRCPolynomial<_> poly);
    W get<D>(in D data);
}

/* Uniform random numbers of width W. */
extern Random<W> {
    Random();
    W get();
}

/* The idle timeout of a table's entries (the table property idle_timeout). */
extern IdleTimeout {
    IdleTimeout();
}

/* ---- extern functions -------------------------------------------------------------------- */

extern T max<T>(in T t1, in T t2);

extern T min<T>(in T t1, in T t2);

extern void funnel_shift_right<T>(out T dst, in T src1, in T src2, int shift_amount);

extern void invalidate<T>(in T field);

extern bool is_validated<T>(in T field);

/* Reads the port metadata (phase 0 data) that follows ingress_intrinsic_metadata_t. */
extern T port_metadata_unpack<T>(packet_in pkt);

extern bit<32> sizeInBits<H>(in H h);

extern bit<32> sizeInBytes<H>(in H h);

/* ---- stateful externs -------------------------------------------------------------------- */

/* An array of size counters of width W, indexed by I. */
extern Counter<W, I> {
    /* true_egress_accounting: count the bytes the egress deparser sends (egress only). */
    Counter(bit<32> size, CounterType_t type, @optional bool true_egress_accounting);
    void count(in I index, @optional in bit<32> adjust_byte_count);
}

/* One counter per entry of the table whose counters property names it. */
extern DirectCounter<W> {
    DirectCounter(CounterType_t type, @optional bool true_egress_accounting);
    void count(@optional in bit<32> adjust_byte_count);
}

/* An array of two-rate three-colour meters. The second constructor gives the colour
 * values to return. */
extern Meter<I> {
    Meter(bit<32> size, MeterType_t type, @optional bool true_egress_accounting);
    Meter(bit<32> size, MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green,
          @optional bool true_egress_accounting);
    bit<8> execute(in I index, in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(in I index, @optional in bit<32> adjust_byte_count);
}

/* One meter per entry of the table whose meters property names it. */
extern DirectMeter {
    DirectMeter(MeterType_t type, @optional bool true_egress_accounting);
    DirectMeter(MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green,
                @optional bool true_egress_accounting);
    bit<8> execute(in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(@optional in bit<32> adjust_byte_count);
}

/* Low-pass filters. */
extern Lpf<T, I> {
    Lpf(bit<32> size);
    T execute(in T val, in I index);
}

extern DirectLpf<T> {
    DirectLpf();
    T execute(in T val);
}

/* Weighted random early detection. */
extern Wred<T, I> {
    Wred(bit<32> size, bit<8> drop_value, bit<8> no_drop_value);
    bit<8> execute(in T val, in I index);
}

extern DirectWred<T> {
    DirectWred(bit<8> drop_value, bit<8> no_drop_value);
    bit<8> execute(in T val);
}

/* An array of size cells of type T (bit<8>, bit<16>, bit<32>, or a struct of two such
 * fields of one width), indexed by I, optionally initialized to initial_value. */
extern Register<T, I> {
    Register(bit<32> size);
    Register(bit<32> size, T initial_value);
    T read(in I index);
    T write(in I index, in T value);
    /* Writes value to every cell. */
    void clear(in T value, @optional in T busy);
}

/* One register cell per entry of the table whose registers property names it. */
extern DirectRegister<T> {
    DirectRegister();
    DirectRegister(T initial_value);
    T read();
    T write(in T value);
    void clear(in T value, @optional in T busy);
}

/* A read-only value the control plane may set, readable in register actions. */
extern RegisterParam<T> {
    RegisterParam(T initial_value);
    T read();
}

/* The operations of a MathUnit. */
enum MathOp_t {
    MUL,
    SQR,
    SQRT,
    DIV,
    RSQR,
    RSQRT
};

/* A lookup-table based function unit for register actions. */
extern MathUnit<T> {
    MathUnit(bool invert, int<2> shift, int<6> scale,
             tuple< bit<8>, bit<8>, bit<8>, bit<8>,
                    bit<8>, bit<8>, bit<8>, bit<8>,
                    bit<8>, bit<8>, bit<8>, bit<8>,
                    bit<8>, bit<8>, bit<8>, bit<8> > data);
    MathUnit(MathOp_t op, int factor);
    MathUnit(MathOp_t op, int A, int B);
    T execute(in T x);
};

/* The helpers every register action of Tofino 2 has, callable in its apply bodies: the match
 * address, the predicate of the comparisons, and the min/max units (8 lanes of 16 bits or 16 of 8
 * over a 128-bit value). They are written out in each extern below. */

/* A stateful ALU program on the cells of reg (see tofino1_base.p4's RegisterAction). Tofino 2's
 * stateful ALU returns up to four values (rv1..rv4, the first as execute's result) and adds
 * FIFO/stack operations, a sweep over all cells, and overflow/underflow handlers; the
 * RegisterAction2..4 variants give each returned value a type of its own. */
extern RegisterAction<T, H, U> {
    RegisterAction(Register<_, _> reg);
    U execute(@optional in H index, @optional out U rv2, @optional out U rv3, @optional out U rv4);
    U execute_log(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U enqueue(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U dequeue(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U push(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U pop(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    void sweep(@optional in U busy);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop, sweep)
    abstract void apply(inout T value, @optional out U rv1, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, @optional out U rv1,
                                     @optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, @optional out U rv1,
                                      @optional out U rv2, @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern RegisterAction2<T, H, U1, U2> {
    RegisterAction2(Register<_, _> reg);
    U1 execute(in H index, out U2 rv2);
    U1 execute_log(out U2 rv2);
    U1 enqueue(out U2 rv2);
    U1 dequeue(out U2 rv2);
    U1 push(out U2 rv2);
    U1 pop(out U2 rv2);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, out U1 rv1, out U2 rv2);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, out U1 rv1, out U2 rv);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern RegisterAction3<T, H, U1, U2, U3> {
    RegisterAction3(Register<_, _> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3);
    U1 execute_log(out U2 rv2, out U3 rv3);
    U1 enqueue(out U2 rv2, out U3 rv3);
    U1 dequeue(out U2 rv2, out U3 rv3);
    U1 push(out U2 rv2, out U3 rv3);
    U1 pop(out U2 rv2, out U3 rv3);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern RegisterAction4<T, H, U1, U2, U3, U4> {
    RegisterAction4(Register<_, _> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3, out U4 rv4);
    U1 execute_log(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 enqueue(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 dequeue(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 push(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 pop(out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value,
                                     out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value,
                                      out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

/* RegisterAction on the DirectRegister cell of the table entry that was hit. */
extern DirectRegisterAction<T, U> {
    DirectRegisterAction(DirectRegister<T> reg);
    U execute(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout T value, @optional out U rv, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction2<T, U1, U2> {
    DirectRegisterAction2(DirectRegister<T> reg);
    U1 execute(out U2 rv2);
    @synchronous(execute)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction3<T, U1, U2, U3> {
    DirectRegisterAction3(DirectRegister<T> reg);
    U1 execute(out U2 rv2, out U3 rv3);
    @synchronous(execute)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction4<T, U1, U2, U3, U4> {
    DirectRegisterAction4(DirectRegister<T> reg);
    U1 execute(out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

/* A register action that learns: apply sees the digest data and whether to learn. */
extern LearnAction<T, H, D, U> {
    LearnAction(Register<T, H> reg);
    U execute(in H index, @optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn,
                        @optional out U rv1, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern LearnAction2<T, H, D, U1, U2> {
    LearnAction2(Register<T, H> reg);
    U1 execute(in H index, out U2 rv2);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern LearnAction3<T, H, D, U1, U2, U3> {
    LearnAction3(Register<T, H> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn,
                        out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern LearnAction4<T, H, D, U1, U2, U3, U4> {
    LearnAction4(Register<T, H> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn,
                        out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

/* A register action on 128-bit cells whose min/max units find the least or greatest lane. */
extern MinMaxAction<T, H, U> {
    MinMaxAction(Register<T, _> reg);
    U execute(@optional in H index, @optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, @optional out U rv1, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index, @optional in int<8> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index, @optional in int<8> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index, @optional in int<8> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index, @optional in int<8> postmod);
}

extern MinMaxAction2<T, H, U1, U2> {
    MinMaxAction2(Register<T, _> reg);
    U1 execute(@optional in H index, out U2 rv2);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index, @optional in int<9> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index, @optional in int<9> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index, @optional in int<9> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index, @optional in int<9> postmod);
}

extern MinMaxAction3<T, H, U1, U2, U3> {
    MinMaxAction3(Register<T, _> reg);
    U1 execute(@optional in H index, out U2 rv2, out U3 rv3);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index, @optional in int<9> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index, @optional in int<9> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index, @optional in int<9> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index, @optional in int<9> postmod);
}

extern MinMaxAction4<T, H, U1, U2, U3, U4> {
    MinMaxAction4(Register<T, _> reg);
    U1 execute(@optional in H index, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index, @optional in int<9> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index, @optional in int<9> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index, @optional in int<9> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index, @optional in int<9> postmod);
}

/* ---- action profiles --------------------------------------------------------------------- */

extern ActionProfile {
    ActionProfile(bit<32> size);
}

extern ActionSelector {
    ActionSelector(ActionProfile action_profile,
                   Hash<_> hash,
                   SelectorMode_t mode,
                   bit<32> max_group_size,
                   bit<32> num_groups);
    ActionSelector(ActionProfile action_profile,
                   Hash<_> hash,
                   SelectorMode_t mode,
                   Register<bit<1>, _> reg,
                   bit<32> max_group_size,
                   bit<32> num_groups);
    @deprecated("ActionSelector must be specified with an associated ActionProfile")
    ActionSelector(bit<32> size, Hash<_> hash, SelectorMode_t mode);
    @deprecated("ActionSelector must be specified with an associated ActionProfile")
    ActionSelector(bit<32> size, Hash<_> hash, SelectorMode_t mode, Register<bit<1>, _> reg);
}

extern SelectorAction {
    SelectorAction(ActionSelector sel);
    bit<1> execute(@optional in bit<32> index);
    @synchronous(execute)
    abstract void apply(inout bit<1> value, @optional out bit<1> rv);
}

/* ---- deparser externs -------------------------------------------------------------------- */

/* Mirroring. In the ingress deparser, emit copies the packet as it arrived; in the egress
 * deparser, the packet as deparsed. The copy goes to the mirror session's port, with hdr
 * in front of it. */
extern Mirror {
    @deprecated("Mirror must be specified with the value of the mirror_type instrinsic metadata")
    Mirror();
    Mirror(MirrorType_t mirror_type);
    void emit(in MirrorId_t session_id);
    void emit<T>(in MirrorId_t session_id, in T hdr);
}

/* Resubmission from the ingress deparser: the packet as it arrived enters the ingress
 * parser again, with resubmit_flag set and hdr (64 bits) in place of the port metadata. */
extern Resubmit {
    @deprecated("Resubmit must be specified with the value of the resubmit_type instrinsic metadata")
    Resubmit();
    Resubmit(ResubmitType_t resubmit_type);
    void emit();
    void emit<T>(in T hdr);
}

/* Learning digests to the control plane, packed in the ingress deparser. */
extern Digest<T> {
    @deprecated("Digest must be specified with the value of the digest_type instrinsic metadata")
    Digest();
    Digest(DigestType_t digest_type);
    void pack(in T data);
}

/* Packet generation at the end of the ingress pipeline (Tofino 2): hdr (up to 128 bits) goes
 * in front of the generated packet. */
extern Pktgen {
    Pktgen();
    void emit<T>(in T hdr);
}

/* ---- table implementations --------------------------------------------------------------- */

/* Algorithmic TCAM; one key must have match kind atcam_partition_index. */
extern Atcam {
    Atcam(@optional bit<32> number_partitions);
}

/* Algorithmic LPM. */
extern Alpm {
    Alpm(@optional bit<32> number_partitions, @optional bit<32> subtrees_per_partition,
         @optional bit<32> atcam_subset_width, @optional bit<32> shift_granularity);
}

#endif  /* _TOFINO2_P4_BASE_ */
