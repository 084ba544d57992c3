/* netlock's declarations of the Tofino Native Architecture (TNA) for Tofino 1.
 *
 * Written for the netlock software target. The names, types and signatures are those of
 * Intel's published tna.p4 (p4lang/p4c, backends/tofino/bf-p4c/p4include: tna.p4,
 * tofino1_specs.p4, tofino1_base.p4 and tofino1_arch.p4, architecture version 2.0.1), so
 * that programs written for Tofino are accepted unchanged; the declarations and comments
 * here are our own. docs/p4.md says what the netlock engine implements of each extern.
 *
 * As with bf-p4c, the include order is: target specifics (widths of ids), then the
 * portable base (metadata, externs), then the programmable blocks and packages. */
#ifndef _TOFINO1_NATIVE_ARCHITECTURE_
#define _TOFINO1_NATIVE_ARCHITECTURE_

/* bf-p4c defines __TARGET_TOFINO__ to the chip generation; netlock's engine runs Tofino 1.
 * A TNA program compiled for Tofino 2 (bf-p4c --target tofino2 --arch tna) takes Tofino 2's
 * widths with the Tofino 1 blocks, as Intel's tna.p4 does; the engine refuses it. */
#ifndef __TARGET_TOFINO__
#define __TARGET_TOFINO__ 1
#endif
#if __TARGET_TOFINO__ == 1
#include <tofino1_specs.p4>
#elif __TARGET_TOFINO__ == 2
#include <tofino2_specs.p4>
#else
#error tna.p4 is the architecture of Tofino 1 and 2 (__TARGET_TOFINO__ 1 or 2)
#endif

#include <tofino1_arch.p4>

#endif
