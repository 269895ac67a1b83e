import SanadCore

/// The vocabulary's token bytes as a trie, flattened into arrays: walking it with a `JSONMatcher` finds every token
/// that can come next while pruning whole subtrees at the first refused byte. End-of-generation tokens and tokens
/// without bytes are left out (a constraint decides about them apart).
final class VocabularyTrie: Sendable {
    /// Children of node `n`: edges `firstEdge[n] ..< firstEdge[n + 1]`, sorted by byte.
    let firstEdge: [Int32]
    let edgeByte: [UInt8]
    let edgeTarget: [Int32]
    /// Tokens whose bytes end at node `n`: `tokens[firstToken[n] ..< firstToken[n + 1]]`.
    let firstToken: [Int32]
    let tokens: [Int32]
    let vocabularySize: Int

    init(_ vocabulary: ConstraintVocabulary) {
        // Build with sorted token order: sibling subtrees become contiguous runs of sorted pieces.
        let ids = vocabulary.pieces.indices.filter {
            !vocabulary.pieces[$0].isEmpty && !vocabulary.endOfGeneration.contains(Int32($0))
        }.sorted { vocabulary.pieces[$0].lexicographicallyPrecedes(vocabulary.pieces[$1]) }
        var children: [[(UInt8, Int32)]] = [[]]
        var ending: [[Int32]] = [[]]
        var path: [Int32] = [0]  // path[d] = node at depth d of the previous piece
        var previous: [UInt8] = []
        for id in ids {
            let piece = vocabulary.pieces[id]
            var common = 0
            while common < min(piece.count, previous.count) && piece[common] == previous[common] { common += 1 }
            path.removeLast(path.count - common - 1)
            for depth in common..<piece.count {
                let node = Int32(children.count)
                children.append([])
                ending.append([])
                children[Int(path[depth])].append((piece[depth], node))
                path.append(node)
            }
            ending[Int(path[piece.count])].append(Int32(id))
            previous = piece
        }
        var firstEdge: [Int32] = [0]
        var edgeByte: [UInt8] = []
        var edgeTarget: [Int32] = []
        var firstToken: [Int32] = [0]
        var tokens: [Int32] = []
        for n in children.indices {
            for (b, t) in children[n] {
                edgeByte.append(b)
                edgeTarget.append(t)
            }
            firstEdge.append(Int32(edgeByte.count))
            tokens += ending[n]
            firstToken.append(Int32(tokens.count))
        }
        self.firstEdge = firstEdge
        self.edgeByte = edgeByte
        self.edgeTarget = edgeTarget
        self.firstToken = firstToken
        self.tokens = tokens
        vocabularySize = vocabulary.pieces.count
    }

    /// What the trie allows below one node from a string state, apart from what follows the string: the tokens
    /// whose bytes stay inside it, and the nodes where a closing quote ends it. Lengths count from the walk's start,
    /// so one walk serves every string with the same pattern at every length it has reached; the caller applies
    /// `minLength` and `maxLength`.
    struct StringWalk: Sendable {
        var inside: [Int32] = []
        /// For each token of `inside`: the characters it adds, plus one when it ends inside an escape (whose
        /// character must still fit).
        var need: [UInt16] = []
        /// `need` by token id (`notInside` for the others), when the walk holds much of the vocabulary: one pass
        /// over it marks them.
        var needByToken: [UInt16]?
        /// Where a closing quote ends the string, with the progress there (`length`: characters since the start).
        var exits: [(child: Int32, progress: StringProgress)] = []

        static let notInside = UInt16.max
    }

    /// The walk from the root at the start of a string without a pattern (after a token that ends with its opening
    /// quote), the state most string tokens are chosen in.
    func plainStringWalk() -> StringWalk {
        walkString(from: 0, StringRule(minLength: 0, maxLength: nil, pattern: nil), StringProgress())
    }

    /// String walks by (pattern, trie node, progress apart from its length), kept for one generation: a state inside
    /// a string recurs, from item to item of an array, at every length of a bounded string, and where a token opens
    /// a string. `plain` (`plainStringWalk`) is made once per vocabulary and shared by every generation.
    struct StringWalkCache {
        static let capacity = 64
        let plain: StringWalk
        fileprivate var walks: [StringKey: StringWalk] = [:]
        init(plain: StringWalk) { self.plain = plain }
    }

    fileprivate struct StringKey: Hashable {
        var pattern: SimplePattern?
        var trieNode: Int32
        var progress: StringProgress
    }

    /// Sets `allowed[t]` for every token whose bytes `matcher` accepts whole (and leaves the others as they are).
    func markAccepted(from matcher: JSONMatcher, cache: inout StringWalkCache, into allowed: UnsafeMutablePointer<Bool>)
    {
        markAccepted(fromNode: 0, matcher, cache: &cache, allowed)
    }

    /// Marks the tokens ending at node `n`.
    @inline(__always)
    private func markTokens(at n: Int32, _ allowed: UnsafeMutablePointer<Bool>) {
        for t in Int(firstToken[Int(n)])..<Int(firstToken[Int(n) + 1]) { allowed[Int(tokens[t])] = true }
    }

    /// The walk below `start` (whose own tokens the caller has decided about): inside a string by a string walk,
    /// elsewhere with a matcher per node until a byte opens a string.
    private func markAccepted(
        fromNode start: Int32, _ matcher: JSONMatcher, cache: inout StringWalkCache,
        _ allowed: UnsafeMutablePointer<Bool>
    ) {
        if let context = matcher.stringContext {
            markInString(fromNode: start, matcher, context, cache: &cache, allowed)
            return
        }
        var stack: [(node: Int32, state: JSONMatcher)] = [(start, matcher)]
        while let (node, state) = stack.popLast() {
            let n = Int(node)
            for e in Int(firstEdge[n])..<Int(firstEdge[n + 1]) {
                guard let next = state.advanced(by: edgeByte[e]) else { continue }
                markTokens(at: edgeTarget[e], allowed)
                if let context = next.stringContext {
                    markInString(fromNode: edgeTarget[e], next, context, cache: &cache, allowed)
                } else {
                    stack.append((edgeTarget[e], next))
                }
            }
        }
    }

    /// The tokens below `start` that `matcher`, inside the string `context` describes, accepts: those that stay in
    /// the string and fit its `maxLength`, and those that end it and go on as the matcher allows.
    private func markInString(
        fromNode start: Int32, _ matcher: JSONMatcher,
        _ context: (node: Int, rule: StringRule, progress: StringProgress),
        cache: inout StringWalkCache, _ allowed: UnsafeMutablePointer<Bool>
    ) {
        let rule = context.rule
        var relative = context.progress
        relative.length = 0
        let walk: StringWalk
        if start == 0 && rule.pattern == nil && relative == StringProgress() {
            walk = cache.plain
        } else {
            let key = StringKey(pattern: rule.pattern, trieNode: start, progress: relative)
            if let cached = cache.walks[key] {
                walk = cached
            } else {
                walk = walkString(from: start, rule, relative)
                if cache.walks.count < StringWalkCache.capacity { cache.walks[key] = walk }
            }
        }
        let length = context.progress.length
        let room = rule.maxLength.map { $0 - length } ?? Int.max
        if let dense = walk.needByToken {
            let limit = UInt16(clamping: min(room, Int(StringWalk.notInside) - 1))
            dense.withUnsafeBufferPointer { need in
                for i in need.indices where need[i] <= limit { allowed[i] = true }
            }
        } else {
            walk.inside.withUnsafeBufferPointer { inside in
                walk.need.withUnsafeBufferPointer { need in
                    for i in inside.indices where Int(need[i]) <= room { allowed[Int(inside[i])] = true }
                }
            }
        }
        for exit in walk.exits where exit.progress.length <= room {
            // The string ends here: the rest of the token is checked by the full matcher.
            var progress = exit.progress
            progress.length = min(length + progress.length, max(rule.minLength, rule.maxLength ?? 0))
            guard let after = matcher.withString(progress).advanced(by: UInt8(ascii: "\"")) else { continue }
            markTokens(at: exit.child, allowed)
            markAccepted(fromNode: exit.child, after, cache: &cache, allowed)
        }
    }

    /// Inside a string (most of a JSON document's tokens), the walk carries only the string's progress, a small
    /// value, instead of a matcher per node; it counts characters without bounds (the caller applies them) and
    /// records where a closing quote would end the string.
    func walkString(from start: Int32, _ rule: StringRule, _ progress: StringProgress) -> StringWalk {
        // Counts every character (a minimum no length reaches keeps `length` from being clamped) and bounds none.
        let counting = StringRule(minLength: .max, maxLength: nil, pattern: rule.pattern)
        var walk = StringWalk()
        var stack: [(node: Int32, progress: StringProgress)] = [(start, progress)]
        while let (node, progress) = stack.popLast() {
            let n = Int(node)
            for e in Int(firstEdge[n])..<Int(firstEdge[n + 1]) {
                let byte = edgeByte[e]
                let child = edgeTarget[e]
                if byte == UInt8(ascii: "\""), progress.escape == 0, progress.continuation == 0 {
                    walk.exits.append((child, progress))
                    continue
                }
                guard let next = JSONMatcher.stringStep(progress, counting, byte) else { continue }
                let ending = tokens[Int(firstToken[Int(child)])..<Int(firstToken[Int(child) + 1])]
                walk.inside.append(contentsOf: ending)
                let need = UInt16(
                    clamping: min(next.length + (next.escape == 0 ? 0 : 1), Int(StringWalk.notInside) - 1))
                walk.need.append(contentsOf: repeatElement(need, count: ending.count))
                stack.append((child, next))
            }
        }
        if walk.inside.count * 8 > vocabularySize {
            var dense = [UInt16](repeating: StringWalk.notInside, count: vocabularySize)
            for (t, n) in zip(walk.inside, walk.need) { dense[Int(t)] = n }
            walk.needByToken = dense
            walk.inside = []
            walk.need = []
        }
        return walk
    }
}
