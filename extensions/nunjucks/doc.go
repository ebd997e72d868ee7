// Package nunjucks renders MetalSoft's extension templates (a webhook's
// requestTemplate, an SSH task's commandTemplate) exactly as Nunjucks 3.2.4
// renders them with autoescape off.
//
// gonja v2 lexes and parses the template (with our own parsers for the
// tags, registered through gonja's control-structure hooks); this package
// is the compatibility layer that evaluates gonja's syntax tree with
// Nunjucks' semantics. Nunjucks compiles a template to JavaScript, so its
// semantics are JavaScript's, and that is where Jinja (and gonja) differ:
//
//   - undefined and null print as empty; a member of undefined or null is
//     undefined, not an error;
//   - booleans print true and false; an array prints its elements joined
//     by commas (null elements empty); an object prints [object Object];
//   - every number is a double and prints as JavaScript prints it: 4000/1000
//     is 4, 0.1+0.2 is 0.30000000000000004, 1e21 is 1e+21;
//   - dump is JSON.stringify: compact (or indented by its argument), keys
//     in JavaScript's order (array-index keys first, then insertion order);
//   - default(v, d) replaces only undefined, unless its third argument is
//     true (then any falsy value);
//   - join(sep, attribute), title, first, last, length, replace, upper,
//     lower and every other Nunjucks filter follow Nunjucks' source,
//     including which values make them throw;
//   - ~ and + and the other infix operators are emitted by Nunjucks as bare
//     JavaScript, so JavaScript's precedence applies: "a" ~ 1 + 2 is "a12",
//     "x" ~ undefined is "xundefined", not 1 == 2 is false;
//   - == is JavaScript's loose equality and === strict (gonja has no ===);
//   - empty arrays and objects are true in conditions;
//   - a {% set %} inside a loop updates a variable of the enclosing scope;
//   - loop.index, index0, revindex, revindex0, first, last, length;
//     for k, v in object walks keys in order; range, cycler, joiner;
//   - JavaScript string methods (split, trim, toUpperCase, indexOf, slice,
//     replace, padStart, ...) and array methods (join, slice, concat,
//     includes, push, ...) with UTF-16 indexing; .length;
//   - whitespace control ({%- -%}) trims JavaScript white space; CR LF line
//     ends are kept; the final newline is kept;
//   - string literals are lexed as Nunjucks lexes them: a backslash escapes
//     any character (\n, \t and \r are control characters, \" \\ and any
//     other stand for themselves), so replace('"', '\\"') and "C:\\temp\\"
//     work, and \u is a u (gonja's lexer cannot read these; lex.go reads
//     them before it);
//   - {% call %} passes its body to the macro as caller (with parameters:
//     {% call(item) list(items) %}); the body sees the loop variables and
//     macro parameters where it stands, and otherwise what the macro sees;
//   - {% switch %}, {% case %} and {% default %} are JavaScript's switch:
//     strict equality, and a case with nothing in it falls through;
//   - {% raw %} and {% verbatim %} print their text, nested blocks of the
//     same kind included;
//   - escape, safe, forceescape, a macro call and caller() return a
//     SafeString: escaping one again leaves it, it is true even when empty,
//     and dump prints it as the object it is ({"val":...,"length":n});
//   - regular-expression literals r/body/flags (g, i, m) for replace,
//     test, match, search and split (see regExp for what is refused);
//   - Number.prototype.toFixed, toPrecision and toString(radix);
//   - a lone surrogate (from a JSON payload or by slicing a string between
//     the halves of a pair) stays one: dump writes it as \udxxx, as
//     JSON.stringify does, and the rendered text has U+FFFD in its place.
//
// Additions: the shellquote filter quotes a value as one POSIX shell word
// (an array as several), and [Options.Strict] refuses undefined values
// with the expression and its position.
//
// Refused at parse time, with the line and column: unknown filters and
// tests (Nunjucks fails on them at render), include, import, extends and
// the other tags that need a template loader, slice syntax x[a:b] and
// exponent literals (Nunjucks has neither), and the regular-expression
// features Go's engine lacks (backreferences, lookaround, the sticky flag).
// Arrays that come with the data are read-only to templates (push on a
// payload array is an error; copy it with .slice() first), so one payload
// renders safely for many tasks at once. Known differences that remain:
// an inline "x if c else y" works in {{ }} and {% set %} only (gonja's
// grammar), regular expressions match by character rather than UTF-16
// unit (see regExp), and sorting with a comparator that is not a total
// order agrees with V8 only for arrays shorter than 64.
//
// Every render has a context and a budget: Render stops, with an *Error
// naming the template position, when its context ends (cancelled or past
// its deadline: loops, macro calls, filters and method calls check it)
// and when the template has built more than Options.Budget bytes of
// strings and arrays (DefaultBudget, 64 MiB). The rendered text (16 MiB),
// loop iterations (1,000,000 per render) and macro nesting (64) have caps
// of their own. Templates that must be stopped so — a macro calling itself
// twice, indent or replace multiplying a string, an array doubled by
// concat — are the refusal set in ../testdata/refusals.
//
// Every rule above is a case of the golden corpus in ../testdata/templates,
// recorded with real Nunjucks 3.2.4 (../testdata/nunjucks-golden.js) and
// re-checked against it by `make integration`.
package nunjucks
