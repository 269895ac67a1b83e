import Foundation

/// A parsed Jinja template, rendered as transformers' `apply_chat_template` renders chat templates with jinja2:
/// `trim_blocks` and `lstrip_blocks` on, jinja2's default `Undefined`, the immutable sandbox (no `list.append`),
/// `loopcontrols` (`break`, `continue`), and the globals `raise_exception(message)` and `strftime_now(format)`;
/// `tojson` is transformers' (`json.dumps` with `ensure_ascii=False`).
public struct JinjaTemplate: Sendable {
    let nodes: [JinjaNode]

    /// Parses `source`; throws `JinjaError.syntax` (with the line) where jinja2 would fail to compile it.
    public init(_ source: String) throws {
        var lexer = JinjaLexer(source)
        var parser = JinjaParser(segments: try lexer.segments())
        nodes = try parser.parseTemplate()
    }

    /// The text for `context` (its top-level names: `messages`, `tools`, `bos_token`, `add_generation_prompt`, …);
    /// `now` is what `strftime_now` formats, in the local time zone.
    public func render(_ context: [String: JinjaValue], now: Date = Date()) throws -> String {
        let renderer = JinjaRenderer(now: now)
        let root = JinjaScope(parent: nil)
        root.variables = context
        renderer.root = root
        _ = try renderer.execute(nodes, root)
        return renderer.output
    }
}

/// Variables of one frame: the template's top level, a loop iteration or a macro call.
final class JinjaScope {
    var variables: [String: JinjaValue] = [:]
    let parent: JinjaScope?

    init(parent: JinjaScope?) {
        self.parent = parent
    }

    func lookup(_ name: String) -> JinjaValue? {
        var scope: JinjaScope? = self
        while let s = scope {
            if let v = s.variables[name] { return v }
            scope = s.parent
        }
        return nil
    }
}

private enum JinjaFlow {
    case normal, breakLoop, continueLoop
}

final class JinjaRenderer {
    var output = ""
    var root = JinjaScope(parent: nil)
    let now: Date
    private var depth = 0

    init(now: Date) {
        self.now = now
    }

    // MARK: Statements

    fileprivate func execute(_ nodes: [JinjaNode], _ scope: JinjaScope) throws -> JinjaFlow {
        for node in nodes {
            let flow = try execute(node, scope)
            if flow != .normal { return flow }
        }
        return .normal
    }

    private func execute(_ node: JinjaNode, _ scope: JinjaScope) throws -> JinjaFlow {
        switch node {
        case .text(let text):
            output += text
        case .output(let e):
            output += try evaluate(e, scope).pythonString
        case .ifChain(let branches, let otherwise):
            for (condition, body) in branches where try evaluate(condition, scope).truthy {
                return try execute(body, scope)
            }
            return try execute(otherwise, scope)
        case .forLoop(let target, let iterable, let filter, let body, let otherwise):
            return try runLoop(target, iterable, filter, body, otherwise, scope)
        case .set(let target, let e):
            try assign(target, try evaluate(e, scope), scope)
        case .setBlock(let target, let filters, let body):
            var value = JinjaValue.string(try capture { _ = try execute(body, scope) })
            for (name, args, kwargs) in filters { value = try applyFilter(name, value, args, kwargs, scope) }
            try assign(target, value, scope)
        case .macro(let name, let parameters, let body):
            scope.variables[name] = .function(macro(name, parameters, body))
        case .filterBlock(let filters, let body):
            var value = JinjaValue.string(try capture { _ = try execute(body, scope) })
            for (name, args, kwargs) in filters { value = try applyFilter(name, value, args, kwargs, scope) }
            output += value.pythonString
        case .generation(let body):
            return try execute(body, scope)
        case .breakLoop:
            return .breakLoop
        case .continueLoop:
            return .continueLoop
        }
        return .normal
    }

    private func capture(_ body: () throws -> Void) throws -> String {
        let saved = output
        output = ""
        defer { output = saved }
        try body()
        return output
    }

    private func assign(_ target: JinjaTarget, _ value: JinjaValue, _ scope: JinjaScope) throws {
        switch target {
        case .name(let n):
            scope.variables[n] = value
        case .names(let names):
            let items = try unpack(value, count: names.count)
            for (n, v) in zip(names, items) { scope.variables[n] = v }
        case .attribute(let n, let attribute):
            guard case .namespace(let ns)? = scope.lookup(n) else {
                throw JinjaError.type("cannot assign attribute on non-namespace object '\(n)'")
            }
            ns.attributes[attribute] = value
        }
    }

    private func unpack(_ value: JinjaValue, count: Int) throws -> [JinjaValue] {
        let items = try iterate(value)
        guard items.count == count else {
            throw JinjaError.type("cannot unpack \(items.count) values into \(count) names")
        }
        return items
    }

    private func runLoop(
        _ target: JinjaTarget, _ iterable: JinjaExpr, _ filter: JinjaExpr?, _ body: [JinjaNode],
        _ otherwise: [JinjaNode], _ scope: JinjaScope
    ) throws -> JinjaFlow {
        var items = try iterate(try evaluate(iterable, scope))
        if let filter {
            items = try items.filter { item in
                let s = JinjaScope(parent: scope)
                try assign(target, item, s)
                return try evaluate(filter, s).truthy
            }
        }
        if items.isEmpty { return try execute(otherwise, scope) }
        let n = items.count
        for (index, item) in items.enumerated() {
            let s = JinjaScope(parent: scope)
            try assign(target, item, s)
            var loop = JinjaObject()
            loop["index"] = .int(index + 1)
            loop["index0"] = .int(index)
            loop["revindex"] = .int(n - index)
            loop["revindex0"] = .int(n - index - 1)
            loop["first"] = .bool(index == 0)
            loop["last"] = .bool(index == n - 1)
            loop["length"] = .int(n)
            loop["previtem"] = index > 0 ? items[index - 1] : .undefined(hint: "there is no previous item")
            loop["nextitem"] = index < n - 1 ? items[index + 1] : .undefined(hint: "there is no next item")
            // depth counts recursive loops only (not supported), so a nested loop is depth 1 too, as in jinja2.
            loop["depth"] = .int(1)
            loop["depth0"] = .int(0)
            loop["cycle"] = .function(
                JinjaFunction(name: "loop.cycle") { args, _ in
                    guard !args.isEmpty else { throw JinjaError.type("no items for cycling given") }
                    return args[index % args.count]
                })
            s.variables["loop"] = .object(loop)
            if try execute(body, s) == .breakLoop { break }
        }
        return .normal
    }

    private func macro(_ name: String, _ parameters: [(String, JinjaExpr?)], _ body: [JinjaNode]) -> JinjaFunction {
        JinjaFunction(name: name) { [unowned self] args, kwargs in
            guard args.count <= parameters.count else {
                throw JinjaError.type("macro '\(name)' takes not more than \(parameters.count) argument(s)")
            }
            self.depth += 1
            defer { self.depth -= 1 }
            guard self.depth < 200 else { throw JinjaError.type("macro '\(name)' recursed too deeply") }
            let s = JinjaScope(parent: self.root)
            var given = Set<String>()
            for (i, value) in args.enumerated() {
                s.variables[parameters[i].0] = value
                given.insert(parameters[i].0)
            }
            for (key, value) in kwargs {
                guard parameters.contains(where: { $0.0 == key }) else {
                    throw JinjaError.type("macro '\(name)' takes no keyword argument '\(key)'")
                }
                s.variables[key] = value
                given.insert(key)
            }
            for (p, defaultValue) in parameters where !given.contains(p) {
                s.variables[p] =
                    try defaultValue.map { try self.evaluate($0, s) }
                    ?? .undefined(hint: "parameter '\(p)' was not provided")
            }
            return .string(try self.capture { _ = try self.execute(body, s) })
        }
    }

    // MARK: Expressions

    func evaluate(_ e: JinjaExpr, _ scope: JinjaScope) throws -> JinjaValue {
        switch e {
        case .constant(let c):
            switch c {
            case .none: return .none
            case .bool(let b): return .bool(b)
            case .int(let i): return .int(i)
            case .double(let d): return .double(d)
            case .string(let s): return .string(s)
            }
        case .name(let n):
            return scope.lookup(n) ?? global(n) ?? .undefined(hint: "'\(n)' is undefined")
        case .list(let items):
            return .array(try items.map { try evaluate($0, scope) })
        case .dict(let pairs):
            var object = JinjaObject()
            for (k, v) in pairs {
                let key = try evaluate(k, scope)
                guard let jk = JinjaKey(key) else { throw JinjaError.unsupported("dict keys of type \(key.typeName)") }
                object[jk] = try evaluate(v, scope)
            }
            return .object(object)
        case .attribute(let base, let name):
            return try attribute(try evaluate(base, scope), name)
        case .item(let base, let index):
            return try item(try evaluate(base, scope), try evaluate(index, scope))
        case .slice(let base, let start, let stop, let step):
            return try slice(
                try evaluate(base, scope), try start.map { try evaluate($0, scope) },
                try stop.map { try evaluate($0, scope) }, try step.map { try evaluate($0, scope) })
        case .call(let callee, let args, let kwargs):
            let f = try evaluate(callee, scope)
            let a = try args.map { try evaluate($0, scope) }
            let k = try kwargs.map { ($0.0, try evaluate($0.1, scope)) }
            return try call(f, a, k)
        case .filter(let base, let name, let args, let kwargs):
            return try applyFilter(name, try evaluate(base, scope), args, kwargs, scope)
        case .test(let base, let name, let args, let negated):
            let value = try evaluate(base, scope)
            let result = try test(name, value, try args.map { try evaluate($0, scope) })
            return .bool(result != negated)
        case .unary(let op, let operand):
            let v = try evaluate(operand, scope)
            switch (op, v) {
            case ("-", .int(let i)): return .int(-i)
            case ("-", .double(let d)): return .double(-d)
            case ("-", .bool(let b)): return .int(b ? -1 : 0)
            case ("+", .int), ("+", .double): return v
            case ("+", .bool(let b)): return .int(b ? 1 : 0)
            default: throw typeError("bad operand type for unary \(op): '\(v.typeName)'", v)
            }
        case .binary(let op, let l, let r):
            var lv = try evaluate(l, scope)
            var rv = try evaluate(r, scope)
            // Markup (`x|safe`) + str escapes the str, as markupsafe does.
            if op == "+", case .string(let ls) = lv, case .string(let rs) = rv {
                if isMarkup(l) && !isMarkup(r) { rv = .string(htmlEscape(rs)) }
                if isMarkup(r) && !isMarkup(l) { lv = .string(htmlEscape(ls)) }
            }
            return try binary(op, lv, rv)
        case .and(let l, let r):
            let lv = try evaluate(l, scope)
            return lv.truthy ? try evaluate(r, scope) : lv
        case .or(let l, let r):
            let lv = try evaluate(l, scope)
            return lv.truthy ? lv : try evaluate(r, scope)
        case .not(let operand):
            return .bool(!(try evaluate(operand, scope).truthy))
        case .compare(let first, let ops):
            var left = try evaluate(first, scope)
            for (op, rightExpr) in ops {
                let right = try evaluate(rightExpr, scope)
                guard try compare(op, left, right) else { return .bool(false) }
                left = right
            }
            return .bool(true)
        case .conditional(let value, let condition, let otherwise):
            if try evaluate(condition, scope).truthy { return try evaluate(value, scope) }
            return try otherwise.map { try evaluate($0, scope) } ?? .undefined(hint: "the conditional had no else")
        }
    }

    /// Whether `e` makes a markupsafe `Markup` string in jinja2 (`|safe`, `|escape`, or `+` with one), seen from the
    /// expression (a Markup stored in a variable first is not tracked).
    private func isMarkup(_ e: JinjaExpr) -> Bool {
        switch e {
        case .filter(_, let name, _, _): return ["safe", "e", "escape", "forceescape"].contains(name)
        case .binary("+", let l, let r): return isMarkup(l) || isMarkup(r)
        default: return false
        }
    }

    /// An error for an operation on `value`; an undefined operand raises jinja2's `UndefinedError` instead.
    func typeError(_ message: String, _ values: JinjaValue...) -> JinjaError {
        for v in values {
            if case .undefined(let hint) = v { return .undefined(hint) }
        }
        return .type(message)
    }

    private func global(_ name: String) -> JinjaValue? {
        switch name {
        case "range":
            return .function(
                JinjaFunction(name: "range") { args, _ in
                    let ints = try args.map { a -> Int in
                        guard let i = a.asInt else { throw self.typeError("range() needs integers", a) }
                        return i
                    }
                    let (start, stop, step): (Int, Int, Int)
                    switch ints.count {
                    case 1: (start, stop, step) = (0, ints[0], 1)
                    case 2: (start, stop, step) = (ints[0], ints[1], 1)
                    case 3: (start, stop, step) = (ints[0], ints[1], ints[2])
                    default: throw JinjaError.type("range expected 1 to 3 arguments, got \(ints.count)")
                    }
                    guard step != 0 else { throw JinjaError.type("range() arg 3 must not be zero") }
                    let values = Array(stride(from: start, to: stop, by: step))
                    guard values.count <= 100_000 else {
                        throw JinjaError.security("range too big (the sandbox allows 100000 items)")
                    }
                    return .array(values.map { .int($0) })
                })
        case "namespace":
            return .function(
                JinjaFunction(name: "namespace") { args, kwargs in
                    var attributes = JinjaObject()
                    for a in args {
                        guard case .object(let o) = a else { throw JinjaError.type("namespace() takes a dict") }
                        for (k, v) in o.pairs { attributes[k] = v }
                    }
                    for (k, v) in kwargs { attributes[k] = v }
                    return .namespace(JinjaNamespace(attributes))
                })
        case "dict":
            return .function(
                JinjaFunction(name: "dict") { args, kwargs in
                    var object = JinjaObject()
                    for a in args {
                        guard case .object(let o) = a else { throw JinjaError.unsupported("dict() of \(a.typeName)") }
                        for (k, v) in o.pairs { object[k] = v }
                    }
                    for (k, v) in kwargs { object[k] = v }
                    return .object(object)
                })
        case "raise_exception":
            return .function(
                JinjaFunction(name: "raise_exception") { args, _ in
                    throw JinjaError.raised(args.first?.pythonString ?? "")
                })
        case "strftime_now":
            return .function(
                JinjaFunction(name: "strftime_now") { args, _ in
                    guard case .string(let format)? = args.first else {
                        throw JinjaError.type("strftime_now() takes a format string")
                    }
                    return .string(strftime(format, self.now))
                })
        default:
            return nil
        }
    }

    func call(_ f: JinjaValue, _ args: [JinjaValue], _ kwargs: [(String, JinjaValue)]) throws -> JinjaValue {
        switch f {
        case .function(let fn): return try fn.call(args, kwargs)
        case .undefined(let hint): throw JinjaError.undefined(hint)
        default: throw JinjaError.type("'\(f.typeName)' object is not callable")
        }
    }

    // MARK: Attribute and item access (jinja2's sandboxed getattr and getitem)

    func attribute(_ value: JinjaValue, _ name: String) throws -> JinjaValue {
        if case .undefined(let hint) = value { throw JinjaError.undefined(hint) }
        if name.hasPrefix("_") { return .undefined(hint: "access to attribute '\(name)' is unsafe") }
        if let method = try method(value, name) { return method }
        switch value {
        case .object(let o): return o[name] ?? .undefined(hint: "dict object has no attribute '\(name)'")
        case .namespace(let ns): return ns.attributes[name] ?? .undefined(hint: "namespace has no attribute '\(name)'")
        default: return .undefined(hint: "'\(value.typeName)' object has no attribute '\(name)'")
        }
    }

    func item(_ value: JinjaValue, _ key: JinjaValue) throws -> JinjaValue {
        if case .undefined(let hint) = value { throw JinjaError.undefined(hint) }
        switch (value, key) {
        case (.object(let o), _):
            if let k = JinjaKey(key), let v = o[k] { return v }
        case (.array(let a), _):
            if let i = key.asIndex {
                let j = i < 0 ? a.count + i : i
                if j >= 0 && j < a.count { return a[j] }
                return .undefined(hint: "list index out of range")
            }
        case (.string(let s), _):
            if let i = key.asIndex {
                let scalars = Array(s.unicodeScalars)
                let j = i < 0 ? scalars.count + i : i
                if j >= 0 && j < scalars.count { return .string(String(scalars[j])) }
                return .undefined(hint: "string index out of range")
            }
        case (.namespace(let ns), .string(let k)):
            if let v = ns.attributes[k] { return v }
        default:
            break
        }
        if case .string(let k) = key { return try attribute(value, k) }
        return .undefined(hint: "no item \(key.pythonRepr) in \(value.typeName)")
    }

    private func slice(_ value: JinjaValue, _ start: JinjaValue?, _ stop: JinjaValue?, _ step: JinjaValue?) throws
        -> JinjaValue
    {
        if case .undefined(let hint) = value { throw JinjaError.undefined(hint) }
        func bound(_ v: JinjaValue?) throws -> Int? {
            guard let v, !(v.isNone) else { return nil }
            guard let i = v.asIndex else { throw JinjaError.type("slice indices must be integers or None") }
            return i
        }
        let indices = try pythonSliceIndices(
            count: value.sliceCount ?? 0, start: bound(start), stop: bound(stop), step: bound(step) ?? 1)
        switch value {
        case .array(let a): return .array(indices.map { a[$0] })
        case .string(let s):
            let scalars = Array(s.unicodeScalars)
            return .string(String(String.UnicodeScalarView(indices.map { scalars[$0] })))
        default: throw JinjaError.type("'\(value.typeName)' object is not subscriptable")
        }
    }

    // MARK: Operators

    func binary(_ op: String, _ l: JinjaValue, _ r: JinjaValue) throws -> JinjaValue {
        if op == "~" { return .string(l.pythonString + r.pythonString) }
        switch (op, l, r) {
        case ("+", .string(let a), .string(let b)): return .string(a + b)
        case ("+", .array(let a), .array(let b)): return .array(a + b)
        case ("*", .string(let s), _), ("*", _, .string(let s)):
            guard let n = (l.isString ? r : l).asStrictInt else { break }
            return .string(String(repeating: s, count: max(0, n)))
        case ("*", .array(let a), _), ("*", _, .array(let a)):
            guard let n = (l.isArray ? r : l).asStrictInt else { break }
            return .array(Array(repeating: a, count: max(0, n)).flatMap { $0 })
        case ("%", .string(let format), _):
            return .string(try percentFormat(format, r))
        default:
            break
        }
        if let a = l.asStrictInt, let b = r.asStrictInt {
            switch op {
            case "+": return .int(a &+ b)
            case "-": return .int(a &- b)
            case "*": return .int(a &* b)
            case "/":
                guard b != 0 else { throw JinjaError.type("division by zero") }
                return .double(Double(a) / Double(b))
            case "//":
                guard b != 0 else { throw JinjaError.type("integer division or modulo by zero") }
                let q = a / b
                return .int((a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q)
            case "%":
                guard b != 0 else { throw JinjaError.type("integer division or modulo by zero") }
                let m = a % b
                return .int(m != 0 && (m < 0) != (b < 0) ? m + b : m)
            case "**":
                if b >= 0 {
                    var result = 1
                    for _ in 0..<min(b, 64) { result = result &* a }
                    return .int(result)
                }
                return .double(pow(Double(a), Double(b)))
            default: break
            }
        }
        if let a = l.asNumber, let b = r.asNumber {
            switch op {
            case "+": return .double(a + b)
            case "-": return .double(a - b)
            case "*": return .double(a * b)
            case "/":
                guard b != 0 else { throw JinjaError.type("float division by zero") }
                return .double(a / b)
            case "//":
                guard b != 0 else { throw JinjaError.type("float floor division by zero") }
                return .double((a / b).rounded(.down))
            case "%":
                guard b != 0 else { throw JinjaError.type("float modulo") }
                let m = a.truncatingRemainder(dividingBy: b)
                return .double(m != 0 && (m < 0) != (b < 0) ? m + b : m)
            case "**": return .double(pow(a, b))
            default: break
            }
        }
        throw typeError("unsupported operand type(s) for \(op): '\(l.typeName)' and '\(r.typeName)'", l, r)
    }

    func compare(_ op: String, _ l: JinjaValue, _ r: JinjaValue) throws -> Bool {
        switch op {
        case "==": return pythonEqual(l, r)
        case "!=": return !pythonEqual(l, r)
        case "in": return try contains(r, l)
        case "not in": return !(try contains(r, l))
        default:
            let order = try pythonOrder(l, r)
            switch op {
            case "<": return order < 0
            case "<=": return order <= 0
            case ">": return order > 0
            default: return order >= 0
            }
        }
    }

    func contains(_ container: JinjaValue, _ element: JinjaValue) throws -> Bool {
        switch container {
        case .string(let s):
            guard case .string(let e) = element else {
                throw typeError("'in <string>' requires string as left operand, not \(element.typeName)", element)
            }
            return e.isEmpty || s.contains(e)
        case .array(let a): return a.contains { pythonEqual($0, element) }
        case .object(let o):
            return JinjaKey(element).map { o[$0] != nil } ?? false
        case .iterator(let a): return a.contains { pythonEqual($0, element) }
        case .undefined: return false
        default: throw typeError("argument of type '\(container.typeName)' is not iterable", container)
        }
    }

    /// Python's iteration: a list's items, a dict's keys, a string's characters; Undefined is empty.
    func iterate(_ value: JinjaValue) throws -> [JinjaValue] {
        switch value {
        case .array(let a), .iterator(let a): return a
        case .object(let o): return o.keys.map(\.value)
        case .string(let s): return s.unicodeScalars.map { .string(String($0)) }
        case .undefined: return []
        default: throw JinjaError.type("'\(value.typeName)' object is not iterable")
        }
    }
}

// MARK: Python semantics of values

extension JinjaValue {
    var isNone: Bool {
        if case .none = self { return true }
        return false
    }

    var isString: Bool {
        if case .string = self { return true }
        return false
    }

    var isArray: Bool {
        if case .array = self { return true }
        return false
    }

    /// An int or a bool (Python's bool is an int).
    var asStrictInt: Int? {
        switch self {
        case .int(let i): return i
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    var asIndex: Int? { asStrictInt }

    /// An int for `range()` and similar arguments.
    var asInt: Int? { asStrictInt }

    var asNumber: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    var sliceCount: Int? {
        switch self {
        case .array(let a): return a.count
        case .string(let s): return s.unicodeScalars.count
        default: return nil
        }
    }
}

func pythonEqual(_ l: JinjaValue, _ r: JinjaValue) -> Bool {
    switch (l, r) {
    case (.undefined, .undefined), (.none, .none): return true
    case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
    case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { pythonEqual($0, $1) }
    case (.object(let a), .object(let b)):
        return a.count == b.count && a.pairs.allSatisfy { k, v in b[k].map { pythonEqual(v, $0) } ?? false }
    case (.namespace(let a), .namespace(let b)): return a === b
    default:
        if let a = l.asNumber, let b = r.asNumber { return a == b }
        return false
    }
}

/// -1, 0 or 1 as Python's `<` orders the two values; values Python cannot order raise.
func pythonOrder(_ l: JinjaValue, _ r: JinjaValue) throws -> Int {
    switch (l, r) {
    case (.string(let a), .string(let b)):
        if a.unicodeScalars.elementsEqual(b.unicodeScalars) { return 0 }
        return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? -1 : 1
    case (.array(let a), .array(let b)):
        for (x, y) in zip(a, b) where !pythonEqual(x, y) { return try pythonOrder(x, y) }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    default:
        if let a = l.asNumber, let b = r.asNumber { return a == b ? 0 : (a < b ? -1 : 1) }
        for v in [l, r] {
            if case .undefined(let hint) = v { throw JinjaError.undefined(hint) }
        }
        throw JinjaError.type("'<' not supported between instances of '\(l.typeName)' and '\(r.typeName)'")
    }
}

/// The indices `sequence[start:stop:step]` selects, as Python computes them.
func pythonSliceIndices(count: Int, start: Int?, stop: Int?, step: Int) throws -> [Int] {
    guard step != 0 else { throw JinjaError.type("slice step cannot be zero") }
    func clamp(_ v: Int?, _ defaultValue: Int, low: Int, high: Int) -> Int {
        guard var v else { return defaultValue }
        if v < 0 { v += count }
        return min(max(v, low), high)
    }
    if step > 0 {
        let s = clamp(start, 0, low: 0, high: count)
        let e = clamp(stop, count, low: 0, high: count)
        return s < e ? Array(stride(from: s, to: e, by: step)) : []
    }
    let s = clamp(start, count - 1, low: -1, high: count - 1)
    let e = clamp(stop, -1, low: -1, high: count - 1)
    return s > e ? Array(stride(from: s, to: e, by: step)) : []
}

/// C's `strftime` in the local time zone (what Python's `datetime.now().strftime` gives).
func strftime(_ format: String, _ date: Date) -> String {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    localtime_r(&seconds, &parts)
    var buffer = [Int8](repeating: 0, count: 512)
    let n = Foundation.strftime(&buffer, buffer.count, format, &parts)
    return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
