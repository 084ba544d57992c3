/* An abstract method that is not @optional must be implemented (the @optional twin is accepted in
 * accept/own_arch_props.p4). */
#include <core.p4>
extern Stateful<T> {
    Stateful();
    T run();
    abstract T step(in T x);
    @optional abstract void overflow(inout T x);
}
control Ctl(inout bit<8> v) {
    Stateful<bit<8>>() s = {
        void overflow(inout bit<8> x) { x = 0; }
    };
    apply { v = s.run(); }
}
control C(inout bit<8> v);
package Top(C c);
Top(Ctl()) main;
