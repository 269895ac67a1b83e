import Foundation
import SanadIndex
import Testing

/// Format 2 (issue 45): the model in the header, appends without a rewrite, an interrupted append left out, format 1
/// still read.
@Suite("Index file format")
struct IndexFileFormatTests {
    let minilm = IndexModel(id: "all-MiniLM-L6-v2", digest: String(repeating: "a", count: 64))
    let other = IndexModel(id: "bge-small", digest: String(repeating: "b", count: 64))

    func entries(_ range: Range<Int>, _ gen: inout Vectors) -> [(entry: VectorIndexEntry, vector: [Float])] {
        range.map { (VectorIndexEntry(id: "id-\($0)", text: "text \($0)", metadata: ["n": "\($0)"]), gen.next(8)) }
    }

    @Test("an add appends: the file keeps its bytes and inode, grows by one segment, and reads back every entry")
    func appendsWithoutRewrite() throws {
        let path = try temporaryFile("grow.idx")
        var gen = Vectors(state: 3)
        #expect(try VectorIndexFile.append(path, dimension: 8, model: minilm, entries: entries(0..<10, &gen)) == 10)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let inode = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        #expect(try VectorIndexFile.append(path, dimension: 8, model: minilm, entries: entries(10..<15, &gen)) == 15)
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(after.prefix(before.count) == before && after.count > before.count)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int == inode)
        let index = try VectorIndexFile.load(path)
        #expect(index.count == 15 && index.model == minilm && index.entry("id-12")?.metadata == ["n": "12"])
    }

    @Test("a cut-short or garbled last append is left out; the next add cuts it off and keeps everything before it")
    func interruptedAppend() throws {
        let path = try temporaryFile("torn.idx")
        let url = URL(fileURLWithPath: path)
        var gen = Vectors(state: 5)
        _ = try VectorIndexFile.append(path, dimension: 8, model: minilm, entries: entries(0..<4, &gen))
        let complete = try Data(contentsOf: url)
        _ = try VectorIndexFile.append(path, dimension: 8, model: minilm, entries: entries(4..<8, &gen))
        let full = try Data(contentsOf: url)
        // A process killed during the second add: the file ends anywhere inside its segment, or its end is garbled.
        for cut in [complete.count + 1, complete.count + 19, complete.count + 40, full.count - 1] {
            try full.prefix(cut).write(to: url)
            let index = try VectorIndexFile.load(path)
            #expect(index.count == 4 && index.entry("id-3") != nil && index.entry("id-4") == nil, "cut at \(cut)")
        }
        var garbled = full
        garbled[full.count - 2] ^= 0x40
        try garbled.write(to: url)
        #expect(try VectorIndexFile.load(path).count == 4)
        #expect(try VectorIndexFile.append(path, dimension: 8, model: minilm, entries: entries(8..<10, &gen)) == 6)
        let index = try VectorIndexFile.load(path)
        #expect(index.count == 6 && index.entry("id-9") != nil && index.entry("id-5") == nil)
        // Damage before the last segment is not an interrupted append: refused.
        var damaged = try Data(contentsOf: url)
        damaged[complete.count - 3] ^= 0x01
        try damaged.write(to: url)
        #expect { try VectorIndexFile.load(path) } throws: { "\($0)".contains("checksum mismatch") }
    }

    @Test("another model's vectors are refused naming both; a renamed copy (same digest) is the same model")
    func modelRecorded() throws {
        let path = try temporaryFile("model.idx")
        var gen = Vectors(state: 9)
        _ = try VectorIndexFile.append(path, dimension: 8, model: minilm, entries: entries(0..<2, &gen))
        #expect {
            try VectorIndexFile.append(path, dimension: 8, model: other, entries: entries(2..<3, &gen))
        } throws: { error in
            let text = "\(error)"
            return text.contains(path) && text.contains("all-MiniLM-L6-v2") && text.contains("bge-small")
        }
        #expect(try VectorIndexFile.load(path).count == 2, "nothing was written")
        let renamed = IndexModel(id: "minilm-copy", digest: minilm.digest)
        #expect(try VectorIndexFile.append(path, dimension: 8, model: renamed, entries: entries(2..<3, &gen)) == 3)
        #expect(throws: VectorIndexError.self) {
            try VectorIndexFile.append(path, dimension: 16, model: minilm, entries: [])
        }
    }

    @Test("replacing entries again and again compacts the file once replaced entries outnumber live ones")
    func compaction() throws {
        let path = try temporaryFile("compact.idx")
        var gen = Vectors(state: 11)
        _ = try VectorIndexFile.append(path, dimension: 8, model: minilm, entries: entries(0..<4, &gen))
        var sizes: [Int] = []
        for _ in 0..<6 {
            _ = try VectorIndexFile.append(path, dimension: 8, model: minilm, entries: entries(0..<4, &gen))
            sizes.append(try Data(contentsOf: URL(fileURLWithPath: path)).count)
        }
        #expect(sizes.max()! < 3 * sizes.min()!, "the file does not grow without bound: \(sizes)")
        #expect(try VectorIndexFile.load(path).count == 4)
    }

    @Test("a format 1 file is read, and rewritten in format 2 with the model by the next add")
    func version1() throws {
        let path = try temporaryFile("old.idx")
        var gen = Vectors(state: 13)
        // Format 1 as Sanad wrote it before: 40-byte header, one payload, no model.
        var payload: [UInt8] = []
        func u32(_ v: UInt32, _ out: inout [UInt8]) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        var vectors: [Float] = []
        for i in 0..<3 {
            for s in ["old-\(i)", "old text \(i)"] {
                u32(UInt32(s.utf8.count), &payload)
                payload += Array(s.utf8)
            }
            u32(0, &payload)
            let v = gen.next(8)
            let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
            vectors += v.map { $0 / norm }
        }
        vectors.withUnsafeBytes { payload += $0 }
        var header = Array("SANADVEC".utf8)
        u32(1, &header)
        u32(8, &header)
        withUnsafeBytes(of: UInt64(3).littleEndian) { header += $0 }
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { header += $0 }
        u32(crc32(header + payload), &header)
        u32(0, &header)
        try Data(header + payload).write(to: URL(fileURLWithPath: path))
        let old = try VectorIndexFile.load(path)
        #expect(old.count == 3 && old.model == nil && old.entry("old-2")?.text == "old text 2")
        #expect(try VectorIndexFile.append(path, dimension: 8, model: minilm, entries: entries(0..<1, &gen)) == 4)
        let upgraded = try Data(contentsOf: URL(fileURLWithPath: path))
        let reread = try VectorIndexFile.load(path)
        #expect(upgraded[8] == 2 && reread.model == minilm)
    }

    @Test("a model's digest is the SHA-256 of its weights, remembered per file until the file changes")
    func digest() throws {
        let folder = URL(fileURLWithPath: try temporaryFile("model-folder"))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let weights = folder.appendingPathComponent("model.safetensors")
        try Data("abc".utf8).write(to: weights)
        let cache = try temporaryFile("digests.tsv")
        let environment = ["SANAD_DIGEST_CACHE": cache]
        let model = try IndexModel.of(folder, environment: environment)
        #expect(model.id == "model-folder")
        #expect(model.digest == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try String(contentsOfFile: cache, encoding: .utf8).hasPrefix(model.digest + "\t3\t"))
        #expect(try IndexModel.of(folder, environment: environment) == model, "from the cache")
        try Data("abcd".utf8).write(to: weights)
        #expect(
            try IndexModel.of(folder, environment: environment).digest != model.digest, "a changed file is hashed again"
        )
    }
}

/// CRC-32 (IEEE), as the index format uses, for writing a format 1 file by hand.
func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for b in bytes {
        crc ^= UInt32(b)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}
