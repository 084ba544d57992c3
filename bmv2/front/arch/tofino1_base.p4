/* netlock's portable TNA declarations: parser error flags, intrinsic metadata of the
 * ingress and egress pipelines, and the externs. Names, field order, widths and method
 * signatures as in Intel's tofino1_base.p4 (see tna.p4); the text is our own. */
#ifndef _TOFINO1_P4_BASE_
#define _TOFINO1_P4_BASE_

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
const bit<16> PARSER_ERROR_DST_CONT     = 16w0x0040;
const bit<16> PARSER_ERROR_PHV_OWNER    = 16w0x0080;
const bit<16> PARSER_ERROR_MULTIWRITE   = 16w0x0100;
const bit<16> PARSER_ERROR_ARAM_MBE     = 16w0x0400;
const bit<16> PARSER_ERROR_FCS          = 16w0x0800;

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
    @padding bit<14> _pad3;
    bit<18> enq_tstamp;
    @padding bit<5> _pad4;
    bit<19> deq_qdepth;
    @padding bit<6> _pad5;
    bit<2> deq_congest_stat;
    bit<8> app_pool_congest_stat;
    @padding bit<14> _pad6;
    bit<18> deq_timedelta;
    bit<16> egress_rid;          /* replication id of a multicast copy */
    @padding bit<7> _pad7;
    bit<1> egress_rid_first;
    @padding bit<(8 - QUEUE_ID_WIDTH % 8)> _pad8;
    QueueId_t egress_qid;
    @padding bit<5> _pad9;
    bit<3> egress_cos;
    @padding bit<7> _pad10;
    bit<1> deflection_flag;
    bit<16> pkt_length;          /* packet length in bytes */
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
}

/* Requests to the egress MAC. */
@__intrinsic_metadata
struct egress_intrinsic_metadata_for_output_port_t {
    bit<1> capture_tstamp_on_tx;
    bit<1> update_delay_on_tx;
}

/* ---- packet generator headers ------------------------------------------------------------ */

header pktgen_timer_header_t {
    @padding bit<3> _pad1;
    bit<2> pipe_id;
    bit<3> app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_port_down_header_t {
    @padding bit<3> _pad1;
    bit<2> pipe_id;
    bit<3> app_id;
    @padding bit<(16 - PORT_ID_WIDTH % 8)> _pad2;
    PortId_t port_num;
    bit<16> packet_id;
}

header pktgen_recirc_header_t {
    @padding bit<3> _pad1;
    bit<2> pipe_id;
    bit<3> app_id;
    bit<24> key;
    bit<16> packet_id;
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

/* The parser's 8-bit signed counter. */
extern ParserCounter {
    ParserCounter();
    void set<T>(in T value);
    void set<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<3> mask, in bit<8> add);
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

/* ---- extern functions -------------------------------------------------------------------- */

extern T max<T>(in T t1, in T t2);

extern T min<T>(in T t1, in T t2);

extern void funnel_shift_right<T>(inout T dst, in T src1, in T src2, int shift_amount);

extern void invalidate<T>(in T field);

extern bool is_validated<T>(in T field);

/* Reads the port metadata (phase 0 data) that follows ingress_intrinsic_metadata_t. */
extern T port_metadata_unpack<T>(packet_in pkt);

extern bit<32> sizeInBits<H>(in H h);

extern bit<32> sizeInBytes<H>(in H h);

/* ---- stateful externs -------------------------------------------------------------------- */

/* An array of size counters of width W, indexed by I. */
extern Counter<W, I> {
    Counter(bit<32> size, CounterType_t type);
    void count(in I index, @optional in bit<32> adjust_byte_count);
}

/* One counter per entry of the table whose counters property names it. */
extern DirectCounter<W> {
    DirectCounter(CounterType_t type);
    void count(@optional in bit<32> adjust_byte_count);
}

/* An array of two-rate three-colour meters. The second constructor gives the colour
 * values to return. */
extern Meter<I> {
    Meter(bit<32> size, MeterType_t type);
    Meter(bit<32> size, MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green);
    bit<8> execute(in I index, in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(in I index, @optional in bit<32> adjust_byte_count);
}

/* One meter per entry of the table whose meters property names it. */
extern DirectMeter {
    DirectMeter(MeterType_t type);
    DirectMeter(MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green);
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
}

/* One register cell per entry of the table whose registers property names it. */
extern DirectRegister<T> {
    DirectRegister();
    DirectRegister(T initial_value);
    T read();
    T write(in T value);
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

/* A stateful ALU program on the cells of reg. execute(index) runs apply on cell index:
 * value is the cell (written back afterwards), rv is execute's result. The instance gives
 * apply's body: RegisterAction<T, I, U>(reg) name = { void apply(inout T value, out U rv)
 * { ... } }; */
extern RegisterAction<T, I, U> {
    RegisterAction(Register<_, _> reg);
    U execute(in I index);
    /* apply on a cell chosen by an index that increments on every call. */
    U execute_log();
    @synchronous(execute, execute_log)
    abstract void apply(inout T value, @optional out U rv);
    U predicate(@optional in bool cmplo, @optional in bool cmphi);
}

/* RegisterAction on the DirectRegister cell of the table entry that was hit. */
extern DirectRegisterAction<T, U> {
    DirectRegisterAction(DirectRegister<T> reg);
    U execute();
    @synchronous(execute)
    abstract void apply(inout T value, @optional out U rv);
    U predicate(@optional in bool cmplo, @optional in bool cmphi);
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

#endif
