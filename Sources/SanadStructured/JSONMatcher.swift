/// A string being written: its length so far (Unicode scalars), the escape or UTF-8 sequence in progress, and the
/// pattern automaton's states.
struct StringProgress: Hashable, Sendable {
    var length = 0
    /// 0: none; 1: after `\`; 2…5: after `\u` and that many hex digits minus 2.
    var escape: UInt8 = 0
    /// Continuation bytes still due, and the range the next one must lie in.
    var continuation: UInt8 = 0
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    var pattern = SimplePattern.Bits()
}

/// Where a matcher thread is, innermost last.
enum Frame: Hashable, Sendable {
    /// A value of the node starts with the next byte.
    case value(Int)
    /// After `{` or `,`: a key of property `next` or later, or (`afterComma` false) the closing brace.
    case keyOrEnd(node: Int, next: Int, afterComma: Bool)
    case key(node: Int, property: Int, offset: Int)
    case colon(node: Int, property: Int)
    case propertyValue(node: Int, property: Int)
    case afterProperty(node: Int, property: Int)
    case arrayFirst(node: Int)
    /// After `count` items (the last one just ended).
    case afterItem(node: Int, count: Int)
    case nextItem(node: Int, count: Int)
    case string(node: Int, StringProgress)
    case number(node: Int, NumberProgress)
    case literal(node: Int, index: Int, offset: Int)
}

/// One way the bytes so far can be read: a stack of frames, and whether the last byte was whitespace.
struct MatchThread: Hashable, Sendable {
    var stack: [Frame]
    var space = false
}

/// An incremental matcher of one JSON document against a `CompiledSchema`, byte by byte: `advanced(by:)` gives the
/// state after a byte or nil when the byte cannot continue any valid document; `isComplete` says whether the bytes
/// so far are a whole valid document.
///
/// Layout rules (so a model cannot loop on blanks): no whitespace before the document or after it, at most one
/// whitespace byte between two JSON tokens, none inside numbers and literals. Nesting is limited to
/// `maximumStackDepth` frames and the alternatives followed at once (anyOf, enum, optional properties) to
/// `maximumThreads`; past either the byte is refused (never accepted unchecked).
public struct JSONMatcher: Sendable, Hashable {
    public static let maximumStackDepth = 96
    public static let maximumThreads = 64

    let schema: CompiledSchema.Nodes
    var threads: [MatchThread]

    public init(_ compiled: CompiledSchema) {
        schema = CompiledSchema.Nodes(compiled.nodes, alternatives: compiled.alternatives)
        threads = [MatchThread(stack: [.value(compiled.root)])]
    }

    public static func == (a: JSONMatcher, b: JSONMatcher) -> Bool { a.threads == b.threads }
    public func hash(into hasher: inout Hasher) { hasher.combine(threads) }

    public var isComplete: Bool {
        threads.contains { thread in
            switch thread.stack.count {
            case 0: return true
            case 1:
                if case .number(let node, let progress) = thread.stack[0], case .number(let rule) = schema[node] {
                    return progress.isComplete(rule)
                }
                return false
            default: return false
            }
        }
    }

    /// Whether the document is complete and no byte can follow (then only the end may come).
    public var isFinished: Bool { threads.allSatisfy(\.stack.isEmpty) }

    public func advanced(by byte: UInt8) -> JSONMatcher? {
        if let next = advancedWithinString(byte) { return next.threads.isEmpty ? nil : next }
        var out: [MatchThread] = []
        for thread in threads { step(thread, byte, into: &out, depth: 0) }
        if out.isEmpty { return nil }
        var next = self
        if out.count > 1 {
            var seen = Set<MatchThread>()
            out = out.filter { seen.insert($0).inserted }
        }
        if out.count > Self.maximumThreads { out.removeLast(out.count - Self.maximumThreads) }
        next.threads = out
        return next
    }

    /// Inside a string with one reading followed: the string's rule and progress, for walking many continuations
    /// without copying the matcher (`VocabularyTrie`); nil otherwise.
    var stringContext: (node: Int, rule: StringRule, progress: StringProgress)? {
        guard threads.count == 1, let top = threads[0].stack.last, case .string(let node, let progress) = top,
            case .string(let rule) = schema[node]
        else { return nil }
        return (node, rule, progress)
    }

    /// This matcher with the string of `stringContext` at `progress` (the continuation walked so far).
    func withString(_ progress: StringProgress) -> JSONMatcher {
        guard let top = threads.first?.stack.last, case .string(let node, _) = top else { return self }
        var next = self
        next.threads[0].stack[next.threads[0].stack.count - 1] = .string(node: node, progress)
        next.threads[0].space = false
        return next
    }

    /// The common case inside a string, when one reading is followed: the byte only updates the string's progress
    /// (no closing quote, no fork), without the general step's allocations. Nil when the case does not apply; a
    /// matcher without threads when the byte is refused.
    private func advancedWithinString(_ byte: UInt8) -> JSONMatcher? {
        guard threads.count == 1, let top = threads[0].stack.last, case .string(let node, let progress) = top,
            case .string(let rule) = schema[node],
            byte != UInt8(ascii: "\"") || progress.escape != 0 || progress.continuation != 0
        else { return nil }
        var next = self
        guard let p = Self.stringStep(progress, rule, byte) else {
            next.threads = []
            return next
        }
        next.threads[0].stack[next.threads[0].stack.count - 1] = .string(node: node, p)
        next.threads[0].space = false
        return next
    }

    public func advanced(by bytes: some Sequence<UInt8>) -> JSONMatcher? {
        var state = self
        for b in bytes {
            guard let next = state.advanced(by: b) else { return nil }
            state = next
        }
        return state
    }

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D }

    private func push(_ thread: MatchThread, _ frame: Frame, into out: inout [MatchThread]) {
        guard thread.stack.count < Self.maximumStackDepth else { return }
        var t = thread
        t.stack.append(frame)
        out.append(t)
    }

    /// `thread` with its top frame replaced by `frame` (or popped when nil).
    private func replacingTop(_ thread: MatchThread, _ frame: Frame?) -> MatchThread {
        var t = thread
        t.stack.removeLast()
        if let frame { t.stack.append(frame) }
        t.space = false
        return t
    }

    private func step(_ thread: MatchThread, _ b: UInt8, into out: inout [MatchThread], depth: Int) {
        guard let top = thread.stack.last, depth < 64 else { return }
        let space = Self.isSpace(b)
        // Between tokens: one whitespace byte is allowed.
        func takeSpace() -> Bool {
            guard space else { return false }
            if !thread.space {
                var t = thread
                t.space = true
                out.append(t)
            }
            return true
        }
        switch top {
        case .value(let node):
            var t = thread
            t.stack.removeLast()
            t.space = false
            start(node, t, b, into: &out)
        case .keyOrEnd(let node, let next, let afterComma):
            if takeSpace() { return }
            guard case .object(let properties) = schema[node] else { return }
            if b == UInt8(ascii: "\"") {
                for j in next..<properties.count {
                    out.append(replacingTop(thread, .key(node: node, property: j, offset: 0)))
                    if properties[j].required { break }
                }
            } else if b == UInt8(ascii: "}") && !afterComma && !properties[next...].contains(where: \.required) {
                out.append(replacingTop(thread, nil))
            }
        case .key(let node, let property, let offset):
            guard case .object(let properties) = schema[node] else { return }
            let key = properties[property].key
            guard key[offset] == b else { return }
            out.append(
                replacingTop(
                    thread,
                    offset + 1 == key.count
                        ? .colon(node: node, property: property)
                        : .key(node: node, property: property, offset: offset + 1)))
        case .colon(let node, let property):
            if takeSpace() { return }
            if b == UInt8(ascii: ":") {
                out.append(replacingTop(thread, .propertyValue(node: node, property: property)))
            }
        case .propertyValue(let node, let property):
            if takeSpace() { return }
            guard case .object(let properties) = schema[node] else { return }
            var t = replacingTop(thread, .afterProperty(node: node, property: property))
            t.stack.append(.value(properties[property].node))
            guard t.stack.count <= Self.maximumStackDepth else { return }
            step(t, b, into: &out, depth: depth + 1)
        case .afterProperty(let node, let property):
            if takeSpace() { return }
            guard case .object(let properties) = schema[node] else { return }
            if b == UInt8(ascii: ","), property + 1 < properties.count {
                out.append(replacingTop(thread, .keyOrEnd(node: node, next: property + 1, afterComma: true)))
            } else if b == UInt8(ascii: "}"), !properties[(property + 1)...].contains(where: \.required) {
                out.append(replacingTop(thread, nil))
            }
        case .arrayFirst(let node):
            if takeSpace() { return }
            guard case .array(let items, let minItems, let maxItems) = schema[node] else { return }
            if b == UInt8(ascii: "]") {
                if minItems == 0 { out.append(replacingTop(thread, nil)) }
                return
            }
            guard maxItems != 0 else { return }
            nextItem(thread, node: node, items: items, count: 1, b, into: &out, depth: depth)
        case .afterItem(let node, let count):
            if takeSpace() { return }
            guard case .array(_, let minItems, let maxItems) = schema[node] else { return }
            if b == UInt8(ascii: ","), maxItems.map({ count < $0 }) ?? true {
                out.append(replacingTop(thread, .nextItem(node: node, count: count)))
            } else if b == UInt8(ascii: "]"), count >= minItems {
                out.append(replacingTop(thread, nil))
            }
        case .nextItem(let node, let count):
            if takeSpace() { return }
            guard case .array(let items, let minItems, let maxItems) = schema[node] else { return }
            // Counts past both bounds behave alike; clamping keeps the states few.
            let cap = max(minItems, maxItems ?? minItems) + 1
            nextItem(thread, node: node, items: items, count: min(count + 1, cap), b, into: &out, depth: depth)
        case .string(let node, let progress):
            guard case .string(let rule) = schema[node] else { return }
            if b == UInt8(ascii: "\""), progress.escape == 0, progress.continuation == 0 {
                if progress.length >= rule.minLength, rule.pattern.map({ $0.isMatch(progress.pattern) }) ?? true {
                    out.append(replacingTop(thread, nil))
                }
                return
            }
            if let next = Self.stringStep(progress, rule, b) {
                out.append(replacingTop(thread, .string(node: node, next)))
            }
        case .number(let node, let progress):
            guard case .number(let rule) = schema[node] else { return }
            if let next = progress.appending(b, rule) {
                out.append(replacingTop(thread, .number(node: node, next)))
            } else if progress.isComplete(rule) {
                // The number ended before this byte: the enclosing frame reads it.
                step(replacingTop(thread, nil), b, into: &out, depth: depth + 1)
            }
        case .literal(let node, let index, let offset):
            guard case .literals(let texts) = schema[node], texts[index][offset] == b else { return }
            let done = offset + 1 == texts[index].count
            out.append(replacingTop(thread, done ? nil : .literal(node: node, index: index, offset: offset + 1)))
        }
    }

    private func nextItem(
        _ thread: MatchThread, node: Int, items: Int, count: Int, _ b: UInt8, into out: inout [MatchThread], depth: Int
    ) {
        var t = replacingTop(thread, .afterItem(node: node, count: count))
        t.stack.append(.value(items))
        guard t.stack.count <= Self.maximumStackDepth else { return }
        step(t, b, into: &out, depth: depth + 1)
    }

    /// The threads for a value of `node` starting with byte `b`: each of its alternatives once (precomputed, so
    /// nested `anyOf`s over shared `$ref`s cost their distinct targets, never the product of their paths).
    private func start(_ node: Int, _ thread: MatchThread, _ b: UInt8, into out: inout [MatchThread]) {
        for value in schema.alternatives[node] { startValue(value, thread, b, into: &out) }
    }

    /// The threads for a value of `node` (neither a `$ref` nor an `anyOf`) starting with byte `b`.
    private func startValue(_ node: Int, _ thread: MatchThread, _ b: UInt8, into out: inout [MatchThread]) {
        switch schema[node] {
        case .alias, .anyOf: return
        case .object:
            if b == UInt8(ascii: "{") { push(thread, .keyOrEnd(node: node, next: 0, afterComma: false), into: &out) }
        case .array:
            if b == UInt8(ascii: "[") { push(thread, .arrayFirst(node: node), into: &out) }
        case .string(let rule):
            if b == UInt8(ascii: "\"") {
                var progress = StringProgress()
                progress.pattern = rule.pattern?.start ?? SimplePattern.Bits()
                push(thread, .string(node: node, progress), into: &out)
            }
        case .number(let rule):
            if let progress = NumberProgress().appending(b, rule) {
                push(thread, .number(node: node, progress), into: &out)
            }
        case .literals(let texts):
            for (i, text) in texts.enumerated() where text.first == b {
                if text.count == 1 {
                    out.append(thread)
                } else {
                    push(thread, .literal(node: node, index: i, offset: 1), into: &out)
                }
            }
        }
    }

    /// A string's progress after byte `b` (not an unescaped closing quote), or nil.
    static func stringStep(_ p: StringProgress, _ rule: StringRule, _ b: UInt8) -> StringProgress? {
        var p = p
        if let pattern = rule.pattern {
            // Patterns match printable ASCII without escapes.
            let next = pattern.step(p.pattern, b)
            guard !next.isEmpty, b != UInt8(ascii: "\\") else { return nil }
            p.pattern = next
            return counted(p, rule)
        }
        if p.continuation > 0 {
            guard b >= p.low && b <= p.high else { return nil }
            p.continuation -= 1
            p.low = 0x80
            p.high = 0xBF
            return p
        }
        switch p.escape {
        case 0:
            if b == UInt8(ascii: "\\") {
                guard rule.maxLength.map({ p.length < $0 }) ?? true else { return nil }
                p.escape = 1
                return p
            }
            switch b {
            case 0x20...0x7F: return counted(p, rule)
            case 0xC2...0xDF: p.continuation = 1
            case 0xE0:
                p.continuation = 2
                p.low = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: p.continuation = 2
            case 0xED:
                p.continuation = 2
                p.high = 0x9F
            case 0xF0:
                p.continuation = 3
                p.low = 0x90
            case 0xF1...0xF3: p.continuation = 3
            case 0xF4:
                p.continuation = 3
                p.high = 0x8F
            default: return nil
            }
            return counted(p, rule)
        case 1:
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                p.escape = 0
                return counted(p, rule)
            case UInt8(ascii: "u"):
                p.escape = 2
                return p
            default: return nil
            }
        default:
            let hex = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
            // No surrogate escapes (\uD800–\uDFFF): a lone half is not a character.
            guard hex, !(p.escape == 2 && (b == UInt8(ascii: "d") || b == UInt8(ascii: "D"))) else { return nil }
            p.escape += 1
            if p.escape == 6 {
                p.escape = 0
                return counted(p, rule)
            }
            return p
        }
    }

    /// `p` with one more character, or nil past `maxLength`. Lengths past both bounds are clamped.
    private static func counted(_ p: StringProgress, _ rule: StringRule) -> StringProgress? {
        var p = p
        if let maxLength = rule.maxLength, p.length >= maxLength { return nil }
        p.length = min(p.length + 1, max(rule.minLength, rule.maxLength ?? 0))
        return p
    }
}

extension CompiledSchema {
    /// The nodes, shared by every copy of a matcher.
    final class Nodes: Sendable {
        let nodes: [Node]
        /// `CompiledSchema.alternatives`.
        let alternatives: [[Int]]
        init(_ nodes: [Node], alternatives: [[Int]]) {
            self.nodes = nodes
            self.alternatives = alternatives
        }
        subscript(_ i: Int) -> Node { nodes[i] }
    }
}
