#include <core.p4>
header huge_t { bit<4096> data; }
const bit<8> S = 1 << 5000;
