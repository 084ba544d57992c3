#include <core.p4>
control C(inout bit<8> x) {
    action a(in bit<8> v = x) { x = v; }
    action b(out bit<8> v = 1) { v = 2; }
    apply { }
}
