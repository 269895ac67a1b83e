import Foundation
import SanadIndex
import Testing

/// Deterministic pseudo-random vectors (SplitMix64), so the tests need no model.
struct Vectors {
    var state: UInt64
    mutating func next(_ dimension: Int) -> [Float] {
        (0..<dimension).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Float(Double(z >> 11) / Double(1 << 53)) * 2 - 1
        }
    }
}

func temporaryFile(_ name: String) throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-index-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir.appendingPathComponent(name).path
}

/// The exact top k by brute force in Double, best first, ties by position.
func bruteForce(_ index: VectorIndex, _ query: [Float], k: Int) -> [String] {
    let d = index.dimension
    var qn: Double = 0
    for v in query { qn += Double(v) * Double(v) }
    let scored = (0..<index.count).map { i -> (Double, Int) in
        var s: Double = 0
        for j in 0..<d { s += Double(index.vectors[i * d + j]) * Double(query[j]) }
        return (s / qn.squareRoot(), i)
    }
    return scored.sorted { $0.0 > $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }.prefix(k).map { index.entries[$0.1].id }
}

@Suite("Vector index")
struct VectorIndexTests {
    @Test("add, replace, remove and top-k with a minimum score")
    func basics() throws {
        var index = VectorIndex(dimension: 3)
        try index.add(VectorIndexEntry(id: "x", text: "along x"), vector: [2, 0, 0])
        try index.add(VectorIndexEntry(id: "xy", text: "between", metadata: ["k": "v"]), vector: [1, 1, 0])
        try index.add(VectorIndexEntry(id: "z", text: "along z"), vector: [0, 0, 5])
        let top = try index.search([1, 0, 0], k: 2)
        #expect(top.map(\.entry.id) == ["x", "xy"])
        #expect(abs(top[0].score - 1) < 1e-6 && abs(top[1].score - 0.70710677) < 1e-6)
        #expect(try index.search([1, 0, 0], k: 5, minimumScore: 0.5).map(\.entry.id) == ["x", "xy"])
        try index.add(VectorIndexEntry(id: "x", text: "now along z"), vector: [0, 0, 1])
        #expect(index.count == 3)
        #expect(try index.search([1, 0, 0], k: 1).map(\.entry.id) == ["xy"])
        let removed = index.remove("xy")
        let removedAgain = index.remove("xy")
        #expect(removed && !removedAgain)
        #expect(index.entries.map(\.id).sorted() == ["x", "z"])
        for bad: [Float] in [[1, 0], [0, 0, 0], [.nan, 0, 1]] {
            var copy = index
            #expect(throws: VectorIndexError.self) { try copy.add(VectorIndexEntry(id: "bad", text: ""), vector: bad) }
        }
    }

    @Test("a saved index reads back equal; a truncated or changed file is refused, naming the file")
    func persistence() throws {
        let path = try temporaryFile("notes.sanadvec")
        var gen = Vectors(state: 7)
        var index = VectorIndex(dimension: 16)
        for i in 0..<50 {
            try index.add(
                VectorIndexEntry(id: "id-\(i)", text: "text \(i) é 日本", metadata: ["n": "\(i)"]), vector: gen.next(16))
        }
        try VectorIndexFile.save(index, to: path)
        let back = try VectorIndexFile.load(path)
        #expect(back.entries == index.entries && back.vectors == index.vectors && back.dimension == 16)
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        #expect(leftovers == ["notes.sanadvec"])

        // One segment, written with the header by a rename: a cut anywhere is damage, never an interrupted append.
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        for cut in [0, 10, 39, 40, 200, good.count - 1] {
            try good.prefix(cut).write(to: URL(fileURLWithPath: path))
            #expect {
                try VectorIndexFile.load(path)
            } throws: { error in
                "\(error)".contains(path) && "\(error)".contains("not a usable vector index")
            }
        }
        for offset in [8, 20, 45, good.count / 2, good.count - 3] {
            var changed = good
            changed[offset] ^= 0x10
            try changed.write(to: URL(fileURLWithPath: path))
            #expect(throws: VectorIndexError.self) { try VectorIndexFile.load(path) }
        }
        #expect(throws: VectorIndexError.self) { try VectorIndexFile.load(path + ".missing") }
    }

    @Test("100 000 vectors of 384: top-10 equals the exact brute-force ranking, on 1 and 2 threads")
    func large() throws {
        var gen = Vectors(state: 42)
        var index = VectorIndex(dimension: 384)
        for i in 0..<100_000 { try index.add(VectorIndexEntry(id: "\(i)", text: ""), vector: gen.next(384)) }
        for _ in 0..<3 {
            let query = gen.next(384)
            let expected = bruteForce(index, query, k: 10)
            #expect(try index.search(query, k: 10, threads: 1).map(\.entry.id) == expected)
            #expect(try index.search(query, k: 10, threads: 2).map(\.entry.id) == expected)
        }
        let path = try temporaryFile("large.sanadvec")
        try VectorIndexFile.save(index, to: path)
        #expect(try VectorIndexFile.load(path).count == 100_000)
    }
}
