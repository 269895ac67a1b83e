import SanadCore

/// A JSON Schema compiled for generation: a graph of nodes, each a kind of JSON value, referred to by index (so
/// `$ref` recursion is an edge back, not a copy). `JSONMatcher` walks it byte by byte.
public struct CompiledSchema: Sendable {
    /// One property of an object node, in schema order. `key` is the key's JSON text after the opening quote, the
    /// closing quote included.
    struct Property: Sendable {
        var key: [UInt8]
        var node: Int
        var required: Bool
    }

    /// What a value of one node may be.
    indirect enum Node: Sendable {
        /// Properties appear in schema order; required ones must, optional ones may; no others.
        case object([Property])
        case array(items: Int, minItems: Int, maxItems: Int?)
        case string(StringRule)
        case number(NumberRule)
        /// One of these exact JSON texts (enum, const, true/false, null).
        case literals([[UInt8]])
        /// Any of these nodes (anyOf, oneOf, a list of types).
        case anyOf([Int])
        /// The same as another node (a `$ref`).
        case alias(Int)
    }

    var nodes: [Node]
    var root: Int
    /// For each node, the distinct value nodes (object, array, string, number, literals) it stands for once every
    /// `$ref` and `anyOf` is followed, in order: a shared definition appears once however many paths reach it.
    var alternatives: [[Int]]
    /// The most nodes one schema may compile to.
    static let maximumNodes = 4096
    /// The work budget of one value: the most distinct alternatives a node may stand for (`alternatives`). The
    /// matcher starts each of them for a value's first byte; a schema past it is refused when compiled.
    public static let maximumAlternatives = 256
}

/// A string's limits: length in Unicode scalars, and an optional pattern (ASCII only) it must match whole.
struct StringRule: Sendable, Hashable {
    var minLength: Int
    var maxLength: Int?
    var pattern: SimplePattern?
}

/// A number's kind and bounds (inclusive).
struct NumberRule: Sendable, Hashable {
    var integer: Bool
    var minimum: Double?
    var maximum: Double?
}
