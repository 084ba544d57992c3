#include <core.p4>
@name(4)
action a() { }
