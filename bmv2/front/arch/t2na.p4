/* netlock's declarations of the Tofino Native Architecture for Tofino 2 (T2NA).
 *
 * Written for the netlock front end. The names, types and signatures are those of Intel's
 * published t2na.p4 (p4lang/p4c, backends/tofino/bf-p4c/p4include: t2na.p4, tofino2_specs.p4,
 * tofino2_base.p4 and tofino2_arch.p4, T2NA version 1.0.1), so that programs written for Tofino 2
 * are accepted unchanged; the declarations and comments here are our own. The netlock engine
 * runs Tofino 1 (tna.p4) programs only: it refuses a T2NA program.
 *
 * As with bf-p4c, the include order is: target specifics, then the portable base, then the
 * programmable blocks and packages. */
#ifndef _TOFINO2_NATIVE_ARCHITECTURE_
#define _TOFINO2_NATIVE_ARCHITECTURE_

/* bf-p4c defines __TARGET_TOFINO__ to the chip generation (2 for --target tofino2). */
#ifndef __TARGET_TOFINO__
#define __TARGET_TOFINO__ 2
#endif
#if __TARGET_TOFINO__ != 2
#error t2na.p4 is the architecture of Tofino 2 (define __TARGET_TOFINO__ to 2, or include tna.p4)
#endif

#include <tofino2_specs.p4>
#include <tofino2_arch.p4>

#endif
