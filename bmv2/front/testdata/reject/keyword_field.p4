/* in, out and inout are P4_16 keywords: p4c's parser refuses them as names ("syntax error,
 * unexpected OUT"), here as a header field. Keywords that may be names (apply, key, actions,
 * entries, state, type, list, priority) are accepted: see the fields of h_t. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> key;
    bit<8> state;
    bit<8> type;
    bit<8> priority;
    bit<8> out;
}
