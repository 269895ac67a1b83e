import Foundation
import PureSwiftKernels
import SafeTensors
import SanadCore

/// A BERT encoder's hyperparameters, from a Hugging Face `config.json` (`BertModel`), and the sequence limit from
/// `sentence_bert_config.json` when there is one (else `max_position_embeddings`).
public struct BertConfiguration: Sendable, Equatable {
    public var hiddenSize: Int
    public var layers: Int
    public var heads: Int
    public var intermediateSize: Int
    public var maxPositions: Int
    public var vocabularySize: Int
    public var layerNormEpsilon: Float
    /// Tokens per sequence, `[CLS]` and `[SEP]` included; longer inputs are cut.
    public var maxSequenceLength: Int

    public var headSize: Int { hiddenSize / heads }

    /// Reads `config.json` (and `sentence_bert_config.json`) in `folder`; an odd or missing value is an error naming
    /// the file and the key.
    public init(folder: URL) throws {
        let path = folder.appendingPathComponent("config.json").path
        guard let data = FileManager.default.contents(atPath: path),
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw PureSwiftError.badHyperparameter(path: path, key: "(file)", problem: "is missing or not JSON") }
        func int(_ key: String, _ range: ClosedRange<Int>) throws -> Int {
            guard let v = json[key] as? Int, range.contains(v) else {
                throw PureSwiftError.badHyperparameter(
                    path: path, key: key, problem: "is missing or outside \(range.lowerBound)…\(range.upperBound)")
            }
            return v
        }
        if let kind = json["model_type"] as? String, kind != "bert" {
            throw PureSwiftError.unsupportedArchitecture(path: path, architecture: kind, supported: ["bert"])
        }
        if let act = json["hidden_act"] as? String, act != "gelu" {
            throw PureSwiftError.unsupportedFeature(path: path, feature: "hidden_act '\(act)' (gelu only)")
        }
        if let kind = json["position_embedding_type"] as? String, kind != "absolute" {
            throw PureSwiftError.unsupportedFeature(path: path, feature: "position_embedding_type '\(kind)'")
        }
        hiddenSize = try int("hidden_size", 1...8192)
        layers = try int("num_hidden_layers", 1...256)
        heads = try int("num_attention_heads", 1...256)
        intermediateSize = try int("intermediate_size", 1...65536)
        maxPositions = try int("max_position_embeddings", 2...65536)
        vocabularySize = try int("vocab_size", 1...1 << 22)
        guard hiddenSize % heads == 0 else {
            throw PureSwiftError.badHyperparameter(
                path: path, key: "num_attention_heads", problem: "\(heads) does not divide hidden_size \(hiddenSize)")
        }
        guard let eps = json["layer_norm_eps"] as? Double, eps > 0, eps < 1 else {
            throw PureSwiftError.badHyperparameter(
                path: path, key: "layer_norm_eps", problem: "is missing or not in (0, 1)")
        }
        layerNormEpsilon = Float(eps)
        maxSequenceLength = maxPositions
        let sbert = folder.appendingPathComponent("sentence_bert_config.json").path
        if let d = FileManager.default.contents(atPath: sbert),
            let j = try? JSONSerialization.jsonObject(with: d) as? [String: Any], let n = j["max_seq_length"] as? Int
        {
            guard (2...maxPositions).contains(n) else {
                throw PureSwiftError.badHyperparameter(
                    path: sbert, key: "max_seq_length", problem: "\(n) is outside 2…\(maxPositions)")
            }
            maxSequenceLength = n
        }
    }
}

/// One encoder layer: attention (Q, K and V packed as one matrix), its output projection and LayerNorm, then the
/// GELU feed-forward and its LayerNorm (post-norm).
struct BertLayer {
    let qkv: PackedF32Matrix  // (3·hidden) × hidden
    let attentionOutput: PackedF32Matrix  // hidden × hidden
    let attentionNorm: LayerNorm
    let up: PackedF32Matrix  // intermediate × hidden
    let down: PackedF32Matrix  // hidden × intermediate
    let outputNorm: LayerNorm
}

/// A BERT encoder (`BertModel`, Hugging Face safetensors names) in the pure-Swift engine: word + position +
/// token-type embeddings and LayerNorm, then post-norm layers of bidirectional attention and a GELU (erf)
/// feed-forward. A batch of sequences is packed back to back without padding: every projection runs on all the
/// batch's tokens at once, and attention runs per sequence over that sequence's own tokens (what a padding mask
/// computes, without the padded rows). Linear weights are packed once for `multiplyPackedF32`; the embedding tables
/// are read in place from the memory-mapped file.
public final class BertModel: @unchecked Sendable {  // @unchecked: immutable after init; scratch is per call
    public let configuration: BertConfiguration
    public let path: String
    let file: SafeTensorsFile
    let wordEmbeddings: UnsafeRawPointer  // (vocabulary, hidden), F32 in the mapping
    let positionEmbeddings: UnsafeRawPointer  // (maxPositions, hidden)
    let tokenTypeEmbedding: UnsafeRawPointer  // (hidden): type 0
    let embeddingNorm: LayerNorm
    let layers: [BertLayer]
    let kernels: any KernelSet
    /// The norm weights' copies.
    private let owned: ScratchBuffers

    /// Loads `model.safetensors` in `folder` with the hyperparameters of `configuration`.
    public init(folder: URL, configuration c: BertConfiguration, kernels: any KernelSet) throws {
        configuration = c
        self.kernels = kernels
        let path = folder.appendingPathComponent("model.safetensors").path
        let owned = ScratchBuffers()
        self.path = path
        self.owned = owned
        let file = try SafeTensorsFile(path: path)
        self.file = file
        let h = c.hiddenSize
        // Some exports prefix every name with "bert.".
        let prefix = file.tensors["bert.embeddings.word_embeddings.weight"] != nil ? "bert." : ""
        func mapped(_ name: String, _ shape: [Int]) throws -> UnsafeRawPointer {
            let t = try file.info(prefix + name, shape: shape)
            guard t.dtype == .F32 else {
                throw PureSwiftError.unsupportedTensorType(
                    path: path, tensor: t.name, type: t.dtype.rawValue, supported: ["F32"])
            }
            guard let base = file.bytes(t).baseAddress else {
                throw PureSwiftError.badTensorShape(path: path, tensor: t.name, expected: "\(shape)", found: t.shape)
            }
            return base
        }
        func vector(_ name: String, _ count: Int) throws -> UnsafePointer<Float> {
            let values = try file.floats(prefix + name, shape: [count])
            let p = try owned.floats(count)
            p.update(from: values, count: count)
            return UnsafePointer(p)
        }
        func norm(_ name: String) throws -> LayerNorm {
            LayerNorm(
                weight: try vector(name + ".weight", h), bias: try vector(name + ".bias", h),
                epsilon: c.layerNormEpsilon)
        }
        func packed(_ names: [String], rows: Int, columns: Int) throws -> PackedF32Matrix {
            let weights = try names.map { try file.floats(prefix + $0 + ".weight", shape: [rows, columns]) }
            let biases = try names.map { try file.floats(prefix + $0 + ".bias", shape: [rows]) }
            let matrix = PackedF32Matrix(inputs: columns, parts: names.indices.map { (weights[$0], biases[$0]) })
            guard let matrix else {
                throw SanadError.engine("pure-swift: out of memory packing \(names.joined(separator: ", "))")
            }
            return matrix
        }
        wordEmbeddings = try mapped("embeddings.word_embeddings.weight", [c.vocabularySize, h])
        positionEmbeddings = try mapped("embeddings.position_embeddings.weight", [c.maxPositions, h])
        let types = try file.info(prefix + "embeddings.token_type_embeddings.weight")
        tokenTypeEmbedding = try mapped(
            "embeddings.token_type_embeddings.weight", [max(1, types.shape.first ?? 1), h])
        embeddingNorm = try norm("embeddings.LayerNorm")
        var layers: [BertLayer] = []
        for i in 0..<c.layers {
            let p = "encoder.layer.\(i)."
            layers.append(
                BertLayer(
                    qkv: try packed(
                        [p + "attention.self.query", p + "attention.self.key", p + "attention.self.value"], rows: h,
                        columns: h),
                    attentionOutput: try packed([p + "attention.output.dense"], rows: h, columns: h),
                    attentionNorm: try norm(p + "attention.output.LayerNorm"),
                    up: try packed([p + "intermediate.dense"], rows: c.intermediateSize, columns: h),
                    down: try packed([p + "output.dense"], rows: h, columns: c.intermediateSize),
                    outputNorm: try norm(p + "output.LayerNorm")))
        }
        self.layers = layers
    }

    /// Bytes of the packed weights (the private copy the model keeps).
    public var packedByteCount: Int {
        layers.reduce(0) { $0 + $1.qkv.byteCount + $1.attentionOutput.byteCount + $1.up.byteCount + $1.down.byteCount }
    }

    /// The last layer's hidden states, mean-pooled over each sequence's tokens and L2-normalised: one vector per
    /// sequence of `batch` (ids already cut to `maxSequenceLength`, each in the vocabulary).
    public func meanPooledEmbeddings(_ batch: [[Int32]], threads: Int) throws -> [[Float]] {
        let c = configuration
        let h = c.hiddenSize
        var starts = [0]  // first token of each sequence, then the total
        for ids in batch { starts.append(starts[starts.count - 1] + ids.count) }
        let tokens = starts[batch.count]
        guard tokens > 0 else { return batch.map { _ in [Float](repeating: 0, count: h) } }
        for ids in batch {
            guard ids.count <= c.maxSequenceLength else {
                throw SanadError.promptTooLong(tokens: ids.count, context: c.maxSequenceLength)
            }
            for id in ids where id < 0 || Int(id) >= c.vocabularySize {
                throw PureSwiftError.tokenOutOfRange(token: id, vocabularySize: c.vocabularySize)
            }
        }
        let scratch = ScratchBuffers()
        let x = try scratch.floats(tokens * h)  // (tokens, hidden)
        let qkv = try scratch.floats(tokens * 3 * h)  // (tokens, 3·hidden): Q, K, V per token
        let attended = try scratch.floats(tokens * h)  // (tokens, hidden)
        let sum = try scratch.floats(tokens * h)  // (tokens, hidden): sublayer output + residual
        let hidden = try scratch.floats(tokens * c.intermediateSize)  // (tokens, intermediate)
        let longest = batch.map(\.count).max() ?? 1
        let workers = max(1, threads)
        let weights = try scratch.floats(workers * longest)  // (workers, longest): attention weights

        // Embeddings: word + position + token type 0, then LayerNorm.
        for (s, ids) in batch.enumerated() {
            for (position, id) in ids.enumerated() {
                let row = x + (starts[s] + position) * h
                let word = wordEmbeddings + Int(id) * h * 4
                let pos = positionEmbeddings + position * h * 4
                for i in 0..<h {
                    row[i] =
                        word.loadUnaligned(fromByteOffset: 4 * i, as: Float.self)
                        + pos.loadUnaligned(fromByteOffset: 4 * i, as: Float.self)
                        + tokenTypeEmbedding.loadUnaligned(fromByteOffset: 4 * i, as: Float.self)
                }
            }
        }
        normalizeRows(embeddingNorm, x, into: x, rows: tokens, width: h, threads: workers)

        for layer in layers {
            matmulPackedF32(layer.qkv, x, rows: tokens, out: qkv, threads: workers, kernels: kernels)
            attend(qkv, into: attended, starts: starts, weights: weights, longest: longest, threads: workers)
            matmulPackedF32(layer.attentionOutput, attended, rows: tokens, out: sum, threads: workers, kernels: kernels)
            addResidual(x, to: sum, count: tokens * h)
            normalizeRows(layer.attentionNorm, sum, into: x, rows: tokens, width: h, threads: workers)
            matmulPackedF32(layer.up, x, rows: tokens, out: hidden, threads: workers, kernels: kernels)
            let width = c.intermediateSize
            parallelChunks(tokens, threads: workers) { rows in
                let p = hidden + rows.lowerBound * width
                self.kernels.geluErfApproximate(p, out: p, count: rows.count * width)
            }
            matmulPackedF32(layer.down, hidden, rows: tokens, out: sum, threads: workers, kernels: kernels)
            addResidual(x, to: sum, count: tokens * h)
            normalizeRows(layer.outputNorm, sum, into: x, rows: tokens, width: h, threads: workers)
        }

        // Mean over each sequence's tokens, then unit length.
        return batch.indices.map { s in
            let count = batch[s].count
            guard count > 0 else { return [Float](repeating: 0, count: h) }
            var mean = [Double](repeating: 0, count: h)
            for t in starts[s]..<starts[s + 1] {
                let row = x + t * h
                for i in 0..<h { mean[i] += Double(row[i]) }
            }
            var norm: Double = 0
            for i in 0..<h {
                mean[i] /= Double(count)
                norm += mean[i] * mean[i]
            }
            let scale = norm > 0 ? 1 / norm.squareRoot() : 0
            return mean.map { Float($0 * scale) }
        }
    }

    /// Bidirectional attention of every sequence over its own tokens: `out` (tokens, hidden) from `qkv` (tokens,
    /// 3·hidden), one (sequence, head) pair per task.
    private func attend(
        _ qkv: UnsafeMutablePointer<Float>, into out: UnsafeMutablePointer<Float>, starts: [Int],
        weights: UnsafeMutablePointer<Float>, longest: Int, threads: Int
    ) {
        let c = configuration
        let h = c.hiddenSize
        let d = c.headSize
        let stride = 3 * h
        let scale = 1 / Float(d).squareRoot()
        let sequences = starts.count - 1
        parallelChunksIndexed(sequences * c.heads, threads: threads) { worker, tasks in
            let w = weights + worker * longest
            for task in tasks {
                let s = task / c.heads
                let head = task % c.heads
                let first = starts[s]
                let n = starts[s + 1] - first
                for i in 0..<n {
                    let q = qkv + (first + i) * stride + head * d
                    var largest = -Float.infinity
                    for j in 0..<n {
                        w[j] = dotProduct(q, qkv + (first + j) * stride + h + head * d, count: d) * scale
                        largest = max(largest, w[j])
                    }
                    var total: Float = 0
                    for j in 0..<n {
                        w[j] = expf(w[j] - largest)
                        total += w[j]
                    }
                    let o = out + (first + i) * h + head * d
                    o.update(repeating: 0, count: d)
                    for j in 0..<n {
                        accumulate(
                            qkv + (first + j) * stride + 2 * h + head * d, times: w[j] / total, into: o, count: d)
                    }
                }
            }
        }
    }
}

/// Σ a[i]·b[i], eight lanes at a time.
@inline(__always)
private func dotProduct(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
    var acc = SIMD8<Float>()
    var i = 0
    while i + 8 <= count {
        acc +=
            UnsafeRawPointer(a + i).loadUnaligned(as: SIMD8<Float>.self)
            * UnsafeRawPointer(b + i).loadUnaligned(as: SIMD8<Float>.self)
        i += 8
    }
    var sum = acc.sum()
    while i < count {
        sum += a[i] * b[i]
        i += 1
    }
    return sum
}

/// `out[i] += scale · x[i]`, eight lanes at a time.
@inline(__always)
private func accumulate(
    _ x: UnsafePointer<Float>, times scale: Float, into out: UnsafeMutablePointer<Float>, count: Int
) {
    var i = 0
    while i + 8 <= count {
        let o = UnsafeMutableRawPointer(out + i)
        o.storeBytes(
            of: o.load(as: SIMD8<Float>.self) + UnsafeRawPointer(x + i).loadUnaligned(as: SIMD8<Float>.self) * scale,
            as: SIMD8<Float>.self)
        i += 8
    }
    while i < count {
        out[i] += scale * x[i]
        i += 1
    }
}

/// `norm` over `rows` rows, split over `threads` workers.
private func normalizeRows(
    _ norm: LayerNorm, _ x: UnsafeMutablePointer<Float>, into out: UnsafeMutablePointer<Float>, rows: Int, width: Int,
    threads: Int
) {
    parallelChunks(rows, threads: rows * width < 1 << 14 ? 1 : threads) { range in
        norm.apply(
            x + range.lowerBound * width, into: out + range.lowerBound * width, rows: range.count, width: width)
    }
}
