import Foundation
import GGUF

/// Models with seeded random weights of a real architecture's shapes, made at test time: exactness against llama.cpp
/// needs no trained weights, only a file both engines compute. `make` writes an F32 (or F16) GGUF with a real
/// vocabulary (SmolLM2's byte-level BPE, tokens and merges, under the family's `tokenizer.ggml.pre` name) and the
/// architecture's hyperparameter keys; `file` quantizes it with the reference llama.cpp build's `llama-quantize`
/// into one type (`--pure`) or a mix (Q4_K_M, …), cached per (spec, seed, type) in the temporary directory.
///
/// An architecture is one small function that builds a `Spec` (see `llama`); `Size` picks the dimensions. The
/// default `.small` (2 layers, width 256, feed-forward 768: 26.7M parameters, 25.2M of them the two embeddings, a
/// 109 MB F32 file) keeps a test at seconds; `.hundredMillion` (107M parameters) is the size of the models people
/// download, one argument away: `SyntheticModel.llama(.hundredMillion)`. Every matrix dimension is a multiple of 256, so every K-quant applies to every matrix.
public enum SyntheticModel {
    /// How a tensor's values are drawn.
    public enum Initialization: Sendable, Hashable {
        /// Normal(0, σ): projections and embeddings (σ ≈ 0.02 keeps activations in a trained model's range).
        case normal(Float)
        /// 1 + Normal(0, σ): norm weights, near 1 but not all equal.
        case aroundOne(Float)
        /// Every value the same.
        case constant(Float)
    }

    /// One tensor of a spec: its GGUF name, dimensions (ggml order: row length first) and values.
    public struct TensorSpec: Sendable, Hashable {
        public var name: String
        public var dimensions: [Int]
        public var initialization: Initialization

        public init(_ name: String, _ dimensions: [Int], _ initialization: Initialization) {
            (self.name, self.dimensions, self.initialization) = (name, dimensions, initialization)
        }
    }

    /// The dimensions of a synthetic model. Widths and feed-forward lengths should be multiples of 256.
    public struct Size: Sendable, Hashable, CustomStringConvertible {
        public var layers: Int
        public var width: Int
        public var feedForward: Int
        public var heads: Int
        public var kvHeads: Int

        public init(layers: Int, width: Int, feedForward: Int, heads: Int, kvHeads: Int) {
            (self.layers, self.width, self.feedForward, self.heads, self.kvHeads) =
                (layers, width, feedForward, heads, kvHeads)
        }

        /// 2 layers, width 256, feed-forward 768, 4 heads of 64 sharing 2 KV heads: what the tests run.
        public static let small = Size(layers: 2, width: 256, feedForward: 768, heads: 4, kvHeads: 2)
        /// 4 layers, width 512, feed-forward 1024, 8 heads sharing 4 KV heads.
        public static let medium = Size(layers: 4, width: 512, feedForward: 1024, heads: 8, kvHeads: 4)
        /// 107M parameters with the 49,152-token vocabulary (the input and output embeddings are 50M of them).
        public static let hundredMillion = Size(layers: 24, width: 512, feedForward: 1024, heads: 8, kvHeads: 4)

        public var headDimension: Int { width / heads }
        public var description: String { "\(layers)x\(width)x\(feedForward)h\(heads)kv\(kvHeads)" }
    }

    /// What `make` writes: the architecture name, its hyperparameter keys (without the tokenizer's, which `make`
    /// adds) and its tensors.
    public struct Spec: Sendable, Equatable {
        /// `general.architecture`, also the name of the cached files.
        public var architecture: String
        /// Hyperparameter keys, written in this order.
        public var metadata: [Metadatum]
        public var tensors: [TensorSpec]
        /// `tokenizer.ggml.pre`: the family's pre-tokenizer name.
        public var preTokenizer: String

        public init(architecture: String, metadata: [Metadatum], tensors: [TensorSpec], preTokenizer: String) {
            (self.architecture, self.metadata, self.tensors, self.preTokenizer) =
                (architecture, metadata, tensors, preTokenizer)
        }

        /// A stable digest of everything in the spec: part of the cached files' names.
        public var digest: String {
            var text = "\(architecture)|\(preTokenizer)|v\(SyntheticModel.generatorVersion)"
            for m in metadata { text += "|\(m.key)=\(m.value)" }
            for t in tensors { text += "|\(t.name)\(t.dimensions)\(t.initialization)" }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return String(hash, radix: 16)
        }

        /// Number of values in all tensors.
        public var parameterCount: Int { tensors.reduce(0) { $0 + $1.dimensions.reduce(1, *) } }
    }

    /// A metadata key and value .
    public struct Metadatum: Sendable, Equatable {
        public var key: String
        public var value: GGUFValue
        public init(_ key: String, _ value: GGUFValue) { (self.key, self.value) = (key, value) }
    }

    /// Changes when `make` writes different bytes for the same spec and seed (invalidates cached files).
    public static let generatorVersion = 1

    // MARK: Architectures

    /// The vocabulary size of the shipped vocabulary (SmolLM2's).
    public static let vocabularySize = 49152

    /// `llama`: token embedding, per layer RMS norm, Q/K/V/output projections, RMS norm, gated SiLU feed-forward;
    /// final norm and a separate output matrix. RoPE base 10,000, RMS epsilon 1e-5.
    public static func llama(_ size: Size = .small, preTokenizer: String = "smollm") -> Spec {
        var spec = decoderSpec("llama", size, preTokenizer: preTokenizer)
        spec.tensors = decoderTensors(size, layer: llamaLayerTensors)
        return spec
    }

    /// The hyperparameter keys every llama-like decoder has (`ARCH.block_count`, widths, heads, RoPE base, RMS
    /// epsilon) and no tensors: an architecture's function starts from this and adds its own keys and tensors.
    public static func decoderSpec(_ architecture: String, _ size: Size, preTokenizer: String) -> Spec {
        let a = architecture
        return Spec(
            architecture: a,
            metadata: [
                Metadatum("\(a).block_count", .uint32(UInt32(size.layers))),
                Metadatum("\(a).context_length", .uint32(2048)),
                Metadatum("\(a).embedding_length", .uint32(UInt32(size.width))),
                Metadatum("\(a).feed_forward_length", .uint32(UInt32(size.feedForward))),
                Metadatum("\(a).attention.head_count", .uint32(UInt32(size.heads))),
                Metadatum("\(a).attention.head_count_kv", .uint32(UInt32(size.kvHeads))),
                Metadatum("\(a).rope.freq_base", .float32(10_000)),
                Metadatum("\(a).attention.layer_norm_rms_epsilon", .float32(1e-5)),
            ], tensors: [], preTokenizer: preTokenizer)
    }

    /// Token embedding, the tensors of every layer (`layer(size, "blk.N.")`), output norm and output matrix.
    public static func decoderTensors(_ size: Size, layer: (Size, String) -> [TensorSpec]) -> [TensorSpec] {
        var tensors = [TensorSpec("token_embd.weight", [size.width, vocabularySize], .normal(0.02))]
        for l in 0..<size.layers { tensors += layer(size, "blk.\(l).") }
        tensors.append(TensorSpec("output_norm.weight", [size.width], .aroundOne(0.1)))
        tensors.append(TensorSpec("output.weight", [size.width, vocabularySize], .normal(0.02)))
        return tensors
    }

    /// One llama layer's tensors, names prefixed with `prefix`.
    public static func llamaLayerTensors(_ size: Size, _ prefix: String) -> [TensorSpec] {
        let d = size.width
        let kv = size.kvHeads * size.headDimension
        return [
            TensorSpec(prefix + "attn_norm.weight", [d], .aroundOne(0.1)),
            TensorSpec(prefix + "attn_q.weight", [d, d], .normal(0.02)),
            TensorSpec(prefix + "attn_k.weight", [d, kv], .normal(0.02)),
            TensorSpec(prefix + "attn_v.weight", [d, kv], .normal(0.02)),
            TensorSpec(prefix + "attn_output.weight", [d, d], .normal(0.02)),
            TensorSpec(prefix + "ffn_norm.weight", [d], .aroundOne(0.1)),
            TensorSpec(prefix + "ffn_gate.weight", [d, size.feedForward], .normal(0.02)),
            TensorSpec(prefix + "ffn_up.weight", [d, size.feedForward], .normal(0.02)),
            TensorSpec(prefix + "ffn_down.weight", [size.feedForward, d], .normal(0.02)),
        ]
    }

    // MARK: Writing

    /// The float type `make` writes matrices in (norms and other vectors stay F32, as llama.cpp's converters write).
    public enum FloatType: String, Sendable { case f32 = "F32", f16 = "F16" }

    /// Writes `spec` with weights drawn from `seed` to `url` (matrices in `floatType`) and returns `url`. Needs the
    /// shipped SmolLM2 model for its vocabulary.
    @discardableResult
    public static func make(_ spec: Spec, seed: UInt64, to url: URL, floatType: FloatType = .f32) throws -> URL {
        var w = GGUFWriter()
        w.set("general.architecture", .string(spec.architecture))
        w.set("general.name", .string("synthetic \(spec.architecture) seed \(seed)"))
        w.set("general.file_type", .uint32(floatType == .f32 ? 0 : 1))
        for m in spec.metadata { w.set(m.key, m.value) }
        for (key, value) in try vocabulary(preTokenizer: spec.preTokenizer) { w.set(key, value) }
        var random = SeededRandom(seed: seed)
        for t in spec.tensors {
            let count = t.dimensions.reduce(1, *)
            var values = [Float](repeating: 0, count: count)
            switch t.initialization {
            case .normal(let sigma): random.fillNormal(&values, mean: 0, sigma: sigma)
            case .aroundOne(let sigma): random.fillNormal(&values, mean: 1, sigma: sigma)
            case .constant(let v): values = [Float](repeating: v, count: count)
            }
            if floatType == .f16 && t.dimensions.count > 1 {
                var bytes = [UInt8](repeating: 0, count: count * 2)
                bytes.withUnsafeMutableBytes { raw in
                    for (i, v) in values.enumerated() {
                        raw.storeBytes(of: Float16(v).bitPattern, toByteOffset: 2 * i, as: UInt16.self)
                    }
                }
                w.tensors.append(GGUFWriter.Tensor(name: t.name, type: .f16, dimensions: t.dimensions, data: bytes))
            } else {
                w.tensors.append(.f32(t.name, t.dimensions, values))
            }
        }
        return try w.write(to: url)
    }

    /// The `tokenizer.*` keys of the shipped SmolLM2 model (its byte-level BPE vocabulary, merges, special tokens),
    /// with `tokenizer.ggml.pre` set to `preTokenizer`.
    public static func vocabulary(preTokenizer: String) throws -> [(String, GGUFValue)] {
        guard let source = TestPaths.model(TestPaths.smolLM2) else {
            throw LlamaToolError(
                "synthetic models copy the vocabulary of models/\(TestPaths.smolLM2), which is absent; run scripts/fetch-models"
            )
        }
        let file = try GGUFFile(path: source.path)
        return file.metadataKeys.filter { $0.hasPrefix("tokenizer.") && $0 != "tokenizer.chat_template" }.compactMap {
            key in
            key == "tokenizer.ggml.pre" ? (key, .string(preTokenizer)) : file.metadata[key].map { (key, $0) }
        }
    }

    // MARK: Quantized files, cached

    /// Why synthetic files cannot be made here (no SmolLM2 vocabulary, no reference `llama-quantize`), or nil.
    public static var unavailable: String? {
        if TestPaths.model(TestPaths.smolLM2) == nil { return "models/\(TestPaths.smolLM2) (the vocabulary) is absent" }
        if LlamaTools.reference == nil { return LlamaTools.referenceUnavailable }
        return nil
    }

    /// The file of `spec` with weights from `seed` in `type`: "F32" (as `make` writes it) or any type name
    /// `llama-quantize` takes — single types ("Q4_0", "Q2_K", "IQ4_XS", "F16", "BF16", …) are quantized `--pure`
    /// (every matrix that type), mixes ("Q4_K_M", "Q5_K_M", "Q3_K_M") as llama.cpp mixes them. Made once and
    /// kept in `directory` (the temporary directory's `sanad-synthetic` unless given) under a name with the spec's
    /// digest, the seed and the type.
    public static func file(_ spec: Spec, seed: UInt64, type: String, in directory: URL = cacheDirectory) throws -> URL
    {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = cachedURL(spec, seed: seed, type: type, in: directory)
        let stem = url.deletingPathExtension().lastPathComponent
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if FileManager.default.fileExists(atPath: url.path) { return url }
        let partial = directory.appendingPathComponent("\(stem).\(UUID().uuidString).partial")
        defer { try? FileManager.default.removeItem(at: partial) }
        if type == "F32" {
            try make(spec, seed: seed, to: partial)
        } else {
            guard let tools = LlamaTools.reference else {
                throw LlamaToolError(
                    "cannot quantize to \(type): \(LlamaTools.referenceUnavailable ?? "no reference build")")
            }
            let source = try file(spec, seed: seed, type: "F32", in: directory)
            let pure = !mixes.contains(type)
            let arguments = (pure ? ["--pure"] : []) + [source.path, partial.path, type, "2"]
            let r = try runChildProcess(tools.tool("llama-quantize"), arguments, mergeStderr: true)
            guard !r.crashed, r.status == 0 else {
                throw LlamaToolError(
                    "llama-quantize \(arguments.joined(separator: " ")) failed (status \(r.status)):\n"
                        + String(decoding: r.stdout.suffix(2000), as: UTF8.self))
            }
        }
        // A rename: another test process making the same file at the same time loses nothing.
        if rename(partial.path, url.path) != 0 && !FileManager.default.fileExists(atPath: url.path) {
            throw LlamaToolError("cannot rename \(partial.path) to \(url.path): errno \(errno)")
        }
        return url
    }

    /// The name `file` gives the file of `spec`, `seed` and `type` in `directory`, made or not.
    public static func cachedURL(_ spec: Spec, seed: UInt64, type: String, in directory: URL = cacheDirectory) -> URL {
        directory.appendingPathComponent("\(spec.architecture)-\(spec.digest)-seed\(seed)-\(type).gguf")
    }

    /// Where `file` keeps the files it makes unless told otherwise: `$TMPDIR/sanad-synthetic`.
    public static var cacheDirectory: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("sanad-synthetic")
    }

    /// Every single weight type the pure-Swift engine multiplies with (made `--pure`) and the mixes llama.cpp users
    /// download: the types the synthetic fidelity tests check every architecture in.
    public static let engineTypes = [
        "F32", "F16", "BF16", "Q4_0", "Q5_1", "Q8_0", "Q4_K", "Q6_K", "Q2_K", "Q3_K", "Q5_K", "IQ4_NL", "IQ4_XS",
        "Q4_K_M", "Q5_K_M", "Q3_K_M",
    ]

    /// The quantization mixes `file` passes to `llama-quantize` without `--pure`.
    public static let mixes: Set<String> = [
        "Q4_K_M", "Q4_K_S", "Q5_K_M", "Q5_K_S", "Q3_K_M", "Q3_K_S", "Q3_K_L", "Q2_K_S",
    ]

    private static let cacheLock = NSRecursiveLock()
}

/// SplitMix64 and the Box–Muller transform: the same values for the same seed on every machine.
struct SeededRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in (0, 1].
    mutating func unit() -> Double { Double((next() >> 11) + 1) * 0x1p-53 }

    /// Fills `values` with Normal(mean, sigma) draws, two per Box–Muller step.
    mutating func fillNormal(_ values: inout [Float], mean: Float, sigma: Float) {
        values.withUnsafeMutableBufferPointer { out in
            var i = 0
            while i < out.count {
                let r = (-2 * log(unit())).squareRoot()
                let theta = 2 * Double.pi * unit()
                out[i] = mean + sigma * Float(r * cos(theta))
                if i + 1 < out.count { out[i + 1] = mean + sigma * Float(r * sin(theta)) }
                i += 2
            }
        }
    }
}
