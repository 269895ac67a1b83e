import Foundation
import PureSwiftKernels
import SanadCore

/// Continuous batching (SanadCore's `SharedPasses`): sessions made together (`PureSwiftSession.sharing`) run one
/// model through one runner (its scratch buffers and threads), each with its own KV cache. A session's prompt runs
/// on its own; the single-token steps of sessions that generate at the same time run as one forward pass
/// (`DecoderRunner.decode`), so the weights are read once for all of them.
// @unchecked Sendable: the runner runs for one caller at a time (`SharedPasses`)
final class SharedDecoder: @unchecked Sendable {
    private let runner: any DecoderRunner
    private let passes: SharedPasses<Step>
    /// Logits of one pass: a row per stream.
    private let passLogits: UnsafeMutablePointer<Float>

    private struct Step {
        let token: Int32
        let cache: KVCache
        let logits: UnsafeMutablePointer<Float>
    }

    /// Shares `runner` among up to `streams` sessions (at most the runner's micro-batch). Throws when the logits of
    /// a pass cannot be had.
    init(runner: any DecoderRunner, streams: Int) throws {
        self.runner = runner
        let streams = max(1, min(streams, runner.state.microBatch))
        let passLogits = try allocateZeroed(
            Float.self, count: streams * runner.vocabularySize, for: "the logits of \(streams) streams")
        self.passLogits = passLogits
        passes = SharedPasses(streams: streams) { pass in
            let vocabularySize = runner.vocabularySize
            pass.map(\.token).withUnsafeBufferPointer { tokens in
                runner.decode(tokens, caches: pass.map(\.cache), logits: passLogits)
            }
            for (b, step) in pass.enumerated() {
                step.logits.update(from: passLogits + b * vocabularySize, count: vocabularySize)
            }
        }
    }

    deinit { free(passLogits) }

    /// The largest decoding pass so far, in streams.
    var largestPass: Int { passes.largestPass }
    var vocabularySize: Int { runner.vocabularySize }
    var batchSize: Int { runner.batchSize }

    /// A KV cache for one more session, as long as the runner's context.
    func makeCache() throws -> KVCache {
        let (shape, own) = (runner.state.shape, runner.state.cache)
        return try KVCache(
            layers: shape.layers, capacity: runner.contextLength, kvDimensions: shape.kvDimensions,
            keyType: own.keyType, valueType: own.valueType)
    }

    /// `ModelRunner.evaluate` for the session whose cache is `cache`: a single token whose logits are wanted joins
    /// a decoding pass; anything else (a prompt) runs on its own.
    func evaluate(
        _ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>, cache: KVCache
    ) {
        if tokens.count == 1 && outputs == 0..<1 {
            // The pass throws nothing: `DecoderRunner.decode` cannot fail.
            try? passes.join(Step(token: tokens[0], cache: cache, logits: logits), stream: ObjectIdentifier(cache))
            return
        }
        passes.alone { runner.evaluate(tokens, outputs: outputs, logits: logits, cache: cache) }
    }
}

/// A session's runner over a `SharedDecoder`: its own KV cache, the shared model, scratch and threads.
final class SharedDecoderSlot: ModelRunner {
    let decoder: SharedDecoder
    let cache: KVCache

    init(_ decoder: SharedDecoder) throws {
        self.decoder = decoder
        cache = try decoder.makeCache()
    }

    var position: Int { cache.count }
    var contextLength: Int { cache.capacity }
    var batchSize: Int { decoder.batchSize }
    var vocabularySize: Int { decoder.vocabularySize }
    func reset() { cache.count = 0 }

    func evaluate(_ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>) {
        decoder.evaluate(tokens, outputs: outputs, logits: logits, cache: cache)
    }
}
