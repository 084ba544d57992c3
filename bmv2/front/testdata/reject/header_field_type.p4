#include <core.p4>
header bad_t {
    bit<8> a;
    error  e;
}
