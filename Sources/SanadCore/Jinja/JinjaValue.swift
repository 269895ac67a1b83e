/// A value inside a Jinja template, with the Python types jinja2 sees: `none`, `bool`, `int`, `float`, `str`, `list`,
/// `dict` (insertion-ordered, as Python's), jinja2's default `Undefined`, a `namespace()` and callables.
public enum JinjaValue {
    /// jinja2's default `Undefined`: prints as nothing, is falsy, iterates as empty; `hint` names what was missing.
    case undefined(hint: String)
    case none
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JinjaValue])
    /// What `map`, `select`, `selectattr`, `reverse`, `unique` and `items` return in jinja2: a generator, always
    /// true, with no length and no JSON form until `| list` makes it a list.
    case iterator([JinjaValue])
    case object(JinjaObject)
    /// `namespace(...)`: the one mutable value (`{% set ns.x = … %}`), shared by reference.
    case namespace(JinjaNamespace)
    /// A macro, a global (`range`, `raise_exception`) or a bound method (`s.split`).
    case function(JinjaFunction)

    /// A JSON document as a value: objects keep their key order, integers stay integers (as Python's `json.loads`).
    public static func parseJSON(_ text: String) throws -> JinjaValue {
        var parser = JinjaJSONParser(bytes: Array(text.utf8))
        return try parser.document()
    }

    /// A value from `JSONValue` (keys sorted, since `JSONValue` objects have no order); whole numbers become ints.
    public init(_ json: JSONValue) {
        switch json {
        case .null: self = .none
        case .bool(let b): self = .bool(b)
        case .number(let n):
            if n == n.rounded(), abs(n) < 9e15 { self = .int(Int(n)) } else { self = .double(n) }
        case .string(let s): self = .string(s)
        case .array(let a): self = .array(a.map(JinjaValue.init))
        case .object(let o):
            var object = JinjaObject()
            for key in o.keys.sorted() { object[key] = JinjaValue(o[key] ?? .null) }
            self = .object(object)
        }
    }

    var isUndefined: Bool {
        if case .undefined = self { return true }
        return false
    }

    /// Python's truthiness.
    var truthy: Bool {
        switch self {
        case .undefined, .none: return false
        case .bool(let b): return b
        case .int(let i): return i != 0
        case .double(let d): return d != 0
        case .string(let s): return !s.isEmpty
        case .array(let a): return !a.isEmpty
        case .object(let o): return !o.isEmpty
        case .iterator, .namespace, .function: return true
        }
    }

    /// Python's type name, for error messages that match jinja2's.
    var typeName: String {
        switch self {
        case .undefined: return "Undefined"
        case .none: return "NoneType"
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "float"
        case .string: return "str"
        case .array: return "list"
        case .iterator: return "generator"
        case .object: return "dict"
        case .namespace: return "Namespace"
        case .function: return "function"
        }
    }
}

/// A key of a Python dict in a template: a string, or an int (`{0: 'a', 512: 'b'}`).
public enum JinjaKey: Hashable, Sendable {
    case string(String)
    case int(Int)

    var value: JinjaValue {
        switch self {
        case .string(let s): return .string(s)
        case .int(let i): return .int(i)
        }
    }

    /// How `json.dumps` writes the key (ints as their decimal text).
    var text: String {
        switch self {
        case .string(let s): return s
        case .int(let i): return String(i)
        }
    }

    init?(_ value: JinjaValue) {
        switch value {
        case .string(let s): self = .string(s)
        case .int(let i): self = .int(i)
        case .bool(let b): self = .int(b ? 1 : 0)
        default: return nil
        }
    }
}

/// A Python dict: insertion-ordered.
public struct JinjaObject {
    public private(set) var keys: [JinjaKey] = []
    private var storage: [JinjaKey: JinjaValue] = [:]

    public init() {}

    public init(_ pairs: [(String, JinjaValue)]) {
        for (k, v) in pairs { self[k] = v }
    }

    public subscript(key: String) -> JinjaValue? {
        get { storage[.string(key)] }
        set { self[JinjaKey.string(key)] = newValue }
    }

    public subscript(key: JinjaKey) -> JinjaValue? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }
    /// Key and value pairs in insertion order.
    public var pairs: [(JinjaKey, JinjaValue)] { keys.map { ($0, storage[$0] ?? .none) } }
}

/// The mutable object `namespace()` makes.
public final class JinjaNamespace {
    var attributes = JinjaObject()
    init(_ attributes: JinjaObject) { self.attributes = attributes }
}

/// Something a template can call: positional arguments, then keyword arguments in call order.
public struct JinjaFunction {
    let name: String
    let call: ([JinjaValue], [(String, JinjaValue)]) throws -> JinjaValue
}

// MARK: Python's str() and repr()

extension JinjaValue {
    /// `str(value)`: what `{{ value }}` prints.
    var pythonString: String {
        switch self {
        case .undefined: return ""
        case .string(let s): return s
        default: return pythonRepr
        }
    }

    /// `repr(value)`: how values print inside lists and dicts.
    var pythonRepr: String {
        switch self {
        case .undefined: return ""
        case .none: return "None"
        case .bool(let b): return b ? "True" : "False"
        case .int(let i): return String(i)
        case .double(let d): return pythonFloat(d)
        case .string(let s): return pythonStringRepr(s)
        case .array(let a): return "[" + a.map(\.pythonRepr).joined(separator: ", ") + "]"
        case .iterator: return "<generator object>"
        case .object(let o):
            return "{" + o.pairs.map { $0.0.value.pythonRepr + ": " + $0.1.pythonRepr }.joined(separator: ", ") + "}"
        case .namespace(let ns):
            return "<Namespace " + JinjaValue.object(ns.attributes).pythonRepr + ">"
        case .function(let f): return "<function \(f.name)>"
        }
    }
}

/// Python's `repr(float)`: the shortest text that reads back to the same double.
func pythonFloat(_ d: Double) -> String {
    if d.isNaN { return "nan" }
    if d.isInfinite { return d < 0 ? "-inf" : "inf" }
    let text = "\(d)"
    // Swift writes 1e-05 and 1e+16 as Python does; both print a trailing `.0` for whole numbers below 1e16.
    return text
}

/// Python's `repr(str)`: single quotes unless the text holds a single quote and no double quote.
func pythonStringRepr(_ s: String) -> String {
    let quote: Character = s.contains("'") && !s.contains("\"") ? "\"" : "'"
    var out = String(quote)
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if Character(scalar) == quote {
                out += "\\" + String(quote)
            } else if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\x" + hex(scalar.value, width: 2)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    out.append(quote)
    return out
}

func hex(_ v: UInt32, width: Int) -> String {
    let digits = String(v, radix: 16)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

// MARK: JSON in and out

/// Python's `json.dumps(value, ensure_ascii=False, indent=…, separators=…, sort_keys=…)`, which transformers'
/// `tojson` filter calls.
struct JinjaJSONWriter {
    var indent: String?
    var itemSeparator: String
    var keySeparator: String
    var sortKeys: Bool
    var ensureASCII = false

    func write(_ value: JinjaValue) throws -> String {
        var out = ""
        try write(value, depth: 0, into: &out)
        return out
    }

    private func write(_ value: JinjaValue, depth: Int, into out: inout String) throws {
        switch value {
        case .none: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isNaN {
                out += "NaN"
            } else if d.isInfinite {
                out += d < 0 ? "-Infinity" : "Infinity"
            } else {
                out += pythonFloat(d)
            }
        case .string(let s): out += jsonString(s)
        case .array(let a):
            if a.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (i, element) in a.enumerated() {
                if i > 0 { out += itemSeparator }
                newline(depth + 1, &out)
                try write(element, depth: depth + 1, into: &out)
            }
            newline(depth, &out)
            out += "]"
        case .object(let o):
            if o.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            var pairs = o.pairs.map { ($0.0.text, $0.1) }
            if sortKeys { pairs.sort { $0.0.unicodeScalars.lexicographicallyPrecedes($1.0.unicodeScalars) } }
            for (i, (key, element)) in pairs.enumerated() {
                if i > 0 { out += itemSeparator }
                newline(depth + 1, &out)
                out += jsonString(key) + keySeparator
                try write(element, depth: depth + 1, into: &out)
            }
            newline(depth, &out)
            out += "}"
        case .undefined, .iterator, .namespace, .function:
            throw JinjaError.type("Object of type \(value.typeName) is not JSON serializable")
        }
    }

    private func newline(_ depth: Int, _ out: inout String) {
        guard let indent else { return }
        out += "\n" + String(repeating: indent, count: depth)
    }

    private func jsonString(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 || (ensureASCII && scalar.value > 0x7E) {
                    if scalar.value > 0xFFFF {
                        let v = scalar.value - 0x10000
                        out += "\\u" + hex(0xD800 + (v >> 10), width: 4) + "\\u" + hex(0xDC00 + (v & 0x3FF), width: 4)
                    } else {
                        out += "\\u" + hex(scalar.value, width: 4)
                    }
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// A small JSON reader that keeps object key order and integer-ness (what templates see from `json.loads`).
struct JinjaJSONParser {
    let bytes: [UInt8]
    var i = 0
    var depth = 0

    mutating func document() throws -> JinjaValue {
        let v = try value()
        skipSpace()
        guard i == bytes.count else { throw fail("trailing text") }
        return v
    }

    private func fail(_ what: String) -> JinjaError {
        JinjaError.type("invalid JSON at byte \(i): \(what)")
    }

    private mutating func skipSpace() {
        while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 }
    }

    private mutating func value() throws -> JinjaValue {
        skipSpace()
        guard i < bytes.count else { throw fail("unexpected end") }
        depth += 1
        defer { depth -= 1 }
        guard depth < 256 else { throw fail("nested too deeply") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var object = JinjaObject()
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(object)
            }
            while true {
                skipSpace()
                guard case .string(let key) = try value() else { throw fail("object key is not a string") }
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                i += 1
                object[key] = try value()
                skipSpace()
                guard i < bytes.count else { throw fail("unexpected end") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard bytes[i] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
                i += 1
                return .object(object)
            }
        case UInt8(ascii: "["):
            i += 1
            var array: [JinjaValue] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(array)
            }
            while true {
                array.append(try value())
                skipSpace()
                guard i < bytes.count else { throw fail("unexpected end") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard bytes[i] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
                i += 1
                return .array(array)
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): return try word("true", .bool(true))
        case UInt8(ascii: "f"): return try word("false", .bool(false))
        case UInt8(ascii: "n"): return try word("null", .none)
        default: return try number()
        }
    }

    private mutating func word(_ w: String, _ v: JinjaValue) throws -> JinjaValue {
        let u = Array(w.utf8)
        guard i + u.count <= bytes.count, Array(bytes[i..<i + u.count]) == u else { throw fail("unknown word") }
        i += u.count
        return v
    }

    private mutating func number() throws -> JinjaValue {
        let start = i
        var isInt = true
        while i < bytes.count, let c = Optional(bytes[i]),
            (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: ".")
                || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
        {
            if !(c >= 0x30 && c <= 0x39) && !(c == UInt8(ascii: "-") && i == start) { isInt = false }
            i += 1
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInt, let n = Int(text) { return .int(n) }
        guard let d = Double(text) else { throw fail("bad number \(text.debugDescription)") }
        return .double(d)
    }

    private mutating func string() throws -> String {
        i += 1
        var out: [UInt8] = []
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            if c == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                continue
            }
            guard i < bytes.count else { break }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if code >= 0xD800, code < 0xDC00, i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"),
                    bytes[i + 1] == UInt8(ascii: "u")
                {
                    i += 2
                    let low = try hex4()
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                out += Array(String(Unicode.Scalar(code).map(Character.init) ?? "\u{FFFD}").utf8)
            default: out.append(e)
            }
        }
        throw fail("unterminated string")
    }

    private mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16)
        else { throw fail("bad \\u escape") }
        i += 4
        return v
    }
}
