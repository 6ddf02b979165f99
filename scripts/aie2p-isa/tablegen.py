"""A reader for the subset of TableGen that llvm-aie's AIE2P description files use.

It is ours (written for Loom), not LLVM's: a tokenizer, a statement parser and a small evaluator
for the constructs those files contain -- `class`, `def`, `let ... in` (block and single
statement), `foreach` over integer ranges and lists, `include` (recorded, not followed), template
arguments, field declarations, `let` with bit slices, values (integers, binary literals, strings,
code blocks, identifiers with bit slices, `{...}` bit concatenation, `[...]` lists, `(...)` dags,
anonymous class instances `C<...>`, lists with a trailing comma, `#` pasting, `!cast`, `!mul`, `!add`, `!sub`).

Anything else (`multiclass`, `defm`, `defset`, `defvar`, `if`, other bang operators, ...) raises
TGError with the file and line, so a change upstream fails loudly instead of being guessed at.
"""

import re


class TGError(Exception):
    pass


# --------------------------------------------------------------------------- tokens

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<code>\[\{.*?\}\])
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<bin>0b[01]+)
  | (?P<hex>0x[0-9a-fA-F]+)
  | (?P<int>[0-9]+(?![A-Za-z_]))
  | (?P<var>\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<bang>![a-z]+)
  | (?P<ident>[A-Za-z_0-9][A-Za-z0-9_.]*)
  | (?P<punct>[<>(){}\[\],;:=#\-?])
    """,
    re.S | re.X,
)


class Tok:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return "%s(%r)@%d" % (self.kind, self.text, self.line)


def tokenize(text, fname):
    pos, line, out = 0, 1, []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise TGError("%s:%d: cannot tokenize %r" % (fname, line, text[pos:pos + 20]))
        kind = m.lastgroup
        s = m.group(kind)
        if kind not in ("ws", "lcomment", "bcomment"):
            out.append(Tok(kind, s, line))
        line += s.count("\n")
        pos = m.end()
    out.append(Tok("eof", "", line))
    return out


# --------------------------------------------------------------------------- AST
# Values are tuples:
#   ('int', n) ('bits', width, n)  -- binary literal with its digit count
#   ('str', s) ('code', s) ('id', name) ('slice', base_value, [(hi, lo), ...])
#   ('concat', [v...])  ('list', [v...])  ('dag', op_value, [(arg_value|None, varname|None)...])
#   ('inst', classname, [args])  ('paste', left, right)  ('bang', op, type|None, [args])
#   ('unset',)


class Parser:
    def __init__(self, toks, fname):
        self.t, self.i, self.fname = toks, 0, fname

    # helpers
    def peek(self, k=0):
        return self.t[self.i + k]

    def err(self, msg, tok=None):
        tok = tok or self.peek()
        raise TGError("%s:%d: %s (at %r)" % (self.fname, tok.line, msg, tok.text))

    def next(self):
        tok = self.t[self.i]
        self.i += 1
        return tok

    def accept(self, text):
        if self.peek().text == text and self.peek().kind in ("punct", "ident"):
            return self.next()
        return None

    def expect(self, text):
        tok = self.next()
        if tok.text != text:
            self.i -= 1
            self.err("expected %r" % text)
        return tok

    def ident(self):
        tok = self.next()
        if tok.kind != "ident":
            self.i -= 1
            self.err("expected identifier")
        return tok.text

    # statements
    def parse_file(self):
        stmts = []
        while self.peek().kind != "eof":
            stmts.append(self.statement())
        return stmts

    def statement(self):
        tok = self.peek()
        if tok.kind != "ident":
            self.err("expected a statement")
        kw = tok.text
        if kw == "include":
            self.next()
            s = self.next()
            return ("include", s.text.strip('"'), tok.line)
        if kw == "let":
            self.next()
            lets = [self.let_item()]
            while self.accept(","):
                lets.append(self.let_item())
            self.expect("in")
            body = self.block_or_stmt()
            return ("let", lets, body, tok.line)
        if kw == "foreach":
            self.next()
            var = self.ident()
            self.expect("=")
            rng = self.foreach_range()
            self.expect("in")
            body = self.block_or_stmt()
            return ("foreach", var, rng, body, tok.line)
        if kw in ("class", "def"):
            self.next()
            return self.record(kw, tok.line)
        if kw in ("multiclass", "defm", "defset", "defvar", "if", "assert", "dump", "deftype"):
            self.err("TableGen construct %r is not handled by this reader" % kw)
        self.err("unexpected statement")

    def block_or_stmt(self):
        if self.accept("{"):
            body = []
            while not self.accept("}"):
                body.append(self.statement())
            return body
        return [self.statement()]

    def let_item(self):
        name = self.ident()
        rng = None
        if self.peek().text == "{":
            rng = self.bit_ranges()
        self.expect("=")
        return (name, rng, self.value())

    def foreach_range(self):
        if self.peek().text == "[":
            return ("list", self.value()[1])
        a = self.int_lit()
        self.expect("-")
        b = self.int_lit()
        return ("range", a, b)

    def int_lit(self):
        neg = bool(self.accept("-"))
        tok = self.next()
        if tok.kind == "int":
            v = int(tok.text)
        elif tok.kind == "bin":
            v = int(tok.text[2:], 2)
        elif tok.kind == "hex":
            v = int(tok.text[2:], 16)
        else:
            self.i -= 1
            self.err("expected integer")
        return -v if neg else v

    def bit_ranges(self):
        self.expect("{")
        rngs = []
        while True:
            a = self.int_lit()
            if self.accept("-"):
                b = self.int_lit()
            else:
                b = a
            rngs.append((a, b))
            if not self.accept(","):
                break
        self.expect("}")
        return rngs

    def record(self, kw, line):
        name = None
        if self.peek().text not in (":", "{", ";", "<"):
            name = self.name_expr()
        params = []
        if kw == "class" and self.accept("<"):
            while True:
                ty = self.type_()
                pname = self.ident()
                default = None
                if self.accept("="):
                    default = self.value()
                params.append((ty, pname, default))
                if not self.accept(","):
                    break
            self.expect(">")
        parents = []
        if self.accept(":"):
            while True:
                cname = self.ident()
                args = []
                if self.accept("<"):
                    if not self.accept(">"):
                        while True:
                            args.append(self.value())
                            if not self.accept(","):
                                break
                        self.expect(">")
                parents.append((cname, args))
                if not self.accept(","):
                    break
        body = []
        if self.accept("{"):
            while not self.accept("}"):
                body.append(self.body_item())
        else:
            self.expect(";")
        return (kw, name, params, parents, body, line)

    def name_expr(self):
        # A def name may be pasted: `r #i`, `wh #!mul(i,2)`, `instr # _split`.
        left = ("id", self.ident())
        while self.accept("#"):
            right = self.primary()
            left = ("paste", left, right)
        return left

    def type_(self):
        tok = self.next()
        if tok.kind != "ident":
            self.i -= 1
            self.err("expected a type")
        if tok.text in ("bits", "list") and self.accept("<"):
            if tok.text == "bits":
                n = self.int_lit()
                self.expect(">")
                return ("bits", n)
            inner = self.type_()
            self.expect(">")
            return ("list", inner)
        return (tok.text,)

    def body_item(self):
        tok = self.peek()
        if tok.text == "let":
            self.next()
            item = self.let_item()
            self.expect(";")
            return ("let",) + item
        if tok.text == "field":
            self.next()
        if tok.kind != "ident":
            self.err("expected a field")
        ty = self.type_()
        name = self.ident()
        val = None
        if self.accept("="):
            val = self.value()
        self.expect(";")
        return ("field", ty, name, val)

    # values
    def value(self):
        v = self.primary()
        while self.peek().text == "#" and self.peek().kind == "punct":
            self.next()
            v = ("paste", v, self.primary())
        return v

    def primary(self):
        tok = self.next()
        k = tok.kind
        if k == "int":
            v = ("int", int(tok.text))
        elif k == "bin":
            v = ("bits", len(tok.text) - 2, int(tok.text[2:], 2))
        elif k == "hex":
            v = ("int", int(tok.text[2:], 16))
        elif k == "string":
            v = ("str", bytes(tok.text[1:-1], "utf-8").decode("unicode_escape"))
        elif k == "code":
            v = ("code", tok.text[2:-2])
        elif k == "punct" and tok.text == "-":
            n = self.next()
            if n.kind != "int":
                self.err("expected integer after '-'", n)
            v = ("int", -int(n.text))
        elif k == "punct" and tok.text == "?":
            v = ("unset",)
        elif k == "punct" and tok.text == "{":
            items = []
            if not self.accept("}"):
                while True:
                    items.append(self.value())
                    if not self.accept(","):
                        break
                self.expect("}")
            v = ("concat", items)
        elif k == "punct" and tok.text == "[":
            items = []
            if not self.accept("]"):
                while True:
                    items.append(self.value())
                    if not self.accept(","):
                        break
                    if self.peek().text == "]":
                        break  # a trailing comma, as the generated itinerary lists end
                self.expect("]")
            v = ("list", items)
        elif k == "punct" and tok.text == "(":
            op = self.value()
            args = []
            if not self.accept(")"):
                while True:
                    if self.peek().kind == "var":
                        args.append((None, self.next().text[1:]))
                    else:
                        a = self.value()
                        vn = None
                        if self.accept(":"):
                            vt = self.next()
                            if vt.kind != "var":
                                self.err("expected $name", vt)
                            vn = vt.text[1:]
                        args.append((a, vn))
                    if not self.accept(","):
                        break
                self.expect(")")
            v = ("dag", op, args)
        elif k == "bang":
            # Every bang operator is parsed; only !cast, !mul, !add and !sub can be evaluated
            # (evaluate() raises on the others, which only pseudo instructions use).
            op = tok.text[1:]
            ty = None
            if self.accept("<"):
                ty = self.type_()
                self.expect(">")
            self.expect("(")
            args = []
            while True:
                args.append(self.value())
                if not self.accept(","):
                    break
            self.expect(")")
            v = ("bang", op, ty, args)
        elif k == "ident":
            if self.peek().text == "<":
                self.next()
                args = []
                if not self.accept(">"):
                    while True:
                        args.append(self.value())
                        if not self.accept(","):
                            break
                    self.expect(">")
                v = ("inst", tok.text, args)
            else:
                v = ("id", tok.text)
        else:
            self.i -= 1
            self.err("unexpected token in value")
        if self.peek().text == "{" and v[0] in ("id", "bang"):
            v = ("slice", v, self.bit_ranges())
        return v

def parse(text, fname):
    return Parser(tokenize(text, fname), fname).parse_file()


# --------------------------------------------------------------------------- records


class Record:
    def __init__(self, kind, name, params, parents, body, lets, fname, line):
        self.kind, self.name, self.params, self.parents = kind, name, params, parents
        self.body, self.lets, self.fname, self.line = body, lets, fname, line


class Records:
    """Classes and defs of the parsed files, `let` contexts and `foreach` expanded."""

    def __init__(self):
        self.classes, self.defs, self.order = {}, {}, []
        self.includes = []

    def add_file(self, text, fname):
        self._walk(parse(text, fname), [], {}, fname)

    def _walk(self, stmts, lets, env, fname):
        for st in stmts:
            kind = st[0]
            if kind == "include":
                self.includes.append((fname, st[1]))
            elif kind == "let":
                new = [(n, r, substitute(v, env), {}) for (n, r, v) in st[1]]
                self._walk(st[2], lets + new, env, fname)
            elif kind == "foreach":
                var, rng = st[1], st[2]
                if rng[0] == "range":
                    step = 1 if rng[2] >= rng[1] else -1
                    vals = [("int", i) for i in range(rng[1], rng[2] + step, step)]
                else:
                    vals = [substitute(x, env) for x in rng[1]]
                    for x in vals:
                        if x[0] not in ("id", "int", "str", "bits"):
                            raise TGError("%s:%d: foreach over %r is not handled" % (fname, st[4], x))
                for val in vals:
                    e2 = dict(env)
                    e2[var] = val
                    self._walk(st[3], lets, e2, fname)
            elif kind in ("class", "def"):
                _, kw, name, params, parents, body, line = (None,) + st
                if name is None:
                    raise TGError("%s:%d: anonymous records are not handled" % (fname, line))
                nm = evaluate_name(substitute(name, env), {})
                if env:
                    parents = [(c, [substitute(a, env) for a in args]) for c, args in parents]
                    body = [substitute_item(b, env) for b in body]
                rec = Record(kw, nm, params, parents, body, lets, fname, line)
                table = self.classes if kw == "class" else self.defs
                if nm in table:
                    raise TGError("%s:%d: %s %s defined twice" % (fname, line, kw, nm))
                table[nm] = rec
                if kw == "def":
                    self.order.append(nm)
            else:
                raise TGError("%s: unhandled statement %r" % (fname, kind))

    # class chain -----------------------------------------------------------
    def chain(self, rec):
        """All classes a record derives from (depth first, nearest first)."""
        out, seen = [], set()

        def walk(r):
            for cname, _ in r.parents:
                if cname in seen:
                    continue
                seen.add(cname)
                out.append(cname)
                if cname in self.classes:
                    walk(self.classes[cname])

        walk(rec)
        return out

    def fields(self, rec):
        """Resolve a def's fields: returns {name: (value_ast, env)} and {name: type}.

        Later (more derived) assignments win: parents first, then the record's body, then the
        enclosing `let` contexts (which in TableGen override the body)."""
        vals, types, slices = {}, {}, []

        def apply(r, args, env_outer):
            env = {}
            if r.kind == "class":
                for idx, (ty, pname, default) in enumerate(r.params):
                    if idx < len(args):
                        env[pname] = evaluate(args[idx], env_outer)
                    elif default is not None:
                        env[pname] = evaluate(default, env)
                    else:
                        raise TGError("%s:%d: missing template argument %s of %s"
                                      % (r.fname, r.line, pname, r.name))
            for cname, cargs in r.parents:
                if cname not in self.classes:
                    # a class from LLVM's own Target.td (Instruction, Register, Operand, ...)
                    continue
                apply(self.classes[cname], cargs, env)
            for item in r.body:
                if item[0] == "field":
                    _, ty, name, val = item
                    types[name] = ty
                    if val is not None:
                        vals[name] = (val, env)
                else:
                    _, name, rng, val = item
                    if rng is None:
                        vals[name] = (val, env)
                    else:
                        slices.append((name, rng, val, env))
            return env

        apply(rec, [], {})
        for (name, rng, val, lenv) in rec.lets:
            if rng is None:
                vals[name] = (val, lenv)
            else:
                slices.append((name, rng, val, lenv))
        return vals, types, slices


# --------------------------------------------------------------------------- evaluation


def substitute(v, env):
    """Replace foreach variables in a value (used for records created inside foreach)."""
    if not env:
        return v
    k = v[0]
    if k == "id" and v[1] in env:
        return env[v[1]]
    if k in ("concat", "list"):
        return (k, [substitute(x, env) for x in v[1]])
    if k == "slice":
        return ("slice", substitute(v[1], env), v[2])
    if k == "paste":
        return ("paste", substitute(v[1], env), substitute(v[2], env))
    if k == "bang":
        return ("bang", v[1], v[2], [substitute(x, env) for x in v[3]])
    if k == "inst":
        return ("inst", v[1], [substitute(x, env) for x in v[2]])
    if k == "dag":
        return ("dag", substitute(v[1], env), [((substitute(a, env) if a else a), n) for a, n in v[2]])
    return v


def substitute_item(item, env):
    if item[0] == "field":
        _, ty, name, val = item
        return ("field", ty, name, substitute(val, env) if val is not None else None)
    _, name, rng, val = item
    return ("let", name, rng, substitute(val, env))


def evaluate(v, env, fields=None, _depth=0):
    """Evaluate a value to a Python value where it is a constant: int, str, list, or the AST.

    `fields` (a record's {name: (value, env)}) resolves references to the record's own fields,
    as TableGen does once a record is complete."""
    if _depth > 50:
        raise TGError("field references loop")
    k = v[0]
    if k == "id" and v[1] not in env and fields and v[1] in fields:
        fv, fenv = fields[v[1]]
        return evaluate(fv, fenv, fields, _depth + 1)
    if fields is not None:
        return _evaluate(v, env, fields, _depth)
    return _evaluate(v, env, None, _depth)


def _evaluate(v, env, fields, depth):
    def ev(x, e=env):
        return evaluate(x, e, fields, depth + 1)
    k = v[0]
    if k == "int":
        return v[1]
    if k == "bits":
        return v[2]
    if k in ("str", "code"):
        return v[1]
    if k == "id":
        if v[1] in env:
            return env[v[1]]
        if v[1] in ("true", "True"):
            return 1
        if v[1] in ("false", "False"):
            return 0
        return ("ref", v[1])
    if k == "paste":
        a, b = ev(v[1]), ev(v[2])
        return paste_str(a) + paste_str(b)
    if k == "bang":
        args = [ev(a) for a in v[3]]
        if v[1] == "mul":
            return args[0] * args[1]
        if v[1] == "add":
            return sum(args)
        if v[1] == "sub":
            return args[0] - args[1]
        if v[1] == "cast":
            if not isinstance(args[0], str):
                raise TGError("!cast of a non-string %r" % (args[0],))
            return ("ref", args[0])
        raise TGError("bang operator !%s cannot be evaluated by this reader" % v[1])
    if k == "list":
        return [ev(x) for x in v[1]]
    if k == "concat" and len(v[1]) == 1:
        return ev(v[1][0])
    return ("ast", v, env)


def paste_str(x):
    if isinstance(x, str):
        return x
    if isinstance(x, int):
        return str(x)
    if isinstance(x, tuple) and x[0] == "ref":
        return x[1]
    raise TGError("cannot paste %r" % (x,))


def evaluate_name(name_ast, env):
    if name_ast[0] == "id":
        if name_ast[1] in env:
            return paste_str(evaluate(name_ast, env))
        return name_ast[1]
    return paste_str(evaluate(name_ast, env))


def to_value(v, env):
    """Like evaluate, but substitutes environment values that are themselves ASTs."""
    if isinstance(v, tuple) and v and v[0] in ("int", "bits", "str", "code", "id", "paste",
                                                  "bang", "list", "concat", "slice", "dag",
                                                  "inst", "unset"):
        return evaluate(v, env)
    return v
