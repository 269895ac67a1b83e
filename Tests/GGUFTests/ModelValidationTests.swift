import Foundation
import GGUF
import SanadFiles
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The error `body` throws, as text (empty when it throws nothing).
func refusal(_ body: () throws -> Void) -> String {
    do {
        try body()
        return ""
    } catch {
        return "\(error)"
    }
}

@Suite("Model validation")
struct ModelValidationTests {
    @Test("a plausible, consistent model passes")
    func plausiblePasses() throws {
        let file = try PlausibleModel.open(PlausibleModel.writer())
        #expect(throws: Never.self) { try ModelValidation.validate(file) }
    }

    /// One hostile number per case: (key, value, what the message must say).
    static let hostileNumbers: [(String, GGUFValue, String)] = [
        ("llama.attention.head_count_kv", .uint64(1 << 50), "at most 4096"),
        ("llama.block_count", .uint64(1 << 40), "at most 4096"),
        ("llama.block_count", .uint32(0), "at least 1"),
        ("llama.attention.head_count", .uint32(.max), "at most 4096"),
        ("llama.embedding_length", .int32(-1), "at least 1"),
        ("llama.context_length", .uint64(.max), "at most"),
        ("llama.context_length", .int64(1 << 31), "at most 134217728"),
        ("llama.attention.layer_norm_rms_epsilon", .float32(-1e-5), "greater than 0"),
        ("llama.attention.layer_norm_rms_epsilon", .float32(.nan), "finite"),
        ("llama.attention.layer_norm_rms_epsilon", .float64(0), "greater than 0"),
        ("llama.rope.freq_base", .float32(.infinity), "finite"),
        ("tokenizer.ggml.bos_token_id", .uint32(1000), "0..<8"),
        ("tokenizer.ggml.eos_token_id", .int64(1 << 32), "0..<8"),
    ]

    @Test(
        "a hostile number is refused, naming the key, the value, the file and the plausible range",
        arguments: hostileNumbers)
    func hostileNumber(key: String, value: GGUFValue, expected: String) throws {
        var w = PlausibleModel.writer()
        w.set(key, value)
        let file = try PlausibleModel.open(w, name: "hostile.gguf")
        let message = refusal { try ModelValidation.validate(file) }
        #expect(message.contains(key), "\(message)")
        #expect(message.contains("hostile.gguf"), "\(message)")
        #expect(message.contains(expected), "\(message)")
    }

    @Test(
        "a hyperparameter of the wrong type is refused naming the key and the type found",
        arguments: [
            ("llama.block_count", GGUFValue.string("2")),
            ("llama.attention.head_count", .float32(2)),
            ("tokenizer.ggml.bos_token_id", .string("7")),
            ("tokenizer.ggml.eos_token_id", .float32(7)),
            ("llama.attention.layer_norm_rms_epsilon", .string("1e-5")),
            ("tokenizer.ggml.tokens", .int32s([1, 2])),
        ])
    func wrongType(key: String, value: GGUFValue) throws {
        var w = PlausibleModel.writer()
        w.set(key, value)
        let message = refusal { try ModelValidation.validate(try PlausibleModel.open(w)) }
        #expect(message.contains(key), "\(message)")
        #expect(message.contains("model.gguf"), "\(message)")
    }

    @Test("tokenizer arrays that disagree are refused naming both")
    func inconsistentArrays() throws {
        var scores = PlausibleModel.writer()
        scores.set("tokenizer.ggml.scores", .float32s([0, 0, 0]))
        #expect(
            refusal { try ModelValidation.validate(try PlausibleModel.open(scores)) }.contains(
                "tokenizer.ggml.scores has 3 entries but tokenizer.ggml.tokens has 8"))
        var types = PlausibleModel.writer()
        types.set("tokenizer.ggml.token_type", .int32s([Int32](repeating: 1, count: 12)))
        #expect(
            refusal { try ModelValidation.validate(try PlausibleModel.open(types)) }.contains(
                "tokenizer.ggml.token_type has 12 entries"))
        var typeValues = PlausibleModel.writer()
        typeValues.set("tokenizer.ggml.token_type", .int32s([Int32](repeating: 99, count: 8)))
        #expect(
            refusal { try ModelValidation.validate(try PlausibleModel.open(typeValues)) }.contains(
                "tokenizer.ggml.token_type[0] 99"))
    }

    @Test("a vocabulary that disagrees with the embedding's rows is refused")
    func vocabularyAgainstEmbedding() throws {
        var w = PlausibleModel.writer()
        w.set("tokenizer.ggml.tokens", .strings((0..<1000).map { "t\($0)" }))
        w.set("tokenizer.ggml.scores", .float32s([Float](repeating: 0, count: 1000)))
        w.set("tokenizer.ggml.token_type", .int32s([Int32](repeating: 1, count: 1000)))
        let message = refusal { try ModelValidation.validate(try PlausibleModel.open(w)) }
        #expect(message.contains("1000 tokens but token_embd.weight has 8 rows"), "\(message)")
    }

    @Test("block_count must match the blocks the tensors describe")
    func blockCountAgainstTensors() throws {
        var w = PlausibleModel.writer()
        w.set("llama.block_count", .uint32(3))
        let message = refusal { try ModelValidation.validate(try PlausibleModel.open(w)) }
        #expect(message.contains("llama.block_count is 3 but the file has tensors for 2 blocks"), "\(message)")
    }

    @Test("attention shapes must agree with the head counts")
    func attentionShapes() throws {
        var w = PlausibleModel.writer()
        w.set("llama.attention.head_count_kv", .uint32(2))
        let message = refusal { try ModelValidation.validate(try PlausibleModel.open(w)) }
        #expect(message.contains("blk.0.attn_k.weight"), "\(message)")
        #expect(message.contains("2 KV heads"), "\(message)")
    }

    @Test("a tensor whose declared type was changed is refused", arguments: [GGMLType.f16, .q8_0, .q4_0, .i32])
    func swappedType(type: GGMLType) throws {
        var w = PlausibleModel.writer()
        // The data stays F32; only the declared type changes (a smaller one leaves a gap, a vector of a quantized
        // type is no norm).
        let index = try #require(w.tensors.firstIndex { $0.name == "blk.0.attn_q.weight" })
        w.tensors[index].type = type
        let message = refusal { try ModelValidation.validate(try PlausibleModel.open(w)) }
        #expect(message.contains("blk.0.attn_q.weight"), "\(message)")
        #expect(message.contains("declared type"), "\(message)")
    }

    @Test("a norm vector stored as a quantized type is refused")
    func quantizedNorm() throws {
        var w = PlausibleModel.writer()
        let index = try #require(w.tensors.firstIndex { $0.name == "blk.1.ffn_norm.weight" })
        w.tensors[index] = GGUFWriter.Tensor(
            name: "blk.1.ffn_norm.weight", type: .q8_0, dimensions: [32], data: [UInt8](repeating: 0, count: 34))
        let message = refusal { try ModelValidation.validate(try PlausibleModel.open(w)) }
        #expect(message.contains("blk.1.ffn_norm.weight"), "\(message)")
        #expect(message.contains("vector of type Q8_0"), "\(message)")
    }

    @Test("special token id -1 means none and is accepted")
    func noneToken() throws {
        var w = PlausibleModel.writer()
        w.set("tokenizer.ggml.padding_token_id", .int32(-1))
        w.set("tokenizer.ggml.unknown_token_id", .uint32(.max))
        #expect(throws: Never.self) { try ModelValidation.validate(try PlausibleModel.open(w)) }
    }
}

@Suite("Special files")
struct SpecialFileTests {
    @Test("a FIFO named as a model is refused at once, never opened for reading")
    func fifoModel() throws {
        let path = try TestPaths.temporaryDirectory().appendingPathComponent("fifo.gguf").path
        try #require(mkfifo(path, 0o600) == 0)
        let message = refusal { _ = try GGUFFile(path: path) }
        #expect(message.contains("fifo.gguf"), "\(message)")
        #expect(message.contains("not a regular file (a FIFO)"), "\(message)")
        #expect(SharedLibraryFile.problem(path: path) == "not a regular file (a FIFO)")
    }

    @Test("a device and a folder are refused as models")
    func deviceAndFolder() throws {
        #expect(refusal { _ = try GGUFFile(path: "/dev/zero") }.contains("a character device"))
        let folder = try TestPaths.temporaryDirectory().path
        #expect(refusal { _ = try GGUFFile(path: folder) }.contains("a directory"))
    }

    #if os(Linux)
        @Test("an ELF library cut short is refused before dlopen; the whole file passes")
        func truncatedLibrary() throws {
            // This test's own executable is an ELF file with loadable segments.
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
            let bytes = try Data(contentsOf: URL(fileURLWithPath: executable))
            try #require(bytes.count > 8192 && bytes.starts(with: [0x7F, 0x45, 0x4C, 0x46]))
            let folder = try TestPaths.temporaryDirectory()
            let whole = folder.appendingPathComponent("whole.so")
            let cut = folder.appendingPathComponent("cut.so")
            try bytes.write(to: whole)
            try bytes.prefix(4096).write(to: cut)
            #expect(SharedLibraryFile.problem(path: whole.path) == nil)
            let message = try #require(SharedLibraryFile.problem(path: cut.path))
            #expect(message.contains("cut short"), "\(message)")
            var header = [UInt8](bytes.prefix(64))
            // e_phoff far beyond the end.
            withUnsafeBytes(of: UInt64.max.littleEndian) { header.replaceSubrange(0x20..<0x28, with: $0) }
            let hostile = header.withUnsafeBytes { SharedLibraryFile.elfProblem($0) }
            #expect(hostile?.contains("program header table") == true, "\(hostile ?? "nil")")
        }
    #endif
}

@Suite("Model validation: vocabulary")
struct VocabularyValidationTests {
    @Test("a repeated token is refused (libllama asserts on one)")
    func repeatedToken() throws {
        var w = PlausibleModel.writer()
        w.set("tokenizer.ggml.tokens", .strings(["a", "b", "c", "d", "Ġ", "ab", "a", "<|end|>"]))
        let message = refusal { try ModelValidation.validate(try PlausibleModel.open(w)) }
        #expect(message.contains("tokenizer.ggml.tokens repeats the token \"a\" at id 6"), "\(message)")
    }
}

@Suite("Shared library files")
struct SharedLibraryFileTests {
    static let systemLibrary = [
        "/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libm.so.6",
        "/lib/aarch64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libm.so.6",
    ].first { FileManager.default.fileExists(atPath: $0) }

    @Test("a dynamic symbol whose name lies outside .dynstr is refused before dlopen (the loader would crash)")
    func symbolNameOutOfRange() throws {
        let source = try #require(Self.systemLibrary, "no system shared object to copy")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        #expect(bytes.withUnsafeBytes { (try? SharedLibraryFile.exportedNames(in: $0))?.isEmpty == false })
        func int(_ o: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 | Int(bytes[o + $1]) << (8 * $1) } }
        let table = int(0x28, 8)
        let dynsym = try #require(
            (0..<int(0x3C, 2)).map { table + $0 * int(0x3A, 2) }.first { int($0 + 4, 4) == 11 })
        let symbols = int(dynsym + 24, 8)
        for i in 0..<4 { bytes[symbols + 24 + i] = 0xFF }  // symbol 1's st_name = 0xFFFFFFFF
        let url = try TestPaths.temporaryDirectory().appendingPathComponent("libnames.so")
        try Data(bytes).write(to: url)
        let problem = try #require(SharedLibraryFile.problem(path: url.path))
        #expect(problem.contains("dynamic symbol 1 lies outside .dynstr"), "\(problem)")
    }

    @Test("the untouched system library passes")
    func untouched() throws {
        let source = try #require(Self.systemLibrary, "no system shared object to copy")
        #expect(SharedLibraryFile.problem(path: source) == nil)
    }
}

@Suite("Model validation: tensor names")
struct TensorNameValidationTests {
    @Test("a block number beyond Int disagrees with block_count instead of being ignored")
    func hugeBlockNumber() throws {
        var w = PlausibleModel.writer()
        let index = try #require(w.tensors.firstIndex { $0.name == "blk.1.ffn_up.weight" })
        w.tensors[index].name = "blk.18446744073709551615.ffn_up.weight"
        let message = refusal { try ModelValidation.validate(try PlausibleModel.open(w)) }
        #expect(message.contains("llama.block_count is 2 but the file has tensors for"), "\(message)")
    }
}

@Suite("Model validation: alignment")
struct AlignmentValidationTests {
    @Test("tensor data placed off ggml's 32-byte alignment is refused (libllama asserts on it)")
    func smallAlignment() throws {
        var w = PlausibleModel.writer()
        w.alignment = 4
        w.set("general.alignment", .uint32(4))
        // A name length that leaves the header's end (the data section's start) off a multiple of 32.
        var file = try PlausibleModel.open(w)
        for length in 1...8 where file.dataOffset % 32 == 0 {
            w.set("general.name", .string(String(repeating: "a", count: length * 4)))
            file = try PlausibleModel.open(w)
        }
        try #require(file.dataOffset % 32 != 0)
        let message = refusal { try ModelValidation.validate(file) }
        #expect(message.contains("general.alignment 4"), "\(message)")
        #expect(message.contains("not a multiple of 32"), "\(message)")
    }
}
