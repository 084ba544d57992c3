#include <core.p4>
extern Hooks {
    Hooks();
    abstract void on_packet();
}
control C() {
    Hooks() hooks;
    apply { }
}
