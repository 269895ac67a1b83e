/// A constant written in the template.
enum JinjaConstant: Sendable {
    case none, bool(Bool), int(Int), double(Double), string(String)
}

/// An expression, as jinja2's parser builds it.
indirect enum JinjaExpr: Sendable {
    case constant(JinjaConstant)
    case name(String)
    case list([JinjaExpr])
    case dict([(JinjaExpr, JinjaExpr)])
    case attribute(JinjaExpr, String)
    case item(JinjaExpr, JinjaExpr)
    case slice(JinjaExpr, JinjaExpr?, JinjaExpr?, JinjaExpr?)
    case call(JinjaExpr, [JinjaExpr], [(String, JinjaExpr)])
    case filter(JinjaExpr, String, [JinjaExpr], [(String, JinjaExpr)])
    case test(JinjaExpr, String, [JinjaExpr], negated: Bool)
    case unary(String, JinjaExpr)
    case binary(String, JinjaExpr, JinjaExpr)
    case and(JinjaExpr, JinjaExpr)
    case or(JinjaExpr, JinjaExpr)
    case not(JinjaExpr)
    case compare(JinjaExpr, [(String, JinjaExpr)])
    case conditional(JinjaExpr, condition: JinjaExpr, otherwise: JinjaExpr?)
}

/// Where a `{% set %}` or `{% for %}` stores its value.
enum JinjaTarget: Sendable {
    case name(String)
    case names([String])
    case attribute(String, String)
}

/// A statement or output of the template body.
indirect enum JinjaNode: Sendable {
    case text(String)
    case output(JinjaExpr)
    case ifChain([(JinjaExpr, [JinjaNode])], otherwise: [JinjaNode])
    case forLoop(JinjaTarget, JinjaExpr, filter: JinjaExpr?, body: [JinjaNode], otherwise: [JinjaNode])
    case set(JinjaTarget, JinjaExpr)
    case setBlock(JinjaTarget, filters: [(String, [JinjaExpr], [(String, JinjaExpr)])], body: [JinjaNode])
    case macro(String, parameters: [(String, JinjaExpr?)], body: [JinjaNode])
    case filterBlock([(String, [JinjaExpr], [(String, JinjaExpr)])], body: [JinjaNode])
    /// transformers' `{% generation %}` (its AssistantTracker extension): the body renders as is.
    case generation([JinjaNode])
    case breakLoop
    case continueLoop
}

/// jinja2's built-in filters and tests: another name fails when the template runs it (jinja2 3 defers the check
/// from compile time to the call, so `{% if x is filter %}` can guard it).
let jinjaFilterNames: Set<String> = [
    "abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e", "escape",
    "filesizeformat", "first", "float", "forceescape", "format", "groupby", "indent", "int", "items", "join",
    "last", "length", "list", "lower", "map", "max", "min", "pprint", "random", "reject", "rejectattr", "replace",
    "reverse", "round", "safe", "select", "selectattr", "slice", "sort", "string", "striptags", "sum", "title",
    "tojson", "trim", "truncate", "unique", "upper", "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr",
]
let jinjaTestNames: Set<String> = [
    "boolean", "callable", "defined", "divisibleby", "eq", "equalto", "escaped", "even", "false", "filter", "float",
    "ge", "gt", "greaterthan", "in", "integer", "iterable", "le", "lessthan", "lower", "lt", "mapping", "ne", "none",
    "number", "odd", "sameas", "sequence", "string", "test", "true", "undefined", "upper", "==", "!=", "<", "<=",
    ">", ">=",
]

struct JinjaParser {
    private var segments: [JinjaSegment]
    private var position = 0
    // The tokens of the tag being parsed.
    private var tokens: [JinjaToken] = []
    private var t = 0
    private var line = 1

    init(segments: [JinjaSegment]) {
        self.segments = segments
    }

    mutating func parseTemplate() throws -> [JinjaNode] {
        let (body, end) = try parseBody(until: [])
        if let end { throw JinjaError.syntax("unexpected '\(end)'", line: line) }
        return body
    }

    private func fail(_ message: String) -> JinjaError { .syntax(message, line: line) }

    /// Nodes up to one of the `until` tags (left in `tokens`, its name returned), or the end of the template.
    private mutating func parseBody(until: Set<String>) throws -> ([JinjaNode], String?) {
        var nodes: [JinjaNode] = []
        while position < segments.count {
            let segment = segments[position]
            position += 1
            switch segment {
            case .text(let text):
                nodes.append(.text(text))
            case .output(let toks, let l):
                begin(toks, l)
                let e = try parseTupleOrExpression()
                try expectEnd()
                nodes.append(.output(e))
            case .statement(let toks, let l):
                begin(toks, l)
                guard case .name(let keyword)? = next() else { throw fail("expected a tag name") }
                if until.contains(keyword) { return (nodes, keyword) }
                nodes.append(try parseStatement(keyword))
            }
        }
        if !until.isEmpty {
            throw fail("unexpected end of template; expected one of: \(until.sorted().joined(separator: ", "))")
        }
        return (nodes, nil)
    }

    private mutating func begin(_ toks: [JinjaToken], _ l: Int) {
        tokens = toks
        t = 0
        line = l
    }

    private mutating func parseStatement(_ keyword: String) throws -> JinjaNode {
        switch keyword {
        case "if":
            var branches: [(JinjaExpr, [JinjaNode])] = []
            var condition = try parseExpression()
            try expectEnd()
            while true {
                let (body, end) = try parseBody(until: ["elif", "else", "endif"])
                branches.append((condition, body))
                if end == "elif" {
                    condition = try parseExpression()
                    try expectEnd()
                    continue
                }
                if end == "else" {
                    try expectEnd()
                    let (otherwise, _) = try parseBody(until: ["endif"])
                    try expectEnd()
                    return .ifChain(branches, otherwise: otherwise)
                }
                try expectEnd()
                return .ifChain(branches, otherwise: [])
            }
        case "for":
            let target = try parseTarget(allowAttribute: false)
            guard case .name("in")? = next() else { throw fail("expected 'in' in a for loop") }
            let iterable = try parseTupleOrExpression(conditional: false)
            var filter: JinjaExpr? = nil
            if case .name("if")? = peek() {
                t += 1
                filter = try parseExpression()
            }
            if case .name("recursive")? = peek() { throw JinjaError.unsupported("recursive for loops") }
            try expectEnd()
            let (body, end) = try parseBody(until: ["else", "endfor"])
            var otherwise: [JinjaNode] = []
            try expectEnd()
            if end == "else" {
                (otherwise, _) = try parseBody(until: ["endfor"])
                try expectEnd()
            }
            return .forLoop(target, iterable, filter: filter, body: body, otherwise: otherwise)
        case "set":
            let target = try parseTarget(allowAttribute: true)
            if case .op("=")? = peek() {
                t += 1
                let value = try parseTupleOrExpression()
                try expectEnd()
                return .set(target, value)
            }
            var filters: [(String, [JinjaExpr], [(String, JinjaExpr)])] = []
            while case .op("|")? = peek() {
                t += 1
                filters.append(try parseFilterCall())
            }
            try expectEnd()
            let (body, _) = try parseBody(until: ["endset"])
            try expectEnd()
            return .setBlock(target, filters: filters, body: body)
        case "macro":
            guard case .name(let name)? = next() else { throw fail("expected a macro name") }
            try expect(.op("("))
            var parameters: [(String, JinjaExpr?)] = []
            while peek() != .op(")") {
                if !parameters.isEmpty { try expect(.op(",")) }
                if peek() == .op(")") { break }
                guard case .name(let p)? = next() else { throw fail("expected a parameter name") }
                var value: JinjaExpr? = nil
                if peek() == .op("=") {
                    t += 1
                    value = try parseExpression()
                } else if parameters.contains(where: { $0.1 != nil }) {
                    throw fail("non-default argument follows default argument")
                }
                parameters.append((p, value))
            }
            t += 1
            try expectEnd()
            let (body, _) = try parseBody(until: ["endmacro"])
            if case .name? = peek() { t += 1 }
            try expectEnd()
            return .macro(name, parameters: parameters, body: body)
        case "filter":
            var filters = [try parseFilterCall()]
            while case .op("|")? = peek() {
                t += 1
                filters.append(try parseFilterCall())
            }
            try expectEnd()
            let (body, _) = try parseBody(until: ["endfilter"])
            try expectEnd()
            return .filterBlock(filters, body: body)
        case "generation":
            try expectEnd()
            let (body, _) = try parseBody(until: ["endgeneration"])
            try expectEnd()
            return .generation(body)
        case "break":
            try expectEnd()
            return .breakLoop
        case "continue":
            try expectEnd()
            return .continueLoop
        default:
            throw fail("Encountered unknown tag '\(keyword)'")
        }
    }

    private mutating func parseTarget(allowAttribute: Bool) throws -> JinjaTarget {
        guard case .name(let first)? = next() else { throw fail("expected a name to assign to") }
        if allowAttribute, peek() == .op(".") {
            t += 1
            guard case .name(let attribute)? = next() else { throw fail("expected an attribute name") }
            return .attribute(first, attribute)
        }
        var names = [first]
        while peek() == .op(",") {
            t += 1
            guard case .name(let n)? = next() else { break }
            names.append(n)
        }
        return names.count == 1 ? .name(first) : .names(names)
    }

    // MARK: Tokens

    private func peek(_ offset: Int = 0) -> JinjaToken? {
        t + offset < tokens.count ? tokens[t + offset] : nil
    }

    private mutating func next() -> JinjaToken? {
        defer { t += 1 }
        return peek()
    }

    private mutating func expect(_ token: JinjaToken) throws {
        guard next() == token else { throw fail("expected \(token)") }
    }

    private mutating func expectEnd() throws {
        guard t >= tokens.count else { throw fail("expected the end of the tag, got \(tokens[t])") }
    }

    // MARK: Expressions (jinja2's precedence: or, and, not, compare, + -, ~, * / // %, **, unary, postfix, filters)

    /// An expression, or `a, b` as a tuple (a list value).
    private mutating func parseTupleOrExpression(conditional: Bool = true) throws -> JinjaExpr {
        let first = conditional ? try parseExpression() : try parseOr()
        guard peek() == .op(",") else { return first }
        var items = [first]
        while peek() == .op(",") {
            t += 1
            if peek() == nil { break }
            items.append(conditional ? try parseExpression() : try parseOr())
        }
        return .list(items)
    }

    mutating func parseExpression() throws -> JinjaExpr {
        var e = try parseOr()
        while case .name("if")? = peek() {
            t += 1
            let condition = try parseOr()
            var otherwise: JinjaExpr? = nil
            if case .name("else")? = peek() {
                t += 1
                otherwise = try parseExpression()
            }
            e = .conditional(e, condition: condition, otherwise: otherwise)
        }
        return e
    }

    private mutating func parseOr() throws -> JinjaExpr {
        var e = try parseAnd()
        while case .name("or")? = peek() {
            t += 1
            e = .or(e, try parseAnd())
        }
        return e
    }

    private mutating func parseAnd() throws -> JinjaExpr {
        var e = try parseNot()
        while case .name("and")? = peek() {
            t += 1
            e = .and(e, try parseNot())
        }
        return e
    }

    private mutating func parseNot() throws -> JinjaExpr {
        if case .name("not")? = peek() {
            t += 1
            return .not(try parseNot())
        }
        return try parseCompare()
    }

    private mutating func parseCompare() throws -> JinjaExpr {
        let e = try parseMath1()
        var ops: [(String, JinjaExpr)] = []
        while true {
            if case .op(let o)? = peek(), ["==", "!=", "<", "<=", ">", ">="].contains(o) {
                t += 1
                ops.append((o, try parseMath1()))
            } else if case .name("in")? = peek() {
                t += 1
                ops.append(("in", try parseMath1()))
            } else if case .name("not")? = peek(), case .name("in")? = peek(1) {
                t += 2
                ops.append(("not in", try parseMath1()))
            } else {
                break
            }
        }
        return ops.isEmpty ? e : .compare(e, ops)
    }

    private mutating func parseMath1() throws -> JinjaExpr {
        var e = try parseConcat()
        while case .op(let o)? = peek(), o == "+" || o == "-" {
            t += 1
            e = .binary(o, e, try parseConcat())
        }
        return e
    }

    private mutating func parseConcat() throws -> JinjaExpr {
        var e = try parseMath2()
        while peek() == .op("~") {
            t += 1
            e = .binary("~", e, try parseMath2())
        }
        return e
    }

    private mutating func parseMath2() throws -> JinjaExpr {
        var e = try parsePow()
        while case .op(let o)? = peek(), ["*", "/", "//", "%"].contains(o) {
            t += 1
            e = .binary(o, e, try parsePow())
        }
        return e
    }

    private mutating func parsePow() throws -> JinjaExpr {
        var e = try parseUnary(withFilter: true)
        while peek() == .op("**") {
            t += 1
            e = .binary("**", e, try parseUnary(withFilter: true))
        }
        return e
    }

    private mutating func parseUnary(withFilter: Bool) throws -> JinjaExpr {
        var e: JinjaExpr
        if case .op(let o)? = peek(), o == "-" || o == "+" {
            t += 1
            e = .unary(o, try parseUnary(withFilter: false))
        } else {
            e = try parsePrimary()
        }
        e = try parsePostfix(e)
        if withFilter { e = try parseFilters(e) }
        return e
    }

    private mutating func parsePrimary() throws -> JinjaExpr {
        guard let token = next() else { throw fail("unexpected end of expression") }
        switch token {
        case .name(let n):
            switch n {
            case "true", "True": return .constant(.bool(true))
            case "false", "False": return .constant(.bool(false))
            case "none", "None": return .constant(.none)
            default: return .name(n)
            }
        case .string(var s):
            while case .string(let more)? = peek() {
                s += more
                t += 1
            }
            return .constant(.string(s))
        case .int(let i): return .constant(.int(i))
        case .double(let d): return .constant(.double(d))
        case .op("("):
            if peek() == .op(")") {
                t += 1
                return .list([])
            }
            let e = try parseTupleOrExpression()
            try expect(.op(")"))
            return e
        case .op("["):
            var items: [JinjaExpr] = []
            while peek() != .op("]") {
                if !items.isEmpty { try expect(.op(",")) }
                if peek() == .op("]") { break }
                items.append(try parseExpression())
            }
            t += 1
            return .list(items)
        case .op("{"):
            var pairs: [(JinjaExpr, JinjaExpr)] = []
            while peek() != .op("}") {
                if !pairs.isEmpty { try expect(.op(",")) }
                if peek() == .op("}") { break }
                let key = try parseExpression()
                try expect(.op(":"))
                pairs.append((key, try parseExpression()))
            }
            t += 1
            return .dict(pairs)
        default:
            throw fail("unexpected \(token)")
        }
    }

    private mutating func parsePostfix(_ base: JinjaExpr) throws -> JinjaExpr {
        var e = base
        while true {
            switch peek() {
            case .op(".")?:
                t += 1
                switch next() {
                case .name(let n)?: e = .attribute(e, n)
                case .int(let i)?: e = .item(e, .constant(.int(i)))
                default: throw fail("expected an attribute name after '.'")
                }
            case .op("[")?:
                t += 1
                e = try parseSubscript(e)
            case .op("(")?:
                t += 1
                let (args, kwargs) = try parseArguments()
                e = .call(e, args, kwargs)
            default:
                return e
            }
        }
    }

    private mutating func parseSubscript(_ base: JinjaExpr) throws -> JinjaExpr {
        var parts: [JinjaExpr?] = [nil]
        var isSlice = false
        while peek() != .op("]") {
            if peek() == .op(":") {
                t += 1
                isSlice = true
                parts.append(nil)
                continue
            }
            guard peek() != nil else { throw fail("missing ']'") }
            parts[parts.count - 1] = try parseExpression()
        }
        t += 1
        if !isSlice {
            guard let index = parts[0] else { throw fail("empty subscript") }
            return .item(base, index)
        }
        guard parts.count <= 3 else { throw fail("too many ':' in a slice") }
        while parts.count < 3 { parts.append(nil) }
        return .slice(base, parts[0], parts[1], parts[2])
    }

    /// `(a, b, key=value)` after the opening parenthesis.
    private mutating func parseArguments() throws -> ([JinjaExpr], [(String, JinjaExpr)]) {
        var args: [JinjaExpr] = []
        var kwargs: [(String, JinjaExpr)] = []
        while peek() != .op(")") {
            if !args.isEmpty || !kwargs.isEmpty { try expect(.op(",")) }
            if peek() == .op(")") { break }
            guard peek() != nil else { throw fail("missing ')'") }
            if case .name(let key)? = peek(), peek(1) == .op("=") {
                t += 2
                kwargs.append((key, try parseExpression()))
            } else {
                if !kwargs.isEmpty { throw fail("positional argument follows keyword argument") }
                args.append(try parseExpression())
            }
        }
        t += 1
        return (args, kwargs)
    }

    private mutating func parseFilterCall() throws -> (String, [JinjaExpr], [(String, JinjaExpr)]) {
        guard case .name(var name)? = next() else { throw fail("expected a filter name") }
        while peek() == .op("."), case .name(let more)? = peek(1) {
            t += 2
            name += "." + more
        }
        var args: [JinjaExpr] = []
        var kwargs: [(String, JinjaExpr)] = []
        if peek() == .op("(") {
            t += 1
            (args, kwargs) = try parseArguments()
        }
        return (name, args, kwargs)
    }

    private mutating func parseFilters(_ base: JinjaExpr) throws -> JinjaExpr {
        var e = base
        while true {
            if peek() == .op("|") {
                t += 1
                let (name, args, kwargs) = try parseFilterCall()
                e = .filter(e, name, args, kwargs)
            } else if case .name("is")? = peek() {
                t += 1
                var negated = false
                if case .name("not")? = peek() {
                    t += 1
                    negated = true
                }
                guard let token = next() else { throw fail("expected a test name") }
                guard case .name(var name) = token else { throw fail("expected a test name") }
                while peek() == .op("."), case .name(let more)? = peek(1) {
                    t += 2
                    name += "." + more
                }
                var args: [JinjaExpr] = []
                if peek() == .op("(") {
                    t += 1
                    let (a, _) = try parseArguments()
                    args = a
                } else if let p = peek(), startsArgument(p) {
                    args = [try parsePostfix(try parsePrimary())]
                }
                e = .test(e, name, args, negated: negated)
            } else if peek() == .op("(") {
                t += 1
                let (args, kwargs) = try parseArguments()
                e = .call(e, args, kwargs)
            } else {
                return e
            }
        }
    }

    /// Whether a token after `is name` starts the test's one argument (jinja2's rule: a name, number, string or
    /// bracket, but not `else`, `or`, `and`; `is` there is an error).
    private func startsArgument(_ token: JinjaToken) -> Bool {
        switch token {
        case .name(let n): return !["else", "or", "and"].contains(n)
        case .string, .int, .double: return true
        case .op(let o): return o == "[" || o == "{"
        }
    }
}
