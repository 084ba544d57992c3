#include <core.p4>
extern Stateful<T> {
    Stateful();
    T run();
    @synchronous(run, go)
    abstract void step(inout T value);
    @synchronous(run)
    void helper();
}
