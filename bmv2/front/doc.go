// Package front is the P4_16 front end of netlock's software switch: a preprocessor, a lexer, a
// parser for the subset of P4_16 that v1model programs use, a strict type checker and a P4Info
// generator.
//
// The pipeline is
//
//	Load(file) -> Preprocess -> tokens -> Parse -> *Program (AST) -> Check -> *Checked -> P4Info
//
// Every error carries the original file:line:col (after #include and #define expansion). The
// checked program records, for every expression, its resolved [Type] (widths constant-folded) and,
// for every name, the [Decl] it refers to, so that an execution engine can compile it without
// redoing name resolution or type inference.
//
// Constructs outside the supported subset are rejected with a message that starts with
// "not supported by the netlock target:".
package front
