#include <core.p4>
#define PASTE(a, b) a ## b
