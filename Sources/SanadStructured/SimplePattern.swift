/// The regular expressions structured output supports in a string's `pattern` (and `format: date`): anchored
/// (`^…$`), over printable ASCII other than `"` and `\` (so a match needs no JSON escape), with literals, `.`,
/// classes `[a-z0-9_-]` and `[^…]`, `\d \w \s` and escaped punctuation, groups `( | )`, and `? * + {n} {n,} {n,m}`.
/// Compiled to a Thompson automaton of at most `maximumStates` states, run as a set of states.
public struct SimplePattern: Sendable, Hashable {
    /// A set of up to 128 automaton states, or of ASCII bytes.
    struct Bits: Sendable, Hashable {
        var low: UInt64 = 0
        var high: UInt64 = 0

        func contains(_ i: Int) -> Bool { i < 64 ? low & (1 << UInt64(i)) != 0 : high & (1 << UInt64(i - 64)) != 0 }
        mutating func insert(_ i: Int) {
            if i < 64 { low |= 1 << UInt64(i) } else { high |= 1 << UInt64(i - 64) }
        }
        var isEmpty: Bool { low == 0 && high == 0 }
        static func | (a: Bits, b: Bits) -> Bits { Bits(low: a.low | b.low, high: a.high | b.high) }
        static func & (a: Bits, b: Bits) -> Bits { Bits(low: a.low & b.low, high: a.high & b.high) }
        static prefix func ~ (a: Bits) -> Bits { Bits(low: ~a.low, high: ~a.high) }
    }

    enum State: Sendable, Hashable {
        case bytes(Bits, next: Int)
        case split(Int, Int)
        case match
    }

    static let maximumStates = 128
    /// Bytes a pattern may match: printable ASCII but `"` and `\`.
    static let allowed: Bits = {
        var b = Bits()
        for c in 0x20...0x7E where c != 0x22 && c != 0x5C { b.insert(c) }
        return b
    }()

    let states: [State]
    let start: Bits
    public let source: String

    /// ISO 8601 calendar date `YYYY-MM-DD` (month 01–12, day 01–31): the pattern `format: "date"` stands for.
    static let dateSource = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"

    /// Compiles `source`; the error says what is not supported.
    public init(_ source: String) throws(PatternError) {
        var parser = PatternParser(Array(source.utf8))
        let tree = try parser.parseAnchored()
        var builder = PatternBuilder()
        builder.states.append(.match)
        let first = try builder.build(tree, next: 0)
        self.states = builder.states
        self.source = source
        var start = Bits()
        Self.close(first, states: builder.states, into: &start)
        self.start = start
    }

    static func close(_ state: Int, states: [State], into set: inout Bits) {
        if set.contains(state) { return }
        set.insert(state)
        if case .split(let a, let b) = states[state] {
            close(a, states: states, into: &set)
            close(b, states: states, into: &set)
        }
    }

    /// The states after reading `byte` from `set`; empty when the byte cannot continue a match.
    func step(_ set: Bits, _ byte: UInt8) -> Bits {
        var next = Bits()
        guard byte < 128 else { return next }
        for (i, state) in states.enumerated() where set.contains(i) {
            if case .bytes(let bits, let to) = state, bits.contains(Int(byte)) {
                Self.close(to, states: states, into: &next)
            }
        }
        return next
    }

    func isMatch(_ set: Bits) -> Bool { set.contains(0) }
}

/// Why a pattern cannot be used.
public struct PatternError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// A parsed pattern.
indirect enum PatternTree {
    case bytes(SimplePattern.Bits)
    case sequence([PatternTree])
    case choice([PatternTree])
    case repeated(PatternTree, min: Int, max: Int?)
}

struct PatternParser {
    let text: [UInt8]
    var at = 0

    init(_ text: [UInt8]) { self.text = text }

    func fail(_ problem: String) -> PatternError {
        PatternError(description: "pattern \(String(decoding: text, as: UTF8.self).debugDescription): \(problem)")
    }

    mutating func parseAnchored() throws(PatternError) -> PatternTree {
        guard text.first == UInt8(ascii: "^"), text.last == UInt8(ascii: "$"), text.count >= 2,
            text.count < 2 || text[text.count - 2] != UInt8(ascii: "\\")
        else { throw fail("only anchored patterns (^…$) are supported") }
        at = 1
        let tree = try choice(depth: 0)
        guard at == text.count - 1 else { throw fail("unexpected character at offset \(at)") }
        return tree
    }

    mutating func choice(depth: Int) throws(PatternError) -> PatternTree {
        guard depth < 16 else { throw fail("groups nested deeper than 16") }
        var options = [try sequence(depth: depth)]
        while at < text.count - 1 && text[at] == UInt8(ascii: "|") {
            at += 1
            options.append(try sequence(depth: depth))
        }
        return options.count == 1 ? options[0] : .choice(options)
    }

    mutating func sequence(depth: Int) throws(PatternError) -> PatternTree {
        var items: [PatternTree] = []
        while at < text.count - 1 && text[at] != UInt8(ascii: "|") && text[at] != UInt8(ascii: ")") {
            var atom = try self.atom(depth: depth)
            if let (low, high) = try quantifier() { atom = .repeated(atom, min: low, max: high) }
            items.append(atom)
        }
        return items.count == 1 ? items[0] : .sequence(items)
    }

    mutating func number() -> Int? {
        var value: Int?
        while at < text.count, let d = digit(text[at]) {
            value = min(1000, (value ?? 0) * 10 + d)
            at += 1
        }
        return value
    }

    func digit(_ c: UInt8) -> Int? { c >= 0x30 && c <= 0x39 ? Int(c - 0x30) : nil }

    mutating func quantifier() throws(PatternError) -> (Int, Int?)? {
        guard at < text.count - 1 else { return nil }
        switch text[at] {
        case UInt8(ascii: "?"):
            at += 1
            return (0, 1)
        case UInt8(ascii: "*"):
            at += 1
            return (0, nil)
        case UInt8(ascii: "+"):
            at += 1
            return (1, nil)
        case UInt8(ascii: "{"):
            at += 1
            guard let low = number() else { throw fail("expected a count after { at offset \(at)") }
            var high: Int? = low
            if at < text.count && text[at] == UInt8(ascii: ",") {
                at += 1
                high = number()
            }
            guard at < text.count && text[at] == UInt8(ascii: "}") else { throw fail("expected } at offset \(at)") }
            at += 1
            if let high, high < low { throw fail("{\(low),\(high)} has its bounds reversed") }
            return (low, high)
        default: return nil
        }
    }

    mutating func atom(depth: Int) throws(PatternError) -> PatternTree {
        let c = text[at]
        at += 1
        switch c {
        case UInt8(ascii: "("):
            if at < text.count && text[at] == UInt8(ascii: "?") { throw fail("group modifiers (?…) are not supported") }
            let inner = try choice(depth: depth + 1)
            guard at < text.count && text[at] == UInt8(ascii: ")") else { throw fail("missing )") }
            at += 1
            return inner
        case UInt8(ascii: "["): return .bytes(try characterClass())
        case UInt8(ascii: "."): return .bytes(SimplePattern.allowed)
        case UInt8(ascii: "\\"): return .bytes(try escape())
        case UInt8(ascii: "^"), UInt8(ascii: "$"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "?"),
            UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "]"):
            throw fail("unexpected \(Character(Unicode.Scalar(c))) at offset \(at - 1)")
        default:
            return .bytes(try single(c))
        }
    }

    func single(_ c: UInt8) throws(PatternError) -> SimplePattern.Bits {
        var bits = SimplePattern.Bits()
        guard c < 128 else { throw fail("only ASCII characters are supported") }
        bits.insert(Int(c))
        guard !(bits & SimplePattern.allowed).isEmpty else {
            throw fail("the character \(Character(Unicode.Scalar(c)).debugDescription) cannot be matched")
        }
        return bits
    }

    mutating func escape() throws(PatternError) -> SimplePattern.Bits {
        guard at < text.count else { throw fail("a trailing \\") }
        let c = text[at]
        at += 1
        var bits = SimplePattern.Bits()
        switch c {
        case UInt8(ascii: "d"): for d in 0x30...0x39 { bits.insert(d) }
        case UInt8(ascii: "w"):
            for d in 0x30...0x39 { bits.insert(d) }
            for l in 0x41...0x5A {
                bits.insert(l)
                bits.insert(l + 32)
            }
            bits.insert(0x5F)
        case UInt8(ascii: "s"): bits.insert(0x20)
        default:
            let letter = (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || digit(c) != nil
            if letter { throw fail("the escape \\\(Character(Unicode.Scalar(c))) is not supported") }
            return try single(c)
        }
        return bits
    }

    mutating func characterClass() throws(PatternError) -> SimplePattern.Bits {
        var bits = SimplePattern.Bits()
        var negated = false
        if at < text.count && text[at] == UInt8(ascii: "^") {
            negated = true
            at += 1
        }
        var first = true
        while at < text.count && (text[at] != UInt8(ascii: "]") || first) {
            first = false
            var low: SimplePattern.Bits
            var lowByte: UInt8?
            if text[at] == UInt8(ascii: "\\") {
                at += 1
                low = try escape()
                let c = text[at - 1]
                if c != UInt8(ascii: "d") && c != UInt8(ascii: "w") && c != UInt8(ascii: "s") { lowByte = c }
            } else {
                lowByte = text[at]
                guard text[at] < 128 else { throw fail("only ASCII characters are supported") }
                low = SimplePattern.Bits()
                low.insert(Int(text[at]))
                at += 1
            }
            if let from = lowByte, at + 1 < text.count, text[at] == UInt8(ascii: "-"), text[at + 1] != UInt8(ascii: "]")
            {
                var to = text[at + 1]
                at += 2
                if to == UInt8(ascii: "\\"), at < text.count {
                    to = text[at]
                    at += 1
                }
                guard to >= from, to < 128 else { throw fail("a bad range in a character class") }
                for c in from...to { low.insert(Int(c)) }
            }
            bits = bits | low
        }
        guard at < text.count else { throw fail("missing ]") }
        at += 1
        let result = (negated ? ~bits : bits) & SimplePattern.allowed
        guard !result.isEmpty else { throw fail("a character class that matches nothing") }
        return result
    }
}

struct PatternBuilder {
    var states: [SimplePattern.State] = []

    mutating func add(_ state: SimplePattern.State) throws(PatternError) -> Int {
        guard states.count < SimplePattern.maximumStates else {
            throw PatternError(description: "pattern too large (more than \(SimplePattern.maximumStates) states)")
        }
        states.append(state)
        return states.count - 1
    }

    /// The start state of `tree` followed by state `next`.
    mutating func build(_ tree: PatternTree, next: Int) throws(PatternError) -> Int {
        switch tree {
        case .bytes(let bits): return try add(.bytes(bits, next: next))
        case .sequence(let items):
            var start = next
            for item in items.reversed() { start = try build(item, next: start) }
            return start
        case .choice(let options):
            var start = try build(options[options.count - 1], next: next)
            for option in options.dropLast().reversed() {
                start = try add(.split(try build(option, next: next), start))
            }
            return start
        case .repeated(let inner, let low, let high):
            var start = next
            if let high {
                for _ in low..<high { start = try add(.split(try build(inner, next: start), next)) }
                // Each optional copy may end the repetition: it leads to `next` or to the following copy.
            } else {
                let loop = try add(.split(0, next))
                let body = try build(inner, next: loop)
                states[loop] = .split(body, next)
                start = loop
            }
            for _ in 0..<low { start = try build(inner, next: start) }
            return start
        }
    }
}
