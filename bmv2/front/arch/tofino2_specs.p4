/* netlock's Tofino 2 target specifics for t2na.p4: the widths of ports, queues, mirror,
 * resubmit and digest ids. Names and widths as in Intel's tofino2_specs.p4 (see t2na.p4). */
#ifndef _TOFINO2_P4_SPECS_
#define _TOFINO2_P4_SPECS_

#include <core.p4>

/* A Tofino port number is 9 bits: 2 bits of pipe, 7 bits of port within the pipe. */
#define PORT_ID_WIDTH 9
typedef bit<PORT_ID_WIDTH> PortId_t;

/* Multicast group of the traffic manager's replication engine. */
#define MULTICAST_GROUP_ID_WIDTH 16
typedef bit<MULTICAST_GROUP_ID_WIDTH> MulticastGroupId_t;

/* Egress queue of a port. */
#define QUEUE_ID_WIDTH 7
typedef bit<QUEUE_ID_WIDTH> QueueId_t;

/* Selects one of the Mirror.emit calls of a deparser. */
#define MIRROR_TYPE_WIDTH 4
typedef bit<MIRROR_TYPE_WIDTH> MirrorType_t;

/* Mirror (clone) session. */
#define MIRROR_ID_WIDTH 8
typedef bit<MIRROR_ID_WIDTH> MirrorId_t;

/* The name older programs use for MirrorType_t. */
typedef MirrorType_t CloneId_t;

/* Selects one of the Resubmit.emit calls of the ingress deparser. */
#define RESUBMIT_TYPE_WIDTH 3
typedef bit<RESUBMIT_TYPE_WIDTH> ResubmitType_t;

/* Selects one of the Digest.pack calls of the ingress deparser. */
#define DIGEST_TYPE_WIDTH 3
typedef bit<DIGEST_TYPE_WIDTH> DigestType_t;

/* Replication id of a multicast copy. */
#define REPLICATION_ID_WIDTH 16
typedef bit<REPLICATION_ID_WIDTH> ReplicationId_t;

/* Exclusion ids that prune multicast trees (level 1: nodes, level 2: ports). */
#define L1_EXCLUSION_ID_WIDTH 16
typedef bit<L1_EXCLUSION_ID_WIDTH> L1ExclusionId_t;
#define L2_EXCLUSION_ID_WIDTH 9
typedef bit<L2_EXCLUSION_ID_WIDTH> L2ExclusionId_t;

typedef error ParserError_t;

/* Size of the per-port metadata that follows ingress_intrinsic_metadata_t in the ingress
 * parser's input (or the resubmit header, for a resubmitted packet). */
const bit<32> PORT_METADATA_SIZE = 32w192;

/* The pipe and the port within the pipe of a port number. */
#define DEVPORT_PIPE_MASK 0x180
#define DEVPORT_PIPE(port) (port)[8:7]
#define DEVPORT_PORT_MASK 0x7f
#define DEVPORT_PORT(port) (port)[6:0]

#endif
