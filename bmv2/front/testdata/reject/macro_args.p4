#include <core.p4>
#define TWICE(x) ((x) + (x))
const bit<8> A = TWICE(1, 2);
