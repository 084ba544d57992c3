#include <core.p4>
#include <psa.p4>
