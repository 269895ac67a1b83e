import Foundation

/// One text in a vector index.
public struct VectorIndexEntry: Sendable, Equatable {
    public var id: String
    public var text: String
    public var metadata: [String: String]

    public init(id: String, text: String, metadata: [String: String] = [:]) {
        self.id = id
        self.text = text
        self.metadata = metadata
    }
}

/// A search result: the entry and its cosine similarity to the query.
public struct VectorMatch: Sendable, Equatable {
    public var entry: VectorIndexEntry
    public var score: Float
}

/// An exact in-memory vector index for retrieval: texts with their vectors (stored at unit length, so cosine
/// similarity is a dot product), added, replaced and removed by id, searched by scanning every vector with SIMD
/// on several threads. `VectorIndexFile` keeps one index per file.
public struct VectorIndex: Sendable {
    public let dimension: Int
    /// The embedding model of the vectors; nil for an index from before models were recorded (format 1).
    public var model: IndexModel?
    public private(set) var entries: [VectorIndexEntry] = []
    /// (count, dimension) unit vectors, entry by entry.
    public private(set) var vectors: [Float] = []
    private var positions: [String: Int] = [:]

    public init(dimension: Int, model: IndexModel? = nil) {
        self.dimension = dimension
        self.model = model
    }

    public var count: Int { entries.count }

    /// The entry with `id`, or nil.
    public func entry(_ id: String) -> VectorIndexEntry? { positions[id].map { entries[$0] } }

    /// Adds `entry` with `vector` (scaled to unit length), replacing an entry with the same id. Throws for a vector
    /// of the wrong length, with a NaN or infinity, or of zero length.
    public mutating func add(_ entry: VectorIndexEntry, vector: [Float], file: String = "(index)") throws {
        guard vector.count == dimension else {
            throw VectorIndexError.dimensionMismatch(path: file, expected: dimension, found: vector.count)
        }
        store(entry, unit: try unitVector(vector, id: entry.id))
    }

    /// Adds or replaces `entry` with a vector already at unit length (as read from a file); true when it replaced
    /// an entry with the same id.
    @discardableResult
    mutating func store<C: Collection<Float>>(_ entry: VectorIndexEntry, unit: C) -> Bool {
        if let i = positions[entry.id] {
            entries[i] = entry
            vectors.replaceSubrange(i * dimension..<(i + 1) * dimension, with: unit)
            return true
        }
        positions[entry.id] = entries.count
        entries.append(entry)
        vectors.append(contentsOf: unit)
        return false
    }

    /// Removes the entry `id` (the last entry takes its place); false when there is none.
    @discardableResult
    public mutating func remove(_ id: String) -> Bool {
        guard let i = positions.removeValue(forKey: id) else { return false }
        let last = entries.count - 1
        if i != last {
            entries[i] = entries[last]
            positions[entries[i].id] = i
            vectors.replaceSubrange(
                i * dimension..<(i + 1) * dimension, with: vectors[last * dimension..<(last + 1) * dimension])
        }
        entries.removeLast()
        vectors.removeLast(dimension)
        return true
    }

    /// The `k` entries most similar to `query` (cosine), best first, leaving out those under `minimumScore`; equal
    /// scores in the order the entries sit in the index.
    public func search(_ query: [Float], k: Int, minimumScore: Float = -1, threads: Int = 1) throws -> [VectorMatch] {
        guard query.count == dimension else {
            throw VectorIndexError.dimensionMismatch(path: "(query)", expected: dimension, found: query.count)
        }
        guard k > 0, !entries.isEmpty else { return [] }
        let q = try unitVector(query, id: "(query)")
        let n = entries.count
        let chunks = max(1, min(threads, n / 4096 + 1))
        let d = dimension
        let partial = TopKLists(chunks)
        let vectors = self.vectors
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var top = TopK(k: k, minimum: minimumScore)
            vectors.withUnsafeBufferPointer { all in
                q.withUnsafeBufferPointer { qp in
                    let base = all.baseAddress.unsafelyUnwrapped
                    let query = qp.baseAddress.unsafelyUnwrapped
                    for i in (n * chunk / chunks)..<(n * (chunk + 1) / chunks) {
                        top.offer(dot(base + i * d, query, count: d), index: i)
                    }
                }
            }
            partial.set(chunk, top.items)
        }
        var merged = TopK(k: k, minimum: minimumScore)
        for list in partial.lists {
            for item in list { merged.offer(item.score, index: item.index) }
        }
        return merged.items.map { VectorMatch(entry: entries[$0.index], score: $0.score) }
    }

    /// `vector` at unit length.
    private func unitVector(_ vector: [Float], id: String) throws -> [Float] {
        var sum: Double = 0
        for v in vector {
            guard v.isFinite else { throw VectorIndexError.invalidVector(id: id, what: "has a NaN or infinity") }
            sum += Double(v) * Double(v)
        }
        guard sum > 0 else { throw VectorIndexError.invalidVector(id: id, what: "is all zeros") }
        let scale = Float(1 / sum.squareRoot())
        return vector.map { $0 * scale }
    }

}

/// Σ a[i]·b[i], sixteen lanes at a time.
@inline(__always)
func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
    var acc0 = SIMD16<Float>()
    var acc1 = SIMD16<Float>()
    let ra = UnsafeRawPointer(a)
    let rb = UnsafeRawPointer(b)
    var i = 0
    while i + 32 <= count {
        acc0 +=
            ra.loadUnaligned(fromByteOffset: 4 * i, as: SIMD16<Float>.self)
            * rb.loadUnaligned(fromByteOffset: 4 * i, as: SIMD16<Float>.self)
        acc1 +=
            ra.loadUnaligned(fromByteOffset: 4 * i + 64, as: SIMD16<Float>.self)
            * rb.loadUnaligned(fromByteOffset: 4 * i + 64, as: SIMD16<Float>.self)
        i += 32
    }
    var sum = (acc0 + acc1).sum()
    while i < count {
        sum += a[i] * b[i]
        i += 1
    }
    return sum
}

/// The best `k` (score, index) pairs offered, best first; ties keep the lower index first.
struct TopK {
    let k: Int
    let minimum: Float
    private(set) var items: [(score: Float, index: Int)] = []

    init(k: Int, minimum: Float) {
        self.k = k
        self.minimum = minimum
        items.reserveCapacity(k + 1)
    }

    @inline(__always)
    mutating func offer(_ score: Float, index: Int) {
        guard score >= minimum, score.isFinite else { return }
        if items.count == k {
            guard let last = items.last, score > last.score || (score == last.score && index < last.index) else {
                return
            }
            items.removeLast()
        }
        var at = items.count
        while at > 0, items[at - 1].score < score || (items[at - 1].score == score && items[at - 1].index > index) {
            at -= 1
        }
        items.insert((score, index), at: at)
    }
}

/// Per-chunk results of a parallel search, each slot written by one chunk only.
final class TopKLists: @unchecked Sendable {  // @unchecked: chunk i writes slot i alone; read after the join
    private let slots: UnsafeMutableBufferPointer<[(score: Float, index: Int)]>

    init(_ count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: [])
    }

    func set(_ i: Int, _ list: [(score: Float, index: Int)]) { slots[i] = list }
    var lists: [[(score: Float, index: Int)]] { Array(slots) }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }
}
