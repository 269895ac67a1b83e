import Foundation
import SanadCore

/// A schema that cannot be compiled: where (a JSON pointer into the schema) and why.
public struct SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    public let pointer: String
    public let problem: String

    public var description: String { "schema at \(pointer.isEmpty ? "#" : "#" + pointer): \(problem)" }
}

extension CompiledSchema {
    /// Compiles a JSON Schema (the subset README.md "Structured output" lists); any other keyword is an error that
    /// names its JSON pointer, never ignored.
    ///
    /// Objects are generated with their properties in one order: `propertyOrdering` when the schema gives it, else
    /// the `required` list's order followed by the optional properties sorted by name. Required properties must
    /// appear, optional ones may be left out, no other property is produced (as with `additionalProperties: false`).
    public init(schema: JSONValue) throws(SchemaError) {
        var compiler = SchemaCompiler(root: schema)
        let root = try compiler.compile(schema, pointer: "", depth: 0)
        try compiler.checkProgress()
        self.init(nodes: compiler.nodes, root: root, alternatives: try compiler.alternatives())
    }

    /// Parses schema text first (`StrictJSON`).
    public init(text: String) throws {
        try self.init(schema: try StrictJSON().parse(Array(text.utf8)))
    }
}

struct SchemaCompiler {
    typealias Node = CompiledSchema.Node
    let root: JSONValue
    var nodes: [Node] = []
    var refs: [String: Int] = [:]
    /// Pointer of each node, for errors found after compilation.
    var pointers: [String] = []

    static let annotations: Set<String> = [
        "title", "description", "$comment", "examples", "default", "$schema", "$id", "$defs", "definitions",
        "deprecated", "readOnly", "writeOnly",
    ]
    static let keywordsByType: [String: Set<String>] = [
        "object": ["properties", "required", "additionalProperties", "propertyOrdering"],
        "array": ["items", "minItems", "maxItems"],
        "string": ["minLength", "maxLength", "pattern", "format"],
        "integer": ["minimum", "maximum"],
        "number": ["minimum", "maximum"],
        "boolean": [],
        "null": [],
    ]
    static let maximumDepth = 32

    init(root: JSONValue) { self.root = root }

    mutating func add(_ node: Node, _ pointer: String) throws(SchemaError) -> Int {
        guard nodes.count < CompiledSchema.maximumNodes else {
            throw SchemaError(
                pointer: pointer, problem: "the schema is too large (over \(CompiledSchema.maximumNodes) nodes)")
        }
        nodes.append(node)
        pointers.append(pointer)
        return nodes.count - 1
    }

    mutating func compile(_ schema: JSONValue, pointer: String, depth: Int) throws(SchemaError) -> Int {
        guard depth < Self.maximumDepth else {
            throw SchemaError(pointer: pointer, problem: "nested deeper than \(Self.maximumDepth) levels")
        }
        guard case .object(let keywords) = schema else {
            throw SchemaError(
                pointer: pointer, problem: "a schema must be an object (boolean schemas are not supported)")
        }
        let structural = Set(keywords.keys).subtracting(Self.annotations)
        func only(_ allowed: Set<String>, because: String) throws(SchemaError) {
            if let extra = structural.subtracting(allowed).sorted().first {
                throw SchemaError(
                    pointer: pointer + "/" + escape(extra), problem: "\(extra) cannot be combined with \(because)")
            }
        }
        if let ref = keywords["$ref"] {
            try only(["$ref"], because: "$ref")
            return try reference(ref, pointer: pointer + "/$ref", depth: depth)
        }
        if let value = keywords["const"] {
            try only(["const", "type"], because: "const")
            return try add(.literals([literal(value)]), pointer)
        }
        if let values = keywords["enum"] {
            try only(["enum", "type"], because: "enum")
            guard case .array(let list) = values, !list.isEmpty else {
                throw SchemaError(pointer: pointer + "/enum", problem: "enum must be a non-empty array")
            }
            return try add(.literals(list.map(literal)), pointer)
        }
        for combinator in ["anyOf", "oneOf"] {
            guard let value = keywords[combinator] else { continue }
            try only([combinator], because: combinator + " (put the other keywords inside its alternatives)")
            guard case .array(let list) = value, !list.isEmpty else {
                throw SchemaError(
                    pointer: pointer + "/" + combinator, problem: "\(combinator) must be a non-empty array")
            }
            var options: [Int] = []
            for (i, option) in list.enumerated() {
                options.append(try compile(option, pointer: pointer + "/\(combinator)/\(i)", depth: depth + 1))
            }
            return try add(.anyOf(options), pointer)
        }
        guard let type = keywords["type"] else {
            throw SchemaError(
                pointer: pointer,
                problem: "no type, enum, const, anyOf, oneOf or $ref (schemas that accept any value are not supported)")
        }
        switch type {
        case .string(let name):
            return try typed(name, keywords, pointer: pointer, depth: depth)
        case .array(let names) where !names.isEmpty:
            var options: [Int] = []
            for (i, name) in names.enumerated() {
                guard case .string(let name) = name else {
                    throw SchemaError(pointer: pointer + "/type/\(i)", problem: "a type name must be a string")
                }
                options.append(try typed(name, keywords, pointer: pointer, depth: depth, among: names.count))
            }
            return try add(.anyOf(options), pointer)
        default:
            throw SchemaError(pointer: pointer + "/type", problem: "type must be a type name or a list of them")
        }
    }

    /// The node of one `type`; `among` > 1 when the schema lists several types (keywords of the others are allowed).
    mutating func typed(_ type: String, _ keywords: [String: JSONValue], pointer: String, depth: Int, among: Int = 1)
        throws(SchemaError) -> Int
    {
        guard let own = Self.keywordsByType[type] else {
            throw SchemaError(pointer: pointer + "/type", problem: "unknown type \(type.debugDescription)")
        }
        let known = Self.annotations.union(["type"]).union(own)
        for key in keywords.keys.sorted() where !known.contains(key) {
            let elsewhere = Self.keywordsByType.values.contains { $0.contains(key) }
            if among > 1 && elsewhere { continue }
            throw SchemaError(
                pointer: pointer + "/" + escape(key),
                problem: elsewhere ? "\(key) does not apply to type \(type)" : "the keyword \(key) is not supported")
        }
        switch type {
        case "object": return try object(keywords, pointer: pointer, depth: depth)
        case "array":
            let items = keywords["items"].map { $0 } ?? .null
            guard case .object = items else {
                throw SchemaError(pointer: pointer + "/items", problem: "an array needs an items schema (an object)")
            }
            let minItems = try count(keywords, "minItems", pointer) ?? 0
            let maxItems = try count(keywords, "maxItems", pointer)
            if let maxItems, maxItems < minItems {
                throw SchemaError(pointer: pointer + "/maxItems", problem: "maxItems is below minItems")
            }
            let node = try add(.alias(-1), pointer)
            let item = try compile(items, pointer: pointer + "/items", depth: depth + 1)
            nodes[node] = .array(items: item, minItems: minItems, maxItems: maxItems)
            return node
        case "string":
            let minLength = try count(keywords, "minLength", pointer) ?? 0
            let maxLength = try count(keywords, "maxLength", pointer)
            if let maxLength, maxLength < minLength {
                throw SchemaError(pointer: pointer + "/maxLength", problem: "maxLength is below minLength")
            }
            var pattern: SimplePattern?
            if let format = keywords["format"] {
                guard format == .string("date") else {
                    throw SchemaError(pointer: pointer + "/format", problem: "only format \"date\" is supported")
                }
                do {
                    pattern = try SimplePattern(SimplePattern.dateSource)
                } catch {
                    throw SchemaError(pointer: pointer + "/format", problem: error.description)
                }
            }
            if let source = keywords["pattern"] {
                guard pattern == nil else {
                    throw SchemaError(pointer: pointer + "/pattern", problem: "pattern cannot be combined with format")
                }
                guard case .string(let text) = source else {
                    throw SchemaError(pointer: pointer + "/pattern", problem: "pattern must be a string")
                }
                do {
                    pattern = try SimplePattern(text)
                } catch {
                    throw SchemaError(pointer: pointer + "/pattern", problem: error.description)
                }
            }
            return try add(.string(StringRule(minLength: minLength, maxLength: maxLength, pattern: pattern)), pointer)
        case "integer", "number":
            let minimum = try bound(keywords, "minimum", pointer)
            let maximum = try bound(keywords, "maximum", pointer)
            if let minimum, let maximum, maximum < minimum {
                throw SchemaError(pointer: pointer + "/maximum", problem: "maximum is below minimum")
            }
            if type == "integer", let minimum, let maximum, minimum.rounded(.up) > maximum {
                throw SchemaError(pointer: pointer + "/maximum", problem: "no integer lies between minimum and maximum")
            }
            return try add(.number(NumberRule(integer: type == "integer", minimum: minimum, maximum: maximum)), pointer)
        case "boolean": return try add(.literals([Array("true".utf8), Array("false".utf8)]), pointer)
        default: return try add(.literals([Array("null".utf8)]), pointer)
        }
    }

    mutating func object(_ keywords: [String: JSONValue], pointer: String, depth: Int) throws(SchemaError) -> Int {
        var properties: [String: JSONValue] = [:]
        if let value = keywords["properties"] {
            guard case .object(let map) = value else {
                throw SchemaError(pointer: pointer + "/properties", problem: "properties must be an object")
            }
            properties = map
        }
        var required: [String] = []
        if let value = keywords["required"] {
            guard case .array(let list) = value else {
                throw SchemaError(pointer: pointer + "/required", problem: "required must be an array of names")
            }
            for (i, item) in list.enumerated() {
                guard case .string(let name) = item, properties[name] != nil, !required.contains(name) else {
                    throw SchemaError(
                        pointer: pointer + "/required/\(i)",
                        problem: "each required name must be a property of properties, listed once")
                }
                required.append(name)
            }
        }
        if let additional = keywords["additionalProperties"] {
            guard case .bool = additional else {
                throw SchemaError(
                    pointer: pointer + "/additionalProperties",
                    problem: "only true or false is supported (no other property is ever generated)")
            }
        }
        var order = required + properties.keys.filter { !required.contains($0) }.sorted()
        if let value = keywords["propertyOrdering"] {
            guard case .array(let list) = value, Set(list.compactMap(\.stringValue)) == Set(order),
                list.count == order.count
            else {
                throw SchemaError(
                    pointer: pointer + "/propertyOrdering", problem: "must list every property exactly once")
            }
            order = list.compactMap(\.stringValue)
        }
        let node = try add(.alias(-1), pointer)
        var compiled: [CompiledSchema.Property] = []
        for name in order {
            guard let schema = properties[name] else { continue }
            let child = try compile(schema, pointer: pointer + "/properties/" + escape(name), depth: depth + 1)
            compiled.append(
                CompiledSchema.Property(
                    key: Array(JSONValue.string(name).jsonString.utf8.dropFirst()), node: child,
                    required: required.contains(name)))
        }
        nodes[node] = .object(compiled)
        return node
    }

    mutating func reference(_ value: JSONValue, pointer: String, depth: Int) throws(SchemaError) -> Int {
        guard case .string(let ref) = value else {
            throw SchemaError(pointer: pointer, problem: "$ref must be a string")
        }
        if let known = refs[ref] { return known }
        var target = root
        var targetPointer = ""
        if ref != "#" {
            let parts = ref.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[0] == "#", parts[1] == "$defs" || parts[1] == "definitions",
                let found = root[parts[1]]?[unescape(parts[2])]
            else {
                throw SchemaError(
                    pointer: pointer, problem: "only references to #/$defs/NAME (present in the schema) are supported")
            }
            target = found
            targetPointer = "/" + parts[1] + "/" + parts[2]
        }
        let node = try add(.alias(-1), pointer)
        refs[ref] = node
        nodes[node] = .alias(try compile(target, pointer: targetPointer, depth: depth + 1))
        return node
    }

    /// Every path through `$ref` and `anyOf` must reach a value: a cycle that consumes no input is an error.
    func checkProgress() throws(SchemaError) {
        for start in nodes.indices {
            var seen: Set<Int> = []
            var stack = [start]
            while let node = stack.popLast() {
                let next: [Int]
                switch nodes[node] {
                case .alias(let target): next = [target]
                case .anyOf(let options): next = options
                default: next = []
                }
                for n in next {
                    if n == start {
                        throw SchemaError(
                            pointer: pointers[start], problem: "a $ref/anyOf cycle that never reaches a value")
                    }
                    if seen.insert(n).inserted { stack.append(n) }
                }
            }
        }
    }

    /// `CompiledSchema.alternatives`, each node's list made once from its children's (so `anyOf`s of the same
    /// `$ref`s nested n deep cost n lists, not a product of paths), without recursion. The `$ref`/`anyOf` graph is
    /// acyclic (`checkProgress`). A node past `CompiledSchema.maximumAlternatives` is an error naming the budget.
    func alternatives() throws(SchemaError) -> [[Int]] {
        var result = [[Int]?](repeating: nil, count: nodes.count)
        for first in nodes.indices where result[first] == nil {
            var stack: [(node: Int, expanded: Bool)] = [(first, false)]
            while let (node, expanded) = stack.popLast() {
                guard result[node] == nil else { continue }
                let children: [Int]
                switch nodes[node] {
                case .alias(let target): children = [target]
                case .anyOf(let options): children = options
                default:
                    result[node] = [node]
                    continue
                }
                if !expanded {
                    stack.append((node, true))
                    stack += children.filter { result[$0] == nil }.map { ($0, false) }
                    continue
                }
                var seen = Set<Int>()
                var list: [Int] = []
                for child in children {
                    for value in result[child] ?? [] where seen.insert(value).inserted { list.append(value) }
                }
                guard list.count <= CompiledSchema.maximumAlternatives else {
                    throw SchemaError(
                        pointer: pointers[node],
                        problem: "stands for \(list.count) different alternatives once $ref and anyOf are followed; "
                            + "the work budget is \(CompiledSchema.maximumAlternatives) "
                            + "(CompiledSchema.maximumAlternatives): merge alternatives or share them through $defs")
                }
                result[node] = list
            }
        }
        return result.map { $0 ?? [] }
    }

    func literal(_ value: JSONValue) -> [UInt8] { Array(value.jsonString.utf8) }

    func count(_ keywords: [String: JSONValue], _ key: String, _ pointer: String) throws(SchemaError) -> Int? {
        guard let value = keywords[key] else { return nil }
        guard case .number(let n) = value, n >= 0, n <= 1_000_000, n == n.rounded() else {
            throw SchemaError(pointer: pointer + "/" + key, problem: "\(key) must be a whole number from 0 to 1000000")
        }
        return Int(n)
    }

    func bound(_ keywords: [String: JSONValue], _ key: String, _ pointer: String) throws(SchemaError) -> Double? {
        guard let value = keywords[key] else { return nil }
        guard case .number(let n) = value, abs(n) <= 1e15 else {
            throw SchemaError(pointer: pointer + "/" + key, problem: "\(key) must be a number within ±1e15")
        }
        return n
    }

    func escape(_ key: String) -> String {
        key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    func unescape(_ key: String) -> String {
        key.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }
}
