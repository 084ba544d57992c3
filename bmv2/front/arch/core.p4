/* netlock's core library for P4_16, written from the P4_16 language specification
 * (section "P4 core library"). It declares the names every P4_16 program may use. */
#ifndef _CORE_P4_
#define _CORE_P4_

/* Standard error codes; programs may add more with their own error declarations. */
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

/* Packet input, available to parsers. */
extern packet_in {
    /* Extracts a fixed-size header from the packet and advances the cursor. */
    void extract<T>(out T hdr);
    /* Extracts a header that contains a varbit field of variableFieldSizeInBits bits. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Reads bits ahead of the cursor without advancing it. */
    T lookahead<T>();
    /* Skips sizeInBits bits. */
    void advance(in bit<32> sizeInBits);
    /* Packet length in bytes. */
    bit<32> length();
}

/* Packet output, available to deparsers. */
extern packet_out {
    /* Appends a header (if valid), or each element of a stack, struct or union. */
    void emit<T>(in T hdr);
}

/* Parser-only check: if check is false the parser rejects with toSignal. */
extern void verify(in bool check, in error toSignal);

/* The action that does nothing; the default of most tables. */
@noWarn("unused")
action NoAction() {}

/* Compile-time assertions: a false check is a compile error; the value is true. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

/* Match kinds every target provides. */
match_kind {
    exact,
    ternary,
    lpm
}

#endif
