import GGUF
import PureSwiftKernels

/// What every decoder architecture reads the same way: its widths, heads and vocabulary.
public struct DecoderDimensions: Sendable, Equatable {
    public var layers: Int
    /// Width of the residual stream (`embedding_length`).
    public var embedding: Int
    public var feedForward: Int
    public var heads: Int
    public var kvHeads: Int
    public var headDimension: Int
    public var trainingContextLength: Int
    public var vocabularySize: Int
    public var normEpsilon: Float

    public var queryDimensions: Int { heads * headDimension }
    public var kvDimensions: Int { kvHeads * headDimension }
    /// Bytes the F16 keys and values of one position take over every layer.
    public var kvBytesPerPosition: Int { layers * kvDimensions * 2 * 2 }
}

/// An architecture's configuration or shape, which reads its `dimensions` as its own properties
/// (`configuration.layers`).
@dynamicMemberLookup
public protocol DecoderConfiguration {
    var dimensions: DecoderDimensions { get set }
}

extension DecoderConfiguration {
    public subscript<T>(dynamicMember path: WritableKeyPath<DecoderDimensions, T>) -> T {
        get { dimensions[keyPath: path] }
        set { dimensions[keyPath: path] = newValue }
    }

    public subscript<T>(dynamicMember path: KeyPath<DecoderDimensions, T>) -> T { dimensions[keyPath: path] }
}

/// The shape of a model's attention, read from `<arch>.attention.*`.
struct AttentionShape: Sendable, Equatable {
    var heads: Int
    var kvHeads: Int
    /// Values per head (keys and values alike).
    var headDimension: Int
}

extension HyperparameterReader {
    /// `block_count`, `embedding_length`, `feed_forward_length`, the attention shape, `context_length`,
    /// `attention.layer_norm_rms_epsilon` and the vocabulary size.
    func decoderDimensions() throws -> DecoderDimensions {
        let layers = try int("block_count")
        let embedding = try int("embedding_length")
        let feedForward = try int("feed_forward_length")
        let shape = try attentionShape(embedding: embedding)
        let trainingContextLength = try int("context_length")
        let normEpsilon = try float("attention.layer_norm_rms_epsilon")
        return DecoderDimensions(
            layers: layers, embedding: embedding, feedForward: feedForward, heads: shape.heads,
            kvHeads: shape.kvHeads, headDimension: shape.headDimension, trainingContextLength: trainingContextLength,
            vocabularySize: try vocabularySize(), normEpsilon: normEpsilon)
    }

    /// `attention.head_count`, `head_count_kv` (default: the head count), `key_length` (default: the embedding
    /// width over the heads) and `value_length` (which must equal it), checked against what the blocks compute:
    /// whole groups of query heads per KV head and heads of a multiple of 16 values.
    func attentionShape(embedding: Int) throws -> AttentionShape {
        let heads = try int("attention.head_count")
        let kvHeads = try int("attention.head_count_kv", default: heads)
        let headDimension = try int("attention.key_length", default: embedding / heads)
        let valueLength = try int("attention.value_length", default: headDimension)
        guard valueLength == headDimension else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: key("attention.value_length"),
                problem: "is \(valueLength) but the key length is \(headDimension); the engine needs them equal")
        }
        guard heads % kvHeads == 0 else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: key("attention.head_count_kv"),
                problem: "is \(kvHeads), which does not divide attention.head_count \(heads)")
        }
        guard headDimension % 16 == 0 else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: key("attention.key_length"),
                problem: "gives a head size of \(headDimension); the pure-Swift engine needs a multiple of 16")
        }
        return AttentionShape(heads: heads, kvHeads: kvHeads, headDimension: headDimension)
    }

    /// The rotary embedding of heads of `headDimension` values in `mode`: `rope.freq_base` (default `defaultBase`),
    /// linear scaling from `rope.scaling.factor` or `rope.scale_linear` (llama.cpp reads the factor whatever
    /// `rope.scaling.type` says, and ignores it for `none`; the types outside `scalingTypes`, such as YaRN, need
    /// more and are refused), `rope.scaling.attn_factor` (cos and sin times it), `rope.dimension_count` (the head
    /// size, or with `partialRotation` an even count up to it: the rest of each head passes through).
    func rope(
        mode: RoPEMode, headDimension: Int, defaultBase: Float = 10_000, partialRotation: Bool = false,
        scalingTypes: Set<String> = ["none", "linear"]
    ) throws -> RoPEConfiguration {
        let dimensions = try int("rope.dimension_count", default: headDimension)
        if partialRotation {
            guard dimensions <= headDimension, dimensions % 2 == 0 else {
                throw PureSwiftError.badHyperparameter(
                    path: file.path, key: key("rope.dimension_count"),
                    problem: "is \(dimensions); the engine rotates an even count up to the head size \(headDimension)")
            }
        } else {
            guard dimensions == headDimension else {
                throw PureSwiftError.badHyperparameter(
                    path: file.path, key: key("rope.dimension_count"),
                    problem: "is \(dimensions) but the head size is \(headDimension); the engine rotates whole heads")
            }
        }
        let scalingType = string("rope.scaling.type") ?? "linear"
        guard scalingTypes.contains(scalingType) else {
            throw PureSwiftError.unsupportedFeature(
                path: file.path, feature: "RoPE scaling '\(scalingType)' (\(key("rope.scaling.type")))")
        }
        let factor = try float("rope.scaling.factor", default: try float("rope.scale_linear", default: 0))
        return RoPEConfiguration(
            mode: mode, dimensions: dimensions, frequencyBase: try float("rope.freq_base", default: defaultBase),
            frequencyScale: factor == 0 || scalingType == "none" ? 1 : 1 / factor,
            attentionFactor: try float("rope.scaling.attn_factor", default: 1))
    }

    /// The rows of `token_embd.weight`, checked against `vocab_size` when the file has it.
    func vocabularySize() throws -> Int {
        let rows = try file.requireTensor("token_embd.weight").rowCount
        if let declared = file.int(key("vocab_size")), declared != rows {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: key("vocab_size"),
                problem: "is \(declared) but token_embd.weight has \(rows) rows")
        }
        return rows
    }
}
