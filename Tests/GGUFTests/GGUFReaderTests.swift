import Foundation
import GGUF
import SanadCore
import SanadTestSupport
import Testing

/// A small valid file with every metadata kind, a nested array and two tensors.
func sampleWriter() -> GGUFWriter {
    var w = GGUFWriter()
    w.set("general.architecture", .string("llama"))
    w.set("general.name", .string("tiny ☃ model"))
    w.set("u8", .uint8(200))
    w.set("i8", .int8(-5))
    w.set("u16", .uint16(60000))
    w.set("i16", .int16(-30000))
    w.set("u32", .uint32(4_000_000_000))
    w.set("i32", .int32(-2_000_000_000))
    w.set("u64", .uint64(1 << 40))
    w.set("i64", .int64(-(1 << 40)))
    w.set("f32", .float32(1.5))
    w.set("f64", .float64(-2.25))
    w.set("flag", .bool(true))
    w.set("tokens", .strings(["a", "b", "ab", "✓"]))
    w.set("texts", .strings(["", "ü", "", "a long token with spaces"]))
    w.set("types", .int32s([1, -2, 3]))
    w.set("scores", .float32s([0.5, -1.25]))
    w.set("nested", .array(.array, [.int32s([1, 2]), .int32s([3])]))
    w.set("empty", .array(.float32, []))
    w.tensors = [
        .f32("weights", [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]),
        .f32("bias", [3], [0.5, -0.5, 0.25]),
    ]
    return w
}

func writeTemporary(_ bytes: [UInt8], name: String = "model.gguf") throws -> URL {
    let url = try TestPaths.temporaryDirectory().appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url
}

@Suite("GGUF reader")
struct GGUFReaderTests {
    @Test("reads every metadata kind, arrays and tensor data")
    func readsValidFile() throws {
        let url = try writeTemporary(sampleWriter().bytes())
        let file = try GGUFFile(path: url.path)
        #expect(file.version == 3)
        #expect(file.architecture == "llama")
        #expect(file.string("general.name") == "tiny ☃ model")
        #expect(file.metadata["u8"] == .uint8(200))
        #expect(file.metadata["i8"] == .int8(-5))
        #expect(file.metadata["u16"] == .uint16(60000))
        #expect(file.metadata["i16"] == .int16(-30000))
        #expect(file.int("u32") == 4_000_000_000)
        #expect(file.int("i32") == -2_000_000_000)
        #expect(file.int("u64") == 1 << 40)
        #expect(file.int("i64") == -(1 << 40))
        #expect(file.double("f32") == 1.5)
        #expect(file.double("f64") == -2.25)
        #expect(file.bool("flag") == true)
        #expect(try file.stringArray("tokens") == ["a", "b", "ab", "✓"])
        // String and 32-bit arrays are stored compactly (GGUFArray) and still equal the values written.
        #expect(try file.stringArray("texts") == ["", "ü", "", "a long token with spaces"])
        #expect(file.metadata["texts"] == .strings(["", "ü", "", "a long token with spaces"]))
        #expect(file.metadata["types"] == .int32s([1, -2, 3]))
        #expect(file.metadata["types"]?.arrayValue?.last == .int32(3))
        #expect(file.metadata["scores"] == .float32s([0.5, -1.25]))
        #expect(file.metadata["scores"] != .float32s([0.5]))
        #expect(file.metadata["nested"] == .array(.array, [.int32s([1, 2]), .int32s([3])]))
        #expect(try file.numberArray("empty") == [])
        #expect(file.metadataKeys.first == "general.architecture")
        #expect(file.tensors.map(\.name) == ["weights", "bias"])
        let w = try file.requireTensor("weights")
        #expect(w.dimensions == [4, 2])
        #expect(w.rowLength == 4 && w.rowCount == 2 && w.byteCount == 32)
        #expect(w.fileOffset % 32 == 0)
        let values = file.data(of: w).bindMemory(to: Float.self, capacity: 8)
        #expect((0..<8).map { values[$0] } == [1, 2, 3, 4, 5, 6, 7, 8])
        let b = try file.requireTensor("bias")
        #expect(file.data(of: b).load(fromByteOffset: 4, as: Float.self) == -0.5)
        #expect(file.parameterCount == 11)
    }

    @Test("typed accessors name the file and key")
    func typedErrors() throws {
        let url = try writeTemporary(sampleWriter().bytes())
        let file = try GGUFFile(path: url.path)
        #expect(throws: GGUFError.missingKey(path: url.path, key: "nope")) { try file.requireInt("nope") }
        #expect(throws: GGUFError.wrongKeyType(path: url.path, key: "f32", expected: "a string", found: "float32")) {
            try file.requireString("f32")
        }
        #expect(throws: GGUFError.missingTensor(path: url.path, name: "output.weight")) {
            try file.requireTensor("output.weight")
        }
    }

    @Test("every truncation of a valid file is a typed error, never a crash")
    func everyTruncation() throws {
        let bytes = sampleWriter().bytes()
        let dir = try TestPaths.temporaryDirectory()
        let url = dir.appendingPathComponent("cut.gguf")
        try Data(bytes).write(to: url)
        let full = try GGUFFile(path: url.path)
        // Bytes past the last tensor are alignment padding: any prefix shorter than the data's end must fail.
        let end = full.tensors.map { $0.fileOffset + $0.byteCount }.max() ?? bytes.count
        for length in 0..<end {
            try Data(bytes[0..<length]).write(to: url)
            #expect(throws: GGUFError.self, "prefix of \(length) bytes") { _ = try GGUFFile(path: url.path) }
        }
        try Data(bytes).write(to: url)
        #expect(throws: Never.self) { _ = try GGUFFile(path: url.path) }
    }

    @Test("random bit flips never crash the reader", arguments: 0..<4)
    func bitFlips(seed: Int) throws {
        let bytes = sampleWriter().bytes()
        var rng = SeededGenerator(seed: UInt64(seed) &+ 17)
        let dir = try TestPaths.temporaryDirectory()
        let url = dir.appendingPathComponent("flipped.gguf")
        for _ in 0..<150 {
            var copy = bytes
            for _ in 0..<Int(rng.next() % 4 + 1) {
                let at = Int(rng.next() % UInt64(copy.count))
                copy[at] ^= UInt8(1 << (rng.next() % 8))
            }
            try Data(copy).write(to: url)
            // Either it parses (a flip in tensor data or a string's bytes) or it throws a GGUFError.
            do {
                let file = try GGUFFile(path: url.path)
                for t in file.tensors { #expect(t.fileOffset + t.byteCount <= file.mapping.count) }
            } catch {
                #expect(error is GGUFError)
            }
        }
    }

    @Test(
        "hostile headers are refused with a message naming the problem",
        arguments: [
            ("tensor count 2^62", HostileCase.tensorCount, "tensor count"),
            ("metadata count 2^62", .keyCount, "metadata count"),
            ("string length 2^60", .stringLength, "length of metadata key"),
            ("array length 2^61", .arrayLength, "length of metadata 'big'"),
            ("unknown value type 99", .valueType, "unknown value type 99"),
            ("tensor offset past the end", .tensorOffset, "is truncated: the data of tensor 't'"),
            ("tensor with 9 dimensions", .dimensionCount, "9 dimensions"),
            ("unknown ggml type 77", .tensorType, "unknown ggml type 77"),
            ("row not a multiple of the block", .blockMultiple, "not a multiple"),
            ("version 1", .version, "version 1"),
            ("not GGUF", .magic, "not a GGUF file"),
            ("alignment 3", .alignment, "power of two"),
        ])
    func hostile(name: String, hostile: HostileCase, expected: String) throws {
        let url = try writeTemporary(hostile.bytes())
        do {
            _ = try GGUFFile(path: url.path)
            Issue.record("\(name): expected an error")
        } catch let error as GGUFError {
            #expect(error.description.contains(expected), "\(error)")
            #expect(error.description.contains(url.path))
        }
    }

    @Test("shared(path:) parses a file once while it is held; a rewritten or released file is parsed again")
    func sharedFiles() throws {
        let url = try writeTemporary(sampleWriter().bytes(), name: "shared.gguf")
        let first = try GGUFFile.shared(path: url.path)
        #expect(try GGUFFile.shared(path: url.path) === first)
        #expect(try GGUFFile(path: url.path) !== first)
        // Another version of the file at the same path (a new inode: written elsewhere and renamed over it).
        var other = sampleWriter()
        other.set("general.name", .string("rewritten"))
        let replacement = try writeTemporary(other.bytes(), name: "shared-new.gguf")
        #expect(rename(replacement.path, url.path) == 0)
        weak var released: GGUFFile?
        do {
            let second = try GGUFFile.shared(path: url.path)
            #expect(second !== first && second.string("general.name") == "rewritten")
            released = second
        }
        #expect(released == nil)
        #expect(try GGUFFile.shared(path: url.path).string("general.name") == "rewritten")
        #expect(first.string("general.name") == "tiny ☃ model")
    }

    @Test("missing file and directory give cannotOpen")
    func cannotOpen() throws {
        #expect(throws: GGUFError.self) { _ = try GGUFFile(path: "/nonexistent/model.gguf") }
        let dir = try TestPaths.temporaryDirectory()
        do {
            _ = try GGUFFile(path: dir.path)
            Issue.record("a directory opened")
        } catch let error as GGUFError {
            #expect(error.description.contains("not a regular file"))
        }
    }

    @Test(
        "the real SmolLM2 file reads, and its truncated copy is refused",
        .enabled(if: TestPaths.model(TestPaths.smolLM2) != nil))
    func realModel() throws {
        let url = try #require(TestPaths.model(TestPaths.smolLM2))
        let file = try GGUFFile(path: url.path)
        #expect(file.architecture == "llama")
        #expect(file.tensors.count == 272)
        #expect(try file.stringArray("tokenizer.ggml.tokens")?.count == 49152)
        #expect(file.parameterCount == 134_515_008)
        let handle = try FileHandle(forReadingFrom: url)
        let head = try handle.read(upToCount: 3_000_000) ?? Data()
        let cut = try writeTemporary(Array(head), name: "cut.gguf")
        do {
            _ = try GGUFFile(path: cut.path)
            Issue.record("truncated model opened")
        } catch let error as GGUFError {
            #expect(error.description.contains("truncated"), "\(error)")
        }
    }
}

enum HostileCase: Sendable, CustomTestStringConvertible {
    case tensorCount, keyCount, stringLength, arrayLength, valueType, tensorOffset, dimensionCount, tensorType
    case blockMultiple, version, magic, alignment

    var testDescription: String { "\(self)" }

    func bytes() -> [UInt8] {
        var w = GGUFWriter()
        w.set("general.architecture", .string("llama"))
        switch self {
        case .tensorCount:
            var b = w.bytes()
            patch(&b, at: 8, UInt64(1) << 62)
            return b
        case .keyCount:
            var b = w.bytes()
            patch(&b, at: 16, UInt64(1) << 62)
            return b
        case .stringLength:
            var b = w.bytes()
            patch(&b, at: 24, UInt64(1) << 60)
            return b
        case .arrayLength:
            w.set("big", .int32s([1, 2, 3]))
            var b = w.bytes()
            var first = GGUFWriter()
            first.set("general.architecture", .string("llama"))
            // After the first pair: key length (8) + "big" (3) + value type (4) + element type (4), then the count.
            patch(&b, at: 24 + metadataSize(first) + 8 + 3 + 4 + 4, UInt64(1) << 61)
            return b
        case .valueType:
            var b = w.bytes()
            patch32(&b, at: 24 + 8 + "general.architecture".utf8.count, 99)
            return b
        case .tensorOffset:
            w.tensors = [.f32("t", [2], [1, 2])]
            var b = w.bytes()
            // The tensor info's offset is the last u64 before the alignment padding.
            let infoEnd = 24 + metadataSize(w) + 8 + 1 + 4 + 8 + 4 + 8
            patch(&b, at: infoEnd - 8, UInt64(1) << 20)
            return b
        case .dimensionCount:
            w.tensors = [.f32("t", [2], [1, 2])]
            var b = w.bytes()
            patch32(&b, at: 24 + metadataSize(w) + 8 + 1, 9)
            return b
        case .tensorType:
            w.tensors = [.f32("t", [2], [1, 2])]
            var b = w.bytes()
            patch32(&b, at: 24 + metadataSize(w) + 8 + 1 + 4 + 8, 77)
            return b
        case .blockMultiple:
            w.tensors = [
                GGUFWriter.Tensor(name: "t", type: .q4_0, dimensions: [16], data: Array(repeating: 0, count: 18))
            ]
            return w.bytes()
        case .version:
            var b = w.bytes()
            patch32(&b, at: 4, 1)
            return b
        case .magic:
            var b = w.bytes()
            b[0] = UInt8(ascii: "X")
            return b
        case .alignment:
            w.set("general.alignment", .uint32(3))
            return w.bytes()
        }
    }

    /// Bytes of the metadata section (key length, key, type, value per pair).
    private func metadataSize(_ w: GGUFWriter) -> Int {
        w.metadata.reduce(0) { $0 + 8 + $1.0.utf8.count + 4 + valueSize($1.1) }
    }

    private func valueSize(_ v: GGUFValue) -> Int {
        switch v {
        case .string(let s): return 8 + s.utf8.count
        case .uint32, .int32, .float32: return 4
        default: return 8
        }
    }

    private func patch(_ b: inout [UInt8], at offset: Int, _ value: UInt64) {
        for i in 0..<8 { b[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
    }

    private func patch32(_ b: inout [UInt8], at offset: Int, _ value: UInt32) {
        for i in 0..<4 { b[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
    }
}
