#include <core.p4>
#define STR(a) #a
