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
// What the checked program records (the contract with the execution engine):
//
//   - Expr.Type() for every expression; NameExpr.Decl for every name; MemberExpr.Kind with
//     Field or Enum; CallExpr.Callee or CallExpr.Method, Params, Ordered (arguments in
//     parameter order) and TypeArgT (explicit or inferred type arguments);
//   - Checked.Const: the value of every compile-time constant expression;
//   - SliceExpr.HiV/LoV, SwitchStmt.OnActionRun, ActionRef.Action, Param.T, VarDecl.T;
//   - Checked.Main and Checked.V1Switch: the pipeline's parser and controls.
//
// Inspect visits every expression of a program. P4Info follows p4c: the same names, ids,
// aliases and, for p4c's own test corpus, the same messages (see docs/p4.md).
//
// Constructs outside the supported subset are rejected with a message that starts with
// "not supported by the netlock target:".
package front
