import Foundation

/// jinja2's filters, tests and the Python methods of strings, lists and dicts that templates call.
extension JinjaRenderer {
    // MARK: Filters

    func applyFilter(
        _ name: String, _ value: JinjaValue, _ argExprs: [JinjaExpr], _ kwargExprs: [(String, JinjaExpr)],
        _ scope: JinjaScope
    ) throws -> JinjaValue {
        let args = try argExprs.map { try evaluate($0, scope) }
        let kwargs = try kwargExprs.map { ($0.0, try evaluate($0.1, scope)) }
        return try filter(name, value, args, kwargs)
    }

    func filter(_ name: String, _ value: JinjaValue, _ args: [JinjaValue], _ kwargs: [(String, JinjaValue)]) throws
        -> JinjaValue
    {
        var named = Arguments(args, kwargs)
        switch name {
        case "default", "d":
            let fallback = named.take("default_value", 0) ?? .string("")
            let boolean = named.take("boolean", 1)?.truthy ?? false
            if value.isUndefined || (boolean && !value.truthy) { return fallback }
            return value
        case "length", "count":
            switch value {
            case .string(let s): return .int(s.unicodeScalars.count)
            case .array(let a): return .int(a.count)
            case .object(let o): return .int(o.count)
            case .undefined: return .int(0)
            default: throw JinjaError.type("object of type '\(value.typeName)' has no len()")
            }
        case "trim":
            let chars = named.take("chars", 0)
            return .string(try pythonStrip(try stringValue(value, name), chars, leading: true, trailing: true))
        case "upper": return .string(try stringValue(value, name).uppercased())
        case "lower": return .string(try stringValue(value, name).lowercased())
        case "capitalize": return .string(pythonCapitalize(try stringValue(value, name)))
        case "title": return .string(pythonTitle(try stringValue(value, name)))
        case "string": return .string(value.pythonString)
        case "safe", "e", "escape", "forceescape":
            if name == "safe" { return value }
            return .string(htmlEscape(value.pythonString))
        case "tojson":
            return .string(try toJSON(value, named))
        case "join":
            let separator = named.take("d", 0)?.pythonString ?? ""
            var items = try iterate(value)
            if let attribute = named.take("attribute", 1) {
                items = try items.map { try self.item($0, attribute) }
            }
            return .string(items.map(\.pythonString).joined(separator: separator))
        case "first":
            if case .undefined(let hint) = value { throw JinjaError.undefined(hint) }
            return try iterate(value).first ?? .undefined(hint: "no first item, sequence was empty")
        case "last":
            if case .undefined(let hint) = value { throw JinjaError.undefined(hint) }
            return try iterate(value).last ?? .undefined(hint: "no last item, sequence was empty")
        case "list": return .array(try iterate(value))
        case "reverse":
            if case .string(let s) = value {
                return .string(String(String.UnicodeScalarView(s.unicodeScalars.reversed())))
            }
            if case .iterator = value { throw JinjaError.type("'generator' object is not reversible") }
            return .iterator(try iterate(value).reversed())
        case "items":
            switch value {
            case .object(let o): return .iterator(o.pairs.map { .array([$0.0.value, $0.1]) })
            case .undefined: return .iterator([])
            default: throw JinjaError.type("can only get item pairs from a mapping")
            }
        case "dictsort":
            guard case .object(let o) = value else { throw JinjaError.type("can only dictsort a mapping") }
            let caseSensitive = named.take("case_sensitive", 0)?.truthy ?? false
            let byValue = (named.take("by", 1)?.pythonString ?? "key") == "value"
            let reverse = named.take("reverse", 2)?.truthy ?? false
            let sorted = try o.pairs.map { JinjaValue.array([$0.0.value, $0.1]) }.sortedPython(
                reverse: reverse
            ) { pair in
                let v = try self.item(pair, .int(byValue ? 1 : 0))
                if !caseSensitive, case .string(let s) = v { return .string(s.lowercased()) }
                return v
            }
            return .array(sorted)
        case "sort":
            let reverse = named.take("reverse", 0)?.truthy ?? false
            let caseSensitive = named.take("case_sensitive", 1)?.truthy ?? false
            let attribute = named.take("attribute", 2)
            return .array(
                try iterate(value).sortedPython(reverse: reverse) { v in
                    var key = v
                    if let attribute { key = try self.item(v, attribute) }
                    if !caseSensitive, case .string(let s) = key { return .string(s.lowercased()) }
                    return key
                })
        case "unique":
            var seen: [JinjaValue] = []
            for v in try iterate(value) where !seen.contains(where: { pythonEqual($0, v) }) { seen.append(v) }
            return .iterator(seen)
        case "min", "max":
            let items = try iterate(value)
            guard var best = items.first else { return .undefined(hint: "no \(name) item, sequence was empty") }
            for v in items.dropFirst() {
                let order = try pythonOrder(v, best)
                if (name == "min" && order < 0) || (name == "max" && order > 0) { best = v }
            }
            return best
        case "sum":
            var total = named.take("start", 1) ?? .int(0)
            let attribute = named.take("attribute", 0)
            for v in try iterate(value) { total = try binary("+", total, try attribute.map { try item(v, $0) } ?? v) }
            return total
        case "selectattr", "rejectattr", "select", "reject":
            let wantsAttribute = name.hasSuffix("attr")
            let attribute = wantsAttribute ? args.first : nil
            let testArgs = Array(args.dropFirst(wantsAttribute ? 1 : 0))
            let select = name.hasPrefix("select")
            guard value.truthy else { return .iterator([]) }
            return .iterator(
                try iterate(value).filter { v in
                    let subject = try attribute.map { try self.item(v, $0) } ?? v
                    let passed: Bool
                    if case .string(let testName)? = testArgs.first {
                        passed = try test(testName, subject, Array(testArgs.dropFirst()))
                    } else {
                        passed = subject.truthy
                    }
                    return passed == select
                })
        case "map":
            guard value.truthy else { return .iterator([]) }
            if let attribute = named.take("attribute", -1) {
                let fallback = named.take("default", -1)
                return .iterator(
                    try iterate(value).map { v in
                        let r = try self.item(v, attribute)
                        if r.isUndefined, let fallback { return fallback }
                        return r
                    })
            }
            guard case .string(let filterName)? = args.first, jinjaFilterNames.contains(filterName) else {
                throw JinjaError.type("map() needs a filter name or attribute=")
            }
            return .iterator(
                try iterate(value).map { try self.filter(filterName, $0, Array(args.dropFirst()), kwargs) })
        case "replace":
            let s = value.pythonString
            guard let old = named.take("old", 0)?.pythonString, let new = named.take("new", 1)?.pythonString else {
                throw JinjaError.type("replace() needs old and new")
            }
            let count = named.take("count", 2)?.asInt
            return .string(pythonReplace(s, old, new, count: count))
        case "int":
            let fallback = named.take("default", 0) ?? .int(0)
            switch value {
            case .int, .bool: return .int(value.asStrictInt ?? 0)
            case .double(let d): return d.isFinite ? .int(Int(d)) : fallback
            case .string(let s):
                let t = s.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "")
                if let i = Int(t) { return .int(i) }
                if let d = Double(t), d.isFinite { return .int(Int(d)) }
                return fallback
            default: return fallback
            }
        case "float":
            let fallback = named.take("default", 0) ?? .double(0)
            switch value {
            case .int, .bool, .double: return .double(value.asNumber ?? 0)
            case .string(let s): return Double(s.trimmingCharacters(in: .whitespaces)).map { .double($0) } ?? fallback
            default: return fallback
            }
        case "abs":
            switch value {
            case .int(let i): return .int(abs(i))
            case .double(let d): return .double(abs(d))
            case .bool(let b): return .int(b ? 1 : 0)
            default: throw typeError("bad operand type for abs(): '\(value.typeName)'", value)
            }
        case "round":
            let precision = named.take("precision", 0)?.asInt ?? 0
            let method = named.take("method", 1)?.pythonString ?? "common"
            guard let d = value.asNumber else { throw typeError("round() needs a number", value) }
            let scale = pow(10, Double(precision))
            let x = d * scale
            let r: Double
            switch method {
            case "ceil": r = x.rounded(.up)
            case "floor": r = x.rounded(.down)
            default: r = x.rounded(.toNearestOrEven)  // Python's round()
            }
            return .double(r / scale)
        case "indent":
            let width = named.take("width", 0) ?? .int(4)
            let first = named.take("first", 1)?.truthy ?? false
            let blank = named.take("blank", 2)?.truthy ?? false
            let indentation: String
            if case .string(let s) = width {
                indentation = s
            } else {
                indentation = String(repeating: " ", count: width.asInt ?? 4)
            }
            let lines = pythonSplitLines(value.pythonString + "\n")
            var result: String
            if blank {
                result = lines.joined(separator: "\n" + indentation)
            } else {
                result = lines.first ?? ""
                let rest = lines.dropFirst()
                if !rest.isEmpty {
                    result += "\n" + rest.map { $0.isEmpty ? $0 : indentation + $0 }.joined(separator: "\n")
                }
            }
            if first { result = indentation + result }
            return .string(result)
        case "center":
            let s = value.pythonString
            let width = named.take("width", 0)?.asInt ?? 80
            let n = s.unicodeScalars.count
            guard width > n else { return .string(s) }
            let left = (width - n) / 2 + ((width - n) % 2 & width % 2)
            return .string(String(repeating: " ", count: left) + s + String(repeating: " ", count: width - n - left))
        case "wordcount":
            return .int(value.pythonString.split { !$0.isLetter && !$0.isNumber && $0 != "_" }.count)
        case "attr":
            guard case .string(let n)? = args.first else { throw JinjaError.type("attr() needs a name") }
            return try attribute(value, n)
        default:
            guard jinjaFilterNames.contains(name) else { throw JinjaError.type("No filter named '\(name)'.") }
            throw JinjaError.unsupported("the '\(name)' filter")
        }
    }

    private func stringValue(_ value: JinjaValue, _ filter: String) throws -> String {
        if case .string(let s) = value { return s }
        if case .undefined = value { return "" }
        // jinja2's string filters call str() on what they get.
        return value.pythonString
    }

    /// transformers' `tojson`: `json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
    /// sort_keys=sort_keys)`.
    private func toJSON(_ value: JinjaValue, _ named: Arguments) throws -> String {
        var named = named
        let indentValue = named.take("indent", 0)
        let separators = named.take("separators", -1)
        let sortKeys = named.take("sort_keys", -1)?.truthy ?? false
        let ensureASCII = named.take("ensure_ascii", -1)?.truthy ?? false
        var indent: String? = nil
        switch indentValue {
        case .int(let n)?: indent = String(repeating: " ", count: max(0, n))
        case .string(let s)?: indent = s
        case .none?, nil: indent = nil
        default: throw JinjaError.type("indent must be an int or a string")
        }
        var itemSeparator = indent == nil ? ", " : ","
        var keySeparator = ": "
        if case .array(let pair)? = separators, pair.count == 2, case .string(let a) = pair[0],
            case .string(let b) = pair[1]
        {
            itemSeparator = a
            keySeparator = b
        }
        return try JinjaJSONWriter(
            indent: indent, itemSeparator: itemSeparator, keySeparator: keySeparator, sortKeys: sortKeys,
            ensureASCII: ensureASCII
        ).write(value)
    }

    // MARK: Tests

    func test(_ name: String, _ value: JinjaValue, _ args: [JinjaValue]) throws -> Bool {
        switch name {
        case "defined": return !value.isUndefined
        case "undefined": return value.isUndefined
        case "none": return value.isNone
        case "string": return value.isString
        case "boolean":
            if case .bool = value { return true }
            return false
        case "true":
            if case .bool(true) = value { return true }
            return false
        case "false":
            if case .bool(false) = value { return true }
            return false
        case "integer":
            if case .int = value { return true }
            return false
        case "float":
            if case .double = value { return true }
            return false
        case "number": return value.asNumber != nil
        case "mapping":
            if case .object = value { return true }
            return false
        case "iterable", "sequence":
            switch value {
            case .string, .array, .object, .undefined: return true
            case .iterator: return name == "iterable"
            default: return false
            }
        case "callable":
            if case .function = value { return true }
            return false
        case "odd", "even":
            guard let i = value.asStrictInt else { throw typeError("\(name) needs an integer", value) }
            return (i % 2 != 0) == (name == "odd")
        case "divisibleby":
            guard let i = value.asStrictInt, let d = args.first?.asStrictInt, d != 0 else {
                throw JinjaError.type("divisibleby needs integers")
            }
            return i % d == 0
        case "lower": return value.pythonString == value.pythonString.lowercased()
        case "upper": return value.pythonString == value.pythonString.uppercased()
        case "eq", "equalto", "==", "ne", "!=", "lt", "lessthan", "<", "le", "<=", "gt", "greaterthan", ">", "ge",
            ">=", "in", "sameas":
            guard let other = args.first else { throw JinjaError.type("the '\(name)' test needs an argument") }
            let op: String
            switch name {
            case "eq", "equalto", "==", "sameas": op = "=="
            case "ne", "!=": op = "!="
            case "lt", "lessthan", "<": op = "<"
            case "le", "<=": op = "<="
            case "gt", "greaterthan", ">": op = ">"
            case "ge", ">=": op = ">="
            default: op = "in"
            }
            return try compare(op, value, other)
        case "escaped": return false
        case "filter", "test":
            guard case .string(let n)? = args.first else { return false }
            return name == "filter" ? jinjaFilterNames.contains(n) : jinjaTestNames.contains(n)
        default:
            throw JinjaError.type("No test named '\(name)'.")
        }
    }

    // MARK: Methods of str, list and dict

    func method(_ value: JinjaValue, _ name: String) throws -> JinjaValue? {
        switch value {
        case .string(let s): return stringMethod(s, name)
        case .array(let a):
            switch name {
            case "append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear":
                return unsafeMethod("list", name)
            case "index":
                return bound(name) { args, _ in
                    guard let x = args.first, let i = a.firstIndex(where: { pythonEqual($0, x) }) else {
                        throw JinjaError.type("value is not in list")
                    }
                    return .int(i)
                }
            case "count":
                return bound(name) { args, _ in .int(a.filter { pythonEqual($0, args.first ?? .none) }.count) }
            case "copy": return bound(name) { _, _ in value }
            default: return nil
            }
        case .object(let o):
            switch name {
            case "get":
                return bound(name) { args, kwargs in
                    var named = Arguments(args, kwargs)
                    guard let key = named.take("key", 0).flatMap(JinjaKey.init) else {
                        return named.take("default", 1) ?? .none
                    }
                    return o[key] ?? named.take("default", 1) ?? .none
                }
            case "items": return bound(name) { _, _ in .array(o.pairs.map { .array([$0.0.value, $0.1]) }) }
            case "keys": return bound(name) { _, _ in .array(o.keys.map(\.value)) }
            case "values": return bound(name) { _, _ in .array(o.pairs.map(\.1)) }
            case "copy": return bound(name) { _, _ in value }
            case "pop", "popitem", "setdefault", "update", "clear":
                return unsafeMethod("dict", name)
            default: return nil
            }
        default:
            return nil
        }
    }

    private func bound(
        _ name: String, _ body: @escaping ([JinjaValue], [(String, JinjaValue)]) throws -> JinjaValue
    ) -> JinjaValue {
        .function(JinjaFunction(name: name, call: body))
    }

    private func unsafeMethod(_ type: String, _ name: String) -> JinjaValue {
        bound(name) { _, _ in throw JinjaError.security("access to attribute '\(name)' of '\(type)' object is unsafe") }
    }

    private func stringMethod(_ s: String, _ name: String) -> JinjaValue? {
        switch name {
        case "strip", "lstrip", "rstrip":
            return bound(name) { args, _ in
                .string(try pythonStrip(s, args.first, leading: name != "rstrip", trailing: name != "lstrip"))
            }
        case "upper": return bound(name) { _, _ in .string(s.uppercased()) }
        case "lower": return bound(name) { _, _ in .string(s.lowercased()) }
        case "title": return bound(name) { _, _ in .string(pythonTitle(s)) }
        case "capitalize": return bound(name) { _, _ in .string(pythonCapitalize(s)) }
        case "startswith", "endswith":
            return bound(name) { args, _ in
                let candidates: [JinjaValue]
                switch args.first {
                case .array(let a)?: candidates = a
                case .string?: candidates = [args[0]]
                default: throw JinjaError.type("\(name) first arg must be str or a tuple of str")
                }
                return .bool(
                    candidates.contains { c in
                        guard case .string(let p) = c else { return false }
                        return name == "startswith"
                            ? s.unicodeScalars.starts(with: p.unicodeScalars)
                            : s.unicodeScalars.reversed().starts(with: p.unicodeScalars.reversed())
                    })
            }
        case "split", "rsplit":
            return bound(name) { args, kwargs in
                var named = Arguments(args, kwargs)
                let separator = named.take("sep", 0)
                let maxSplit = named.take("maxsplit", 1)?.asInt ?? -1
                if case .string(let sep)? = separator {
                    guard !sep.isEmpty else { throw JinjaError.type("empty separator") }
                    return .array(
                        pythonSplit(s, sep, maxSplit: maxSplit, fromRight: name == "rsplit").map { .string($0) })
                }
                return .array(pythonSplitWhitespace(s, maxSplit: maxSplit).map { .string($0) })
            }
        case "replace":
            return bound(name) { args, _ in
                guard args.count >= 2 else { throw JinjaError.type("replace() takes at least 2 arguments") }
                return .string(
                    pythonReplace(
                        s, args[0].pythonString, args[1].pythonString, count: args.count > 2 ? args[2].asInt : nil))
            }
        case "find", "rfind", "index", "rindex", "count":
            return bound(name) { args, _ in
                guard case .string(let needle)? = args.first else { throw JinjaError.type("\(name) needs a string") }
                let hay = Array(s.unicodeScalars)
                let n = Array(needle.unicodeScalars)
                var positions: [Int] = []
                if n.count <= hay.count {
                    var k = 0
                    while k + n.count <= hay.count {
                        if Array(hay[k..<k + n.count]) == n {
                            positions.append(k)
                            k += max(1, n.count)
                        } else {
                            k += 1
                        }
                    }
                }
                if name == "count" { return .int(n.isEmpty ? hay.count + 1 : positions.count) }
                let found = name.hasPrefix("r") ? positions.last : positions.first
                if let found { return .int(found) }
                if name.hasSuffix("index") { throw JinjaError.type("substring not found") }
                return .int(-1)
            }
        case "join":
            return bound(name) { args, _ in
                .string(try self.iterate(args.first ?? .array([])).map(\.pythonString).joined(separator: s))
            }
        case "format":
            return bound(name) { args, kwargs in .string(try pythonFormat(s, args, kwargs)) }
        case "splitlines":
            return bound(name) { _, _ in .array(pythonSplitLines(s).map { .string($0) }) }
        case "isdigit", "isnumeric", "isdecimal":
            return bound(name) { _, _ in
                .bool(!s.isEmpty && s.unicodeScalars.allSatisfy { $0.properties.numericType != nil })
            }
        case "isalpha":
            return bound(name) { _, _ in .bool(!s.isEmpty && s.unicodeScalars.allSatisfy { $0.properties.isAlphabetic })
            }
        case "isspace":
            return bound(name) { _, _ in .bool(!s.isEmpty && s.unicodeScalars.allSatisfy { $0.properties.isWhitespace })
            }
        case "isupper": return bound(name) { _, _ in .bool(s.uppercased() == s && s.lowercased() != s) }
        case "islower": return bound(name) { _, _ in .bool(s.lowercased() == s && s.uppercased() != s) }
        default: return nil
        }
    }
}

/// Positional and keyword arguments, taken by name or position.
struct Arguments {
    var positional: [JinjaValue]
    var keywords: [(String, JinjaValue)]

    init(_ positional: [JinjaValue], _ keywords: [(String, JinjaValue)]) {
        self.positional = positional
        self.keywords = keywords
    }

    /// The keyword `name`, else the positional argument at `index` (-1: keyword only).
    mutating func take(_ name: String, _ index: Int) -> JinjaValue? {
        if let k = keywords.firstIndex(where: { $0.0 == name }) { return keywords[k].1 }
        if index >= 0 && index < positional.count { return positional[index] }
        return nil
    }
}

extension Array where Element == JinjaValue {
    /// A stable sort by `key` in Python's order; values Python cannot compare raise.
    func sortedPython(reverse: Bool, key: (JinjaValue) throws -> JinjaValue) throws -> [JinjaValue] {
        let keyed = try map { (try key($0), $0) }
        var failure: Error?
        let sorted = keyed.enumerated().sorted { a, b in
            do {
                let order = try pythonOrder(a.element.0, b.element.0)
                if order == 0 { return a.offset < b.offset }
                return reverse ? order > 0 : order < 0
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return sorted.map(\.element.1)
    }
}

// MARK: Python string functions

private func isPythonWhitespace(_ c: Unicode.Scalar) -> Bool {
    c.properties.isWhitespace || (0x1C...0x1F).contains(c.value)
}

func pythonStrip(_ s: String, _ chars: JinjaValue?, leading: Bool, trailing: Bool) throws -> String {
    var set: Set<Unicode.Scalar>? = nil
    switch chars {
    case .string(let c)?: set = Set(c.unicodeScalars)
    case .none?, nil: set = nil
    default: throw JinjaError.type("strip arg must be None or str")
    }
    func strippable(_ c: Unicode.Scalar) -> Bool { set.map { $0.contains(c) } ?? isPythonWhitespace(c) }
    var scalars = Substring(s).unicodeScalars[...]
    if leading { while let f = scalars.first, strippable(f) { scalars.removeFirst() } }
    if trailing { while let l = scalars.last, strippable(l) { scalars.removeLast() } }
    return String(String.UnicodeScalarView(scalars))
}

func pythonReplace(_ s: String, _ old: String, _ new: String, count: Int?) -> String {
    let limit = count.flatMap { $0 < 0 ? nil : $0 } ?? Int.max
    let hay = Array(s.unicodeScalars)
    let o = Array(old.unicodeScalars)
    var out = String.UnicodeScalarView()
    var done = 0
    var k = 0
    if o.isEmpty {
        for c in hay {
            if done < limit {
                out.append(contentsOf: new.unicodeScalars)
                done += 1
            }
            out.append(c)
        }
        if done < limit { out.append(contentsOf: new.unicodeScalars) }
        return String(out)
    }
    while k < hay.count {
        if done < limit, k + o.count <= hay.count, hay[k] == o[0], Array(hay[k..<k + o.count]) == o {
            out.append(contentsOf: new.unicodeScalars)
            k += o.count
            done += 1
        } else {
            out.append(hay[k])
            k += 1
        }
    }
    return String(out)
}

func pythonSplit(_ s: String, _ sep: String, maxSplit: Int, fromRight: Bool) -> [String] {
    let hay = Array(s.unicodeScalars)
    let p = Array(sep.unicodeScalars)
    var cuts: [Int] = []
    var k = 0
    while k + p.count <= hay.count {
        if Array(hay[k..<k + p.count]) == p {
            cuts.append(k)
            k += p.count
        } else {
            k += 1
        }
    }
    if maxSplit >= 0 && cuts.count > maxSplit {
        cuts = fromRight ? Array(cuts.suffix(maxSplit)) : Array(cuts.prefix(maxSplit))
    }
    var parts: [String] = []
    var start = 0
    for c in cuts {
        parts.append(String(String.UnicodeScalarView(hay[start..<c])))
        start = c + p.count
    }
    parts.append(String(String.UnicodeScalarView(hay[start...])))
    return parts
}

func pythonSplitWhitespace(_ s: String, maxSplit: Int) -> [String] {
    var parts: [String] = []
    var current = String.UnicodeScalarView()
    var inWord = false
    let scalars = Array(s.unicodeScalars)
    var k = 0
    while k < scalars.count {
        let c = scalars[k]
        if isPythonWhitespace(c) {
            if inWord {
                parts.append(String(current))
                current = String.UnicodeScalarView()
                inWord = false
                if maxSplit >= 0 && parts.count == maxSplit {
                    var rest = scalars[k...]
                    while let f = rest.first, isPythonWhitespace(f) { rest = rest.dropFirst() }
                    if !rest.isEmpty { parts.append(String(String.UnicodeScalarView(rest))) }
                    return parts
                }
            }
        } else {
            current.append(c)
            inWord = true
        }
        k += 1
    }
    if inWord { parts.append(String(current)) }
    return parts
}

func pythonSplitLines(_ s: String) -> [String] {
    var lines: [String] = []
    var current = String.UnicodeScalarView()
    let scalars = Array(s.unicodeScalars)
    var k = 0
    while k < scalars.count {
        let c = scalars[k]
        let breaks: Set<UInt32> = [0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029]
        if breaks.contains(c.value) {
            lines.append(String(current))
            current = String.UnicodeScalarView()
            if c == "\r", k + 1 < scalars.count, scalars[k + 1] == "\n" { k += 1 }
        } else {
            current.append(c)
        }
        k += 1
    }
    if !current.isEmpty { lines.append(String(current)) }
    return lines
}

func pythonCapitalize(_ s: String) -> String {
    guard let first = s.first else { return s }
    return String(first).uppercased() + s.dropFirst().lowercased()
}

func pythonTitle(_ s: String) -> String {
    var out = ""
    var previousCased = false
    for c in s {
        out += previousCased ? String(c).lowercased() : String(c).uppercased()
        previousCased = c.isLetter
    }
    return out
}

func htmlEscape(_ s: String) -> String {
    s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "'", with: "&#39;")
        .replacingOccurrences(of: "\"", with: "&#34;")
}

/// `str.format` with `{}`, `{0}` and `{name}` fields (no format specs).
func pythonFormat(_ format: String, _ args: [JinjaValue], _ kwargs: [(String, JinjaValue)]) throws -> String {
    var out = ""
    var auto = 0
    var chars = Array(format)[...]
    while let c = chars.popFirst() {
        if c == "{" {
            if chars.first == "{" {
                chars.removeFirst()
                out.append("{")
                continue
            }
            var field = ""
            while let d = chars.popFirst(), d != "}" { field.append(d) }
            if field.contains(":") || field.contains("!") {
                throw JinjaError.unsupported("format specs in str.format")
            }
            if field.isEmpty {
                guard auto < args.count else { throw JinjaError.type("Replacement index \(auto) out of range") }
                out += args[auto].pythonString
                auto += 1
            } else if let i = Int(field) {
                guard i < args.count else { throw JinjaError.type("Replacement index \(i) out of range") }
                out += args[i].pythonString
            } else {
                guard let v = kwargs.first(where: { $0.0 == field })?.1 else {
                    throw JinjaError.type("KeyError: '\(field)'")
                }
                out += v.pythonString
            }
        } else if c == "}" {
            if chars.first == "}" { chars.removeFirst() }
            out.append("}")
        } else {
            out.append(c)
        }
    }
    return out
}

/// `format % values` with `%s`, `%r`, `%d`, `%i` and `%%`.
func percentFormat(_ format: String, _ values: JinjaValue) throws -> String {
    var items: [JinjaValue]
    if case .array(let a) = values { items = a } else { items = [values] }
    var out = ""
    var chars = Array(format)[...]
    while let c = chars.popFirst() {
        guard c == "%" else {
            out.append(c)
            continue
        }
        guard let spec = chars.popFirst() else { throw JinjaError.type("incomplete format") }
        if spec == "%" {
            out.append("%")
            continue
        }
        guard !items.isEmpty else { throw JinjaError.type("not enough arguments for format string") }
        let v = items.removeFirst()
        switch spec {
        case "s": out += v.pythonString
        case "r": out += v.pythonRepr
        case "d", "i":
            guard let n = v.asNumber else { throw JinjaError.type("%d format: a real number is required") }
            out += String(Int(n))
        default: throw JinjaError.unsupported("the %\(spec) format")
        }
    }
    guard items.isEmpty else { throw JinjaError.type("not all arguments converted during string formatting") }
    return out
}
