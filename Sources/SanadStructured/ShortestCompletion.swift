/// The fewest bytes that finish a JSON document from a matcher's state, when every byte is written as a token of
/// its own: what `SchemaMask` keeps within a generation's token budget. A byte that is no single token of the
/// vocabulary (`singleByte`) is never counted on, so the count is a number of tokens that can really be generated.
///
/// The count is exact for the matcher's rules (no whitespace, properties in schema order, required ones only, the
/// fewest array items, the shortest alternative, string and number bounds, patterns): the first byte of a shortest
/// completion leads to a state whose count is one less, so a generation that keeps the count within its budget can
/// always finish. `unreachable` stands for "no completion" (or one past the work bounds).
final class CompletionCost {
    static let unreachable = Int.max / 8
    /// The most pattern states (set, length) one search visits.
    static let patternSearchLimit = 20_000

    private let nodes: [CompiledSchema.Node]
    private let singleByte: [Bool]
    /// Whether every byte is a token of its own (byte-level vocabularies).
    let everyByteIsAToken: Bool
    /// A character that fills a string up to its `minLength`: the first of a few printable bytes that are tokens.
    private let filler: UInt8?
    /// The fewest bytes of a whole value of each node.
    private(set) var value: [Int]
    private var numbers: [NumberKey: Int] = [:]
    private var patterns: [PatternKey: Int] = [:]

    private struct NumberKey: Hashable {
        var node: Int
        var text: [UInt8]
    }

    private struct PatternKey: Hashable {
        var node: Int
        var states: SimplePattern.Bits
        var length: Int
    }

    /// `singleByte[b]`: whether byte `b` is a whole token (all 256 when nil).
    init(_ nodes: [CompiledSchema.Node], singleByte: [Bool]? = nil) {
        self.nodes = nodes
        let single = singleByte ?? [Bool](repeating: true, count: 256)
        self.singleByte = single
        everyByteIsAToken = !single.contains(false)
        filler = Array("a0 x-_.".utf8).first { single[Int($0)] }
        value = [Int](repeating: Self.unreachable, count: nodes.count)
        // Fixed point of the per-node minimum (recursive schemas through `$ref`): costs only fall, and each pass
        // settles at least one more level of the shortest values.
        for _ in 0...nodes.count {
            var changed = false
            for i in self.nodes.indices {
                let c = valueCost(i)
                if c < value[i] {
                    value[i] = c
                    changed = true
                }
            }
            if !changed { break }
        }
    }

    // MARK: Matcher states

    /// The fewest bytes that complete the document from `matcher` (0 when it is complete).
    func cost(_ matcher: JSONMatcher) -> Int {
        var best = Self.unreachable
        for thread in matcher.threads { best = min(best, cost(thread.stack[...])) }
        return best
    }

    /// The bytes that finish `stack`'s frames, innermost first.
    func cost(_ stack: ArraySlice<Frame>) -> Int {
        var total = 0
        for frame in stack { total = add(total, cost(frame)) }
        return total
    }

    private func cost(_ frame: Frame) -> Int {
        switch frame {
        case .value(let node): return value[node]
        case .keyOrEnd(let node, let next, let afterComma):
            guard case .object(let properties) = nodes[node] else { return Self.unreachable }
            let required = properties[next...].filter(\.required)
            if !required.isEmpty {
                return add(required.reduce(0) { add($0, property($1)) }, required.count)  // commas and `}`
            }
            guard afterComma else { return 1 }
            return add(properties[next...].map(property).min() ?? Self.unreachable, 1)
        case .key(let node, let index, let offset):
            guard case .object(let properties) = nodes[node] else { return Self.unreachable }
            let p = properties[index]
            let rest = available(p.key[offset...]) ? p.key.count - offset : Self.unreachable
            return add(add(rest, 1), add(value[p.node], afterProperty(node, index)))
        case .colon(let node, let index):
            guard case .object(let properties) = nodes[node] else { return Self.unreachable }
            return add(1, add(value[properties[index].node], afterProperty(node, index)))
        case .propertyValue(let node, let index):
            guard case .object(let properties) = nodes[node] else { return Self.unreachable }
            return add(value[properties[index].node], afterProperty(node, index))
        case .afterProperty(let node, let index): return afterProperty(node, index)
        case .arrayFirst(let node):
            guard case .array(let items, let minItems, _) = nodes[node] else { return Self.unreachable }
            return minItems == 0 ? 1 : add(times(minItems, value[items]), minItems)  // commas and `]`
        case .afterItem(let node, let count):
            guard case .array(let items, let minItems, _) = nodes[node] else { return Self.unreachable }
            return add(times(max(0, minItems - count), add(1, value[items])), 1)
        case .nextItem(let node, let count):
            guard case .array(let items, let minItems, _) = nodes[node] else { return Self.unreachable }
            return add(add(value[items], times(max(0, minItems - count - 1), add(1, value[items]))), 1)
        case .string(let node, let progress):
            guard case .string(let rule) = nodes[node] else { return Self.unreachable }
            return add(characters(node, rule, progress), 1)
        case .number(let node, let progress):
            guard case .number(let rule) = nodes[node] else { return Self.unreachable }
            return number(node, progress, rule)
        case .literal(let node, let index, let offset):
            guard case .literals(let texts) = nodes[node] else { return Self.unreachable }
            return available(texts[index][offset...]) ? texts[index].count - offset : Self.unreachable
        }
    }

    // MARK: Values

    private func valueCost(_ node: Int) -> Int {
        switch nodes[node] {
        case .object(let properties):
            let required = properties.filter(\.required)
            let members = required.reduce(0) { add($0, property($1)) }
            return add(add(2, members), max(0, required.count - 1))
        case .array(let items, let minItems, _):
            return minItems == 0 ? 2 : add(add(2, times(minItems, value[items])), minItems - 1)
        case .string(let rule):
            var start = StringProgress()
            start.pattern = rule.pattern?.start ?? SimplePattern.Bits()
            return add(2, characters(node, rule, start))
        case .number(let rule):
            var best = Self.unreachable
            for b in Array("-0123456789".utf8) where singleByte[Int(b)] {
                if let p = NumberProgress().appending(b, rule) { best = min(best, add(1, number(node, p, rule))) }
            }
            return best
        case .literals(let texts):
            return texts.filter { available($0[...]) }.map(\.count).min() ?? Self.unreachable
        case .anyOf(let options): return options.map { value[$0] }.min() ?? Self.unreachable
        case .alias(let target): return value[target]
        }
    }

    /// `"KEY":VALUE`, the shortest value.
    private func property(_ p: CompiledSchema.Property) -> Int {
        guard available(p.key[...]) else { return Self.unreachable }
        return add(p.key.count + 2, value[p.node])
    }

    /// After property `index` of object `node`: a comma and each later required property, then `}`.
    private func afterProperty(_ node: Int, _ index: Int) -> Int {
        guard case .object(let properties) = nodes[node] else { return Self.unreachable }
        var total = 1
        for p in properties[(index + 1)...] where p.required { total = add(total, add(1, property(p))) }
        return total
    }

    // MARK: Strings

    /// The bytes that end the character in progress and reach the string's minimum (or its pattern's match); the
    /// closing quote apart.
    private func characters(_ node: Int, _ rule: StringRule, _ p: StringProgress) -> Int {
        if let pattern = rule.pattern { return patternCost(node, pattern, rule, p.pattern, p.length) }
        var partial = 0
        if p.continuation > 0 {
            // The next byte in low…high, the others in 0x80…0xBF.
            let first = (p.low...p.high).contains { singleByte[Int($0)] }
            let rest = p.continuation == 1 || (0x80...0xBF).contains { singleByte[Int($0)] }
            partial = first && rest ? Int(p.continuation) : Self.unreachable
        } else if p.escape == 1 {
            partial = Array("n\"\\/bfrt".utf8).contains { singleByte[Int($0)] } ? 1 : Self.unreachable
        } else if p.escape >= 2 {
            partial = singleByte[Int(UInt8(ascii: "0"))] ? 6 - Int(p.escape) : Self.unreachable
        }
        // An escape's character is counted when it ends.
        let need = max(0, rule.minLength - p.length - (p.escape != 0 ? 1 : 0))
        guard need > 0 else { return partial }
        return filler == nil ? Self.unreachable : add(partial, need)
    }

    /// A breadth-first search over the pattern's state sets (and the length, for `minLength` and `maxLength`).
    private func patternCost(
        _ node: Int, _ pattern: SimplePattern, _ rule: StringRule, _ states: SimplePattern.Bits, _ length: Int
    ) -> Int {
        let clamp = max(rule.minLength, rule.maxLength ?? 0)
        let key = PatternKey(node: node, states: states, length: min(length, clamp))
        if let known = patterns[key] { return known }
        let alphabet = (0x20...0x7E).map(UInt8.init).filter {
            $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && singleByte[Int($0)]
        }
        var seen: Set<PatternKey> = [key]
        var frontier = [key]
        var depth = 0
        var result = Self.unreachable
        search: while !frontier.isEmpty {
            var next: [PatternKey] = []
            for s in frontier {
                if pattern.isMatch(s.states) && s.length >= rule.minLength {
                    result = depth
                    break search
                }
                if let maxLength = rule.maxLength, s.length >= maxLength { continue }
                for b in alphabet {
                    let states = pattern.step(s.states, b)
                    guard !states.isEmpty else { continue }
                    let child = PatternKey(node: node, states: states, length: min(s.length + 1, clamp))
                    if seen.insert(child).inserted { next.append(child) }
                }
                if seen.count > Self.patternSearchLimit { break search }
            }
            frontier = next
            depth += 1
        }
        patterns[key] = result
        return result
    }

    // MARK: Numbers

    /// The fewest bytes after `progress` that make a complete number within the rule's bounds: for each length,
    /// each shape (more integer digits, then perhaps a point and fraction digits) is tried with the smallest digits
    /// that reach the lower bound, and a candidate counts only once the matcher's own rules accept it.
    private func number(_ node: Int, _ progress: NumberProgress, _ rule: NumberRule) -> Int {
        if progress.isComplete(rule) { return 0 }
        let key = NumberKey(node: node, text: progress.text)
        if let known = numbers[key] { return known }
        var result = Self.unreachable
        let limit = 2 * NumberProgress.maximumDigits + 1
        search: for length in 1...limit {
            for shape in shapes(progress, rule, length) where complete(progress, rule, shape) {
                result = length
                break search
            }
        }
        numbers[key] = result
        return result
    }

    /// Ways to append `length` bytes: `integer` more integer digits, then (`fraction` not nil) a point and that many
    /// fraction digits; digits after an existing point are `fraction` with `integer` 0 and no point written.
    private struct Shape {
        var integer: Int
        var fraction: Int?
        var pointWritten: Bool
    }

    private func shapes(_ progress: NumberProgress, _ rule: NumberRule, _ length: Int) -> [Shape] {
        let text = progress.text
        let body = text.first == UInt8(ascii: "-") ? Array(text.dropFirst()) : text
        let maxDigits = NumberProgress.maximumDigits
        if let dot = body.firstIndex(of: UInt8(ascii: ".")) {
            let fraction = body.count - dot - 1
            return fraction + length <= maxDigits ? [Shape(integer: 0, fraction: length, pointWritten: true)] : []
        }
        var result: [Shape] = []
        let whole = body.count
        func integerOK(_ m: Int) -> Bool {
            if body == [UInt8(ascii: "0")] { return m == 0 }
            return (whole > 0 || m > 0) && whole + m <= maxDigits
        }
        if integerOK(length) { result.append(Shape(integer: length, fraction: nil, pointWritten: false)) }
        if !rule.integer {
            for m in 0..<length {
                let f = length - m - 1
                if f >= 1 && f <= maxDigits && integerOK(m) {
                    result.append(Shape(integer: m, fraction: f, pointWritten: false))
                }
            }
        }
        return result
    }

    /// Whether some digits of `shape` after `progress` make a complete number: the smallest that reach the lower
    /// bound (and its neighbours, for rounding), checked with `NumberProgress` itself.
    private func complete(_ progress: NumberProgress, _ rule: NumberRule, _ shape: Shape) -> Bool {
        let text = progress.text
        let negative = text.first == UInt8(ascii: "-")
        let body = negative ? Array(text.dropFirst()) : text
        let digits = shape.integer + (shape.fraction ?? 0)
        guard digits <= 18 else { return false }
        let existingFraction = body.firstIndex(of: UInt8(ascii: ".")).map { body.count - $0 - 1 } ?? 0
        let scale = shape.pointWritten ? existingFraction + digits : (shape.fraction ?? 0)
        let prefix = Double(String(decoding: body.filter { $0 != UInt8(ascii: ".") }, as: UTF8.self)) ?? 0
        let low = rule.minimum ?? -.infinity
        let high = rule.maximum ?? .infinity
        let magnitudeLow = max(0, negative ? -high : low)
        let shift = power(digits)
        // The magnitude is (prefix × 10^digits + j) / 10^scale, j < 10^digits; no leading zero in a longer integer.
        let jLow: Double = body.isEmpty && shape.integer >= 2 ? power(digits - 1) : 0
        let jHigh = shift - 1
        let wanted = (magnitudeLow * power(scale) - prefix * shift).rounded(.up)
        let j = max(jLow, wanted.isFinite ? wanted : jLow)
        guard j <= jHigh + 1 else { return false }
        for candidate in [j, j + 1, j - 1] where candidate >= jLow && candidate <= jHigh {
            var tail = Array(String(UInt64(candidate)).utf8)
            if tail.count < digits { tail = [UInt8](repeating: UInt8(ascii: "0"), count: digits - tail.count) + tail }
            if shape.fraction != nil && !shape.pointWritten { tail.insert(UInt8(ascii: "."), at: shape.integer) }
            var p: NumberProgress? = progress
            for b in tail { p = p?.appending(b, rule) }
            if let p, p.isComplete(rule) { return true }
        }
        return false
    }

    private func power(_ n: Int) -> Double {
        var r = 1.0
        for _ in 0..<max(0, n) { r *= 10 }
        return r
    }

    // MARK: Arithmetic that saturates at `unreachable`

    private func add(_ a: Int, _ b: Int) -> Int { min(Self.unreachable, a + b) }

    private func times(_ n: Int, _ c: Int) -> Int {
        guard n > 0 else { return 0 }
        let (r, overflow) = c.multipliedReportingOverflow(by: n)
        return overflow ? Self.unreachable : min(Self.unreachable, r)
    }

    private func available(_ bytes: ArraySlice<UInt8>) -> Bool { bytes.allSatisfy { singleByte[Int($0)] } }
}

extension JSONMatcher {
    /// The fewest bytes that finish the document from here (0 when it is complete), each byte a token of its own;
    /// nil when none can. Computed afresh each time (a `SchemaConstraint` stage keeps its work between tokens).
    public var shortestCompletion: Int? {
        let cost = CompletionCost(schema.nodes).cost(self)
        return cost < CompletionCost.unreachable ? cost : nil
    }
}
