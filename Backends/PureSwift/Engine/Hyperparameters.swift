import GGUF
import PureSwiftKernels

/// The shape of a model's attention, read from `<arch>.attention.*`.
struct AttentionShape: Sendable, Equatable {
    var heads: Int
    var kvHeads: Int
    /// Values per head (keys and values alike).
    var headDimension: Int
}

extension HyperparameterReader {
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

    /// The rotary embedding of whole heads of `headDimension` values in `mode`: `rope.freq_base` (default
    /// `defaultBase`), linear scaling from `rope.scaling.factor` or `rope.scale_linear` (llama.cpp reads the factor
    /// whatever `rope.scaling.type` says; YaRN and LongRoPE need more and are refused), `rope.dimension_count`
    /// (which must be the head size).
    func rope(mode: RoPEMode, headDimension: Int, defaultBase: Float = 10_000) throws -> RoPEConfiguration {
        let dimensions = try int("rope.dimension_count", default: headDimension)
        guard dimensions == headDimension else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: key("rope.dimension_count"),
                problem: "is \(dimensions) but the head size is \(headDimension); the engine rotates whole heads")
        }
        let scalingType = string("rope.scaling.type") ?? "none"
        guard scalingType == "none" || scalingType == "linear" else {
            throw PureSwiftError.unsupportedFeature(
                path: file.path, feature: "RoPE scaling '\(scalingType)' (\(key("rope.scaling.type")))")
        }
        let factor = try float("rope.scaling.factor", default: try float("rope.scale_linear", default: 0))
        return RoPEConfiguration(
            mode: mode, dimensions: dimensions, frequencyBase: try float("rope.freq_base", default: defaultBase),
            frequencyScale: factor == 0 ? 1 : 1 / factor)
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
