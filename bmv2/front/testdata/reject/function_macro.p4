#include <core.p4>
#define MAX(a, b) ((a) > (b) ? (a) : (b))
