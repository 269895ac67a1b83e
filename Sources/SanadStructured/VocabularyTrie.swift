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
    }

    /// What the trie allows from a string state, apart from what follows the string: the tokens whose bytes stay
    /// inside it, and the nodes where a closing quote ends it (with the string's progress there).
    struct StringWalk {
        var inside: [Int32] = []
        var exits: [(child: Int32, progress: StringProgress)] = []
    }

    /// String walks by (string node, progress), kept for one generation: a state inside a string (an unbounded
    /// string's progress does not count its length) recurs, from item to item of an array and within a long string.
    struct StringWalkCache {
        static let capacity = 48
        fileprivate var walks: [StringKey: StringWalk] = [:]
        init() {}
    }

    fileprivate struct StringKey: Hashable {
        var node: Int
        var progress: StringProgress
    }

    /// Calls `allow` for every token whose bytes `matcher` accepts whole.
    func forEachAccepted(from matcher: JSONMatcher, cache: inout StringWalkCache, _ allow: (Int32) -> Void) {
        guard let (node, rule, progress) = matcher.stringContext else {
            forEachAccepted(fromNode: 0, matcher, allow)
            return
        }
        let key = StringKey(node: node, progress: progress)
        let walk: StringWalk
        if let cached = cache.walks[key] {
            walk = cached
        } else {
            walk = walkString(matcher, rule, progress)
            if cache.walks.count < StringWalkCache.capacity { cache.walks[key] = walk }
        }
        for t in walk.inside { allow(t) }
        for exit in walk.exits {
            // The string ends here: the rest of the token is checked by the full matcher.
            guard let after = matcher.withString(exit.progress).advanced(by: UInt8(ascii: "\"")) else { continue }
            let child = Int(exit.child)
            for t in Int(firstToken[child])..<Int(firstToken[child + 1]) { allow(tokens[t]) }
            forEachAccepted(fromNode: exit.child, after, allow)
        }
    }

    /// Inside a string (most of a JSON document's tokens), the walk carries only the string's progress, a small
    /// value, instead of a matcher per node, and records where a closing quote would end the string.
    func walkString(_ matcher: JSONMatcher, _ rule: StringRule, _ start: StringProgress) -> StringWalk {
        var walk = StringWalk()
        var stack: [(node: Int32, progress: StringProgress)] = [(0, start)]
        while let (node, progress) = stack.popLast() {
            let n = Int(node)
            for e in Int(firstEdge[n])..<Int(firstEdge[n + 1]) {
                let byte = edgeByte[e]
                let child = edgeTarget[e]
                if byte == UInt8(ascii: "\""), progress.escape == 0, progress.continuation == 0 {
                    walk.exits.append((child, progress))
                    continue
                }
                guard let next = matcher.stringStep(progress, rule, byte) else { continue }
                walk.inside.append(contentsOf: tokens[Int(firstToken[Int(child)])..<Int(firstToken[Int(child) + 1])])
                stack.append((child, next))
            }
        }
        return walk
    }

    /// The general walk below `start`, a matcher per node.
    private func forEachAccepted(fromNode start: Int32, _ matcher: JSONMatcher, _ allow: (Int32) -> Void) {
        var stack: [(node: Int32, state: JSONMatcher)] = [(start, matcher)]
        while let (node, state) = stack.popLast() {
            let n = Int(node)
            for e in Int(firstEdge[n])..<Int(firstEdge[n + 1]) {
                guard let next = state.advanced(by: edgeByte[e]) else { continue }
                let child = Int(edgeTarget[e])
                for t in Int(firstToken[child])..<Int(firstToken[child + 1]) { allow(tokens[t]) }
                stack.append((edgeTarget[e], next))
            }
        }
    }
}
