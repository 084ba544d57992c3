#include <core.p4>
extern void log2(in bit<8> a);
extern void log2(in bit<8> b);
control C(inout bit<8> x) {
    apply {
        log2(x);
        log2(b = x);
    }
}
