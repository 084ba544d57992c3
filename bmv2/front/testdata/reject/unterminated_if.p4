#include <core.p4>
#ifdef SOMETHING
const bit<8> X = 1;
