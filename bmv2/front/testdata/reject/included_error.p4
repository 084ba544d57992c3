#include "skel.inc"
#include "bad_decl.inc"
