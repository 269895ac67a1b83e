import Foundation

/// Writes small GGUF files: metadata of every kind and tensors with given raw bytes. The tests build synthetic and
/// hostile models with it; the native-library probe writes the tiny model it runs (see `sanad-probe`).
public struct GGUFWriter: Sendable {
    public struct Tensor: Sendable {
        public var name: String
        public var type: GGMLType
        public var dimensions: [Int]
        public var data: [UInt8]

        public init(name: String, type: GGMLType, dimensions: [Int], data: [UInt8]) {
            self.name = name
            self.type = type
            self.dimensions = dimensions
            self.data = data
        }

        /// An F32 tensor from floats.
        public static func f32(_ name: String, _ dimensions: [Int], _ values: [Float]) -> Tensor {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(values.count * 4)
            for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
            return Tensor(name: name, type: .f32, dimensions: dimensions, data: bytes)
        }
    }

    public var version: UInt32 = 3
    public var alignment = 32
    public var metadata: [(String, GGUFValue)] = []
    public var tensors: [Tensor] = []

    public init() {}

    public mutating func set(_ key: String, _ value: GGUFValue) {
        metadata.removeAll { $0.0 == key }
        metadata.append((key, value))
    }

    /// The file's bytes.
    public func bytes() -> [UInt8] {
        var out: [UInt8] = []
        func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        func putString(_ s: String) {
            put(UInt64(s.utf8.count))
            out.append(contentsOf: Array(s.utf8))
        }
        func putValue(_ v: GGUFValue) {
            switch v {
            case .uint8(let x): put(x)
            case .int8(let x): put(x)
            case .uint16(let x): put(x)
            case .int16(let x): put(x)
            case .uint32(let x): put(x)
            case .int32(let x): put(x)
            case .uint64(let x): put(x)
            case .int64(let x): put(x)
            case .float32(let x): put(x.bitPattern)
            case .float64(let x): put(x.bitPattern)
            case .bool(let b): put(UInt8(b ? 1 : 0))
            case .string(let s): putString(s)
            case .array(let t, let values):
                put(t.rawValue)
                put(UInt64(values.count))
                for e in values { putValue(e) }
            }
        }
        put(UInt32(0x4655_4747))
        put(version)
        put(UInt64(tensors.count))
        put(UInt64(metadata.count))
        for (k, v) in metadata {
            putString(k)
            put(v.type.rawValue)
            putValue(v)
        }
        var offsets: [Int] = []
        var offset = 0
        for t in tensors {
            offsets.append(offset)
            offset += (t.data.count + alignment - 1) / alignment * alignment
        }
        for (t, o) in zip(tensors, offsets) {
            putString(t.name)
            put(UInt32(t.dimensions.count))
            for d in t.dimensions { put(UInt64(d)) }
            put(t.type.rawValue)
            put(UInt64(o))
        }
        while out.count % alignment != 0 { out.append(0) }
        for t in tensors {
            out.append(contentsOf: t.data)
            while out.count % alignment != 0 { out.append(0) }
        }
        return out
    }

    /// Writes the file to `url` and returns it.
    @discardableResult
    public func write(to url: URL) throws -> URL {
        try Data(bytes()).write(to: url)
        return url
    }
}

extension GGUFValue {
    /// A string array value.
    public static func strings(_ values: [String]) -> GGUFValue {
        .array(.string, GGUFArray(values.map { .string($0) }))
    }
    public static func int32s(_ values: [Int32]) -> GGUFValue { .array(.int32, GGUFArray(values.map { .int32($0) })) }
    public static func float32s(_ values: [Float]) -> GGUFValue {
        .array(.float32, GGUFArray(values.map { .float32($0) }))
    }
}

extension GGUFWriter {
    /// The hyperparameters of a small llama-architecture model, for writing one (the tests' synthetic models, the
    /// native-library probe's tiny model).
    public struct LlamaShape: Sendable {
        public var architecture = "llama"
        public var layers: Int
        public var contextLength = 128
        public var width: Int
        public var feedForward: Int
        public var heads: Int
        public var kvHeads: Int

        public init(
            architecture: String = "llama", layers: Int, contextLength: Int = 128, width: Int, feedForward: Int,
            heads: Int, kvHeads: Int
        ) {
            self.architecture = architecture
            self.layers = layers
            self.contextLength = contextLength
            self.width = width
            self.feedForward = feedForward
            self.heads = heads
            self.kvHeads = kvHeads
        }
    }

    /// `general.architecture` and the keys llama.cpp and the engines read for `shape` (RoPE base 10,000, RMS norm
    /// epsilon 1e-5).
    public mutating func setLlama(_ shape: LlamaShape) {
        let a = shape.architecture
        set("general.architecture", .string(a))
        set("\(a).block_count", .uint32(UInt32(shape.layers)))
        set("\(a).context_length", .uint32(UInt32(shape.contextLength)))
        set("\(a).embedding_length", .uint32(UInt32(shape.width)))
        set("\(a).feed_forward_length", .uint32(UInt32(shape.feedForward)))
        set("\(a).attention.head_count", .uint32(UInt32(shape.heads)))
        set("\(a).attention.head_count_kv", .uint32(UInt32(shape.kvHeads)))
        set("\(a).rope.freq_base", .float32(10_000))
        set("\(a).attention.layer_norm_rms_epsilon", .float32(1e-5))
    }

    /// A byte-level BPE vocabulary (`gpt2`, SmolLM2's pre-tokenizer): `tokens` with `control` marked as control
    /// tokens (type 3, the others normal), and `merges`.
    public mutating func setByteLevelBPE(tokens: [String], merges: [String], control: Set<String>) {
        set("tokenizer.ggml.model", .string("gpt2"))
        set("tokenizer.ggml.pre", .string("smollm"))
        set("tokenizer.ggml.tokens", .strings(tokens))
        set("tokenizer.ggml.token_type", .int32s(tokens.map { control.contains($0) ? 3 : 1 }))
        set("tokenizer.ggml.merges", .strings(merges))
    }
}
