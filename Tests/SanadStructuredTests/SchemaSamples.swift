import Foundation
import SanadCore
import SanadTestSupport

// Random schemas of the supported subset, random documents valid for them (in the layout the matcher produces:
// properties in schema order, at most one blank between tokens), and an independent validator to judge mutations.

/// Patterns the random schemas use, with a maker of matching strings.
let samplePatterns: [(String, @Sendable (inout SeededGenerator) -> String)] = [
    (
        "^[A-Z]{2}[0-9]{3}$",
        { rng in rng.string(from: Array("ABCXYZ"), length: 2...2) + rng.string(from: Array("0123456789"), length: 3...3)
        }
    ),
    ("^(yes|no|maybe)$", { rng in rng.pick(["yes", "no", "maybe"]) }),
    (
        "^[a-z]+(-[a-z]+)*$",
        { rng in
            (0..<rng.int(1...3)).map { _ in rng.string(from: Array("abcxyz"), length: 1...4) }.joined(separator: "-")
        }
    ),
]

let propertyNames = ["id", "name", "value", "notes", "nextStepId", "amount", "date", "tags", "ok", "a/b", "ключ"]

struct SchemaMaker {
    var rng: SeededGenerator
    var defs: [String: JSONValue] = [:]

    mutating func schema(depth: Int) -> JSONValue {
        let kinds = depth >= 3 ? 8 : 12
        switch rng.int(0...(kinds - 1)) {
        case 0:
            var s: [String: JSONValue] = ["type": "string"]
            let low = rng.int(0...3)
            if rng.bool() { s["minLength"] = .number(Double(low)) }
            if rng.bool() { s["maxLength"] = .number(Double(low + rng.int(0...6))) }
            return .object(s)
        case 1: return ["type": "string", "format": "date"]
        case 2: return ["type": "string", "pattern": .string(rng.pick(samplePatterns).0)]
        case 3, 4:
            var s: [String: JSONValue] = ["type": rng.bool() ? "integer" : "number"]
            let low = rng.int(-50...50)
            if rng.bool() { s["minimum"] = .number(Double(low)) }
            if rng.bool() { s["maximum"] = .number(Double(low + rng.int(0...200))) }
            return .object(s)
        case 5: return ["type": rng.bool() ? "boolean" : "null"]
        case 6:
            let values: [JSONValue] = ["red", "green", "blue", 1, 2.5, .null, true, "é"]
            return ["enum": .array(Array(values.shuffled(using: &rng).prefix(rng.int(1...4))))]
        case 7: return ["const": rng.pick(["fixed", 42, false])]
        case 8, 9:
            var properties: [String: JSONValue] = [:]
            for name in propertyNames.shuffled(using: &rng).prefix(rng.int(0...4)) {
                properties[name] = schema(depth: depth + 1)
            }
            let required = properties.keys.shuffled(using: &rng).filter { _ in rng.bool() }
            return [
                "type": "object", "properties": .object(properties), "required": .array(required.map { .string($0) }),
                "additionalProperties": false,
            ]
        case 10:
            var s: [String: JSONValue] = ["type": "array", "items": schema(depth: depth + 1)]
            let low = rng.int(0...2)
            if rng.bool() { s["minItems"] = .number(Double(low)) }
            if rng.bool() { s["maxItems"] = .number(Double(low + rng.int(0...3))) }
            return .object(s)
        default:
            if rng.bool() {
                let name = "d\(defs.count)"
                defs[name] = .null  // reserved, so that a nested definition gets another name
                defs[name] = schema(depth: depth + 1)
                return ["$ref": .string("#/$defs/" + name)]
            }
            // Alternatives of different kinds, so that oneOf's "exactly one" holds too.
            let options: [JSONValue] = [
                ["type": "string", "maxLength": 5], ["type": "integer"], ["type": "null"],
                ["type": "array", "items": ["type": "boolean"], "maxItems": 2],
            ]
            return [rng.bool() ? "anyOf" : "oneOf": .array(Array(options.shuffled(using: &rng).prefix(2)))]
        }
    }

    /// A whole schema: a random node, with `$defs` when it used some.
    static func make(_ rng: inout SeededGenerator) -> JSONValue {
        var maker = SchemaMaker(rng: rng)
        var root = maker.schema(depth: 0)
        if !maker.defs.isEmpty, case .object(var o) = root {
            o["$defs"] = .object(maker.defs)
            root = .object(o)
        }
        rng = maker.rng
        return root
    }
}

/// Writes random documents valid for a schema, in the matcher's layout.
struct DocumentMaker {
    let root: JSONValue
    var rng: SeededGenerator

    mutating func blank() -> String { rng.bool(0.15) ? rng.pick([" ", "\n", "\t"]) : "" }

    mutating func text(_ s: JSONValue, depth: Int) -> String {
        if let ref = s["$ref"]?.stringValue, let def = root["$defs"]?[String(ref.dropFirst("#/$defs/".count))] {
            return text(def, depth: depth)
        }
        if let c = s["const"] { return c.jsonString }
        if case .array(let values)? = s["enum"] { return rng.pick(values).jsonString }
        if case .array(let options)? = s["anyOf"] ?? s["oneOf"] { return text(rng.pick(options), depth: depth) }
        let number = { (key: String) -> Int? in s[key].flatMap { if case .number(let n) = $0 { Int(n) } else { nil } } }
        switch s["type"]?.stringValue ?? "" {
        case "string":
            if s["format"] != nil {
                return "\"\(rng.int(1900...2099))-\(pad(rng.int(1...12)))-\(pad(rng.int(1...31)))\""
            }
            if let p = s["pattern"]?.stringValue, let make = samplePatterns.first(where: { $0.0 == p })?.1 {
                return "\"" + make(&rng) + "\""
            }
            let low = number("minLength") ?? 0
            let high = number("maxLength") ?? low + 6
            let pieces = ["a", "Z", "7", " ", "é", "ش", "😀", "\\n", "\\\"", "\\\\", "\\u00e9", "\\/", "-"]
            return "\"" + (0..<rng.int(low...high)).map { _ in rng.pick(pieces) }.joined() + "\""
        case "integer", "number":
            let low = number("minimum") ?? -1000
            let high = number("maximum") ?? low + 2000
            let whole = rng.int(low...high)
            if s["type"]?.stringValue == "number" && whole < high && rng.bool() {
                return whole < 0 && whole + 1 > low
                    ? "-\(-whole - 1).\(rng.int(1...99))" : "\(whole).\(rng.int(0...99))"
            }
            return "\(whole)"
        case "boolean": return rng.bool() ? "true" : "false"
        case "null": return "null"
        case "array":
            let low = number("minItems") ?? 0
            let high = number("maxItems") ?? low + 3
            let count = depth > 4 ? low : rng.int(low...high)
            guard let items = s["items"], count > 0 else { return "[" + blank() + "]" }
            return "[" + blank()
                + (0..<count).map { _ in text(items, depth: depth + 1) + blank() }
                .joined(separator: "," + blank()) + "]"
        default:
            guard case .object(let properties)? = s["properties"] else { return "{" + blank() + "}" }
            let required = strings(s["required"])
            let order = required + properties.keys.filter { !required.contains($0) }.sorted()
            var members: [String] = []
            for name in order where required.contains(name) || rng.bool() {
                guard let p = properties[name] else { continue }
                members.append(
                    JSONValue.string(name).jsonString + blank() + ":" + blank() + text(p, depth: depth + 1) + blank())
            }
            return "{" + blank() + members.joined(separator: "," + blank()) + "}"
        }
    }

    func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}

/// An independent check of `value` against the schema subset (for judging mutated documents).
func validates(_ value: JSONValue, _ s: JSONValue, root: JSONValue, depth: Int = 0) -> Bool {
    guard depth < 64 else { return false }
    if let ref = s["$ref"]?.stringValue, let def = root["$defs"]?[String(ref.dropFirst("#/$defs/".count))] {
        return validates(value, def, root: root, depth: depth + 1)
    }
    if let c = s["const"] { return same(value, c) }
    if case .array(let values)? = s["enum"] { return values.contains { same(value, $0) } }
    if case .array(let options)? = s["anyOf"] {
        return options.contains { validates(value, $0, root: root, depth: depth + 1) }
    }
    if case .array(let options)? = s["oneOf"] {
        return options.filter { validates(value, $0, root: root, depth: depth + 1) }.count == 1
    }
    func bound(_ key: String) -> Double? { if case .number(let n)? = s[key] { n } else { nil } }
    switch (s["type"]?.stringValue ?? "", value) {
    case ("string", .string(let text)):
        let length = text.unicodeScalars.count
        if let low = bound("minLength"), Double(length) < low { return false }
        if let high = bound("maxLength"), Double(length) > high { return false }
        let pattern =
            s["format"] != nil ? "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$" : s["pattern"]?.stringValue
        if let pattern { return text.range(of: pattern, options: .regularExpression) != nil }
        return true
    case ("integer", .number(let n)), ("number", .number(let n)):
        if s["type"]?.stringValue == "integer" && n != n.rounded() { return false }
        return n >= (bound("minimum") ?? -.infinity) && n <= (bound("maximum") ?? .infinity)
    case ("boolean", .bool), ("null", .null): return true
    case ("array", .array(let items)):
        if let low = bound("minItems"), Double(items.count) < low { return false }
        if let high = bound("maxItems"), Double(items.count) > high { return false }
        guard let itemSchema = s["items"] else { return false }
        return items.allSatisfy { validates($0, itemSchema, root: root, depth: depth + 1) }
    case ("object", .object(let members)):
        let properties: [String: JSONValue] = if case .object(let p)? = s["properties"] { p } else { [:] }
        let required = strings(s["required"])
        return required.allSatisfy { members[$0] != nil }
            && members.allSatisfy { key, v in
                properties[key].map { validates(v, $0, root: root, depth: depth + 1) } ?? false
            }
    default: return false
    }
}

/// JSON equality with numbers compared as values and booleans never equal to numbers.
func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.number(let x), .number(let y)): return x == y
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    default: return a == b
    }
}

// Schemas written as literals in the tests.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}

/// The strings of a JSON array (none for anything else).
func strings(_ value: JSONValue?) -> [String] {
    guard case .array(let items)? = value else { return [] }
    return items.compactMap(\.stringValue)
}
