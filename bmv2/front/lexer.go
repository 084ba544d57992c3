package front

import (
	"math/big"
	"strings"
)

// TokKind classifies a token.
type TokKind uint8

// Token kinds.
const (
	TEOF TokKind = iota
	TIdent
	TInt
	TString
	TPunct
)

// Token is one lexical token. For TInt tokens Lit holds the decoded literal; for TString Text is
// the unquoted string.
type Token struct {
	Kind TokKind
	Text string
	Pos  Pos
	Lit  *IntLit
}

// IntLit is a decoded integer literal: 8w0x1 has Width 8, Value 1, HasWidth true.
type IntLit struct {
	Value    *big.Int
	Width    int
	Signed   bool
	HasWidth bool
	// Param names the program parameter the literal is the value of: the object-like macro
	// whose body it is part of, when the program lets it be set from outside: it was given
	// with -D, or the program tests #ifndef of its name, either defining its default inside
	// (the #define directly under the #ifndef) or finding it defined already (by -D or by a
	// file that includes the program). "" for any other literal. Every expansion of the macro
	// shares the one IntLit, so each use of a parameter is marked, also those before the
	// #ifndef; a program's structure without its parameters' values is what the engine's Go
	// backend binds to (engine.Fingerprint).
	Param string
}

// puncts lists multi-character operators, longest first. '>' is always a single token so that
// nested type arguments (bit<8>>) lex correctly; the parser joins adjacent '>' '>' into a shift.
var puncts = []string{"|+|", "|-|", "&&&", "++", "==", "!=", "<=", ">=", "<<", "&&", "||", ".."}

const singlePuncts = "(){}[]<>;:,.=+-*/%&|^~!?@"

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

// lexLine tokenizes one line of comment-free source; columns are 1-based offsets into line.
func lexLine(line string, file string, lineNo int, errs *ErrorList) []Token {
	var toks []Token
	i := 0
	for i < len(line) {
		c := line[i]
		pos := Pos{File: file, Line: lineNo, Col: i + 1}
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case isIdentStart(c):
			j := i + 1
			for j < len(line) && isIdentChar(line[j]) {
				j++
			}
			toks = append(toks, Token{Kind: TIdent, Text: line[i:j], Pos: pos})
			i = j
		case isDigit(c):
			j, lit, err := lexNumber(line, i)
			if err != "" {
				*errs = append(*errs, errorf(pos, "%s", err))
			}
			toks = append(toks, Token{Kind: TInt, Text: line[i:j], Pos: pos, Lit: lit})
			i = j
		case c == '"':
			j := i + 1
			var b strings.Builder
			closed := false
			for j < len(line) {
				if line[j] == '\\' && j+1 < len(line) {
					switch line[j+1] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					default:
						b.WriteByte(line[j+1])
					}
					j += 2
					continue
				}
				if line[j] == '"' {
					closed = true
					j++
					break
				}
				b.WriteByte(line[j])
				j++
			}
			if !closed {
				*errs = append(*errs, errorf(pos, "unterminated string literal"))
			}
			toks = append(toks, Token{Kind: TString, Text: b.String(), Pos: pos})
			i = j
		default:
			matched := false
			for _, p := range puncts {
				if strings.HasPrefix(line[i:], p) {
					toks = append(toks, Token{Kind: TPunct, Text: p, Pos: pos})
					i += len(p)
					matched = true
					break
				}
			}
			if matched {
				continue
			}
			if strings.IndexByte(singlePuncts, c) >= 0 {
				toks = append(toks, Token{Kind: TPunct, Text: line[i : i+1], Pos: pos})
				i++
				continue
			}
			*errs = append(*errs, errorf(pos, "unexpected character %q", c))
			i++
		}
	}
	return toks
}

// lexNumber scans an integer literal starting at line[i]: [width(w|s)][0x|0o|0b|0d]digits, with
// underscores allowed between digits.
func lexNumber(line string, i int) (int, *IntLit, string) {
	j := i
	for j < len(line) && (isDigit(line[j]) || line[j] == '_') {
		j++
	}
	lit := &IntLit{Value: new(big.Int)}
	start := i
	if j < len(line) && (line[j] == 'w' || line[j] == 's') && j+1 < len(line) && isDigit(line[j+1]) {
		w, ok := new(big.Int).SetString(strings.ReplaceAll(line[i:j], "_", ""), 10)
		if !ok || !w.IsInt64() || w.Int64() > 1<<20 {
			return j + 1, lit, "invalid literal width"
		}
		lit.Width = int(w.Int64())
		lit.HasWidth = true
		lit.Signed = line[j] == 's'
		start = j + 1
	}
	base := 10
	k := start
	if k+1 < len(line) && line[k] == '0' {
		switch line[k+1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		case 'd', 'D':
			base = 10
		}
		if base != 10 || line[k+1] == 'd' || line[k+1] == 'D' {
			k += 2
		}
	}
	e := k
	for e < len(line) && (isIdentChar(line[e])) {
		e++
	}
	digits := strings.ReplaceAll(line[k:e], "_", "")
	if digits == "" {
		return e, lit, "invalid integer literal " + line[i:e]
	}
	if _, ok := lit.Value.SetString(digits, base); !ok {
		lit.Value.SetInt64(0)
		return e, lit, "invalid integer literal " + line[i:e]
	}
	if lit.HasWidth && lit.Width == 0 {
		return e, lit, "integer literal width must be positive"
	}
	if lit.HasWidth && lit.Signed && lit.Width < 2 {
		return e, lit, "signed integer literal must be at least 2 bits wide"
	}
	return e, lit, ""
}
