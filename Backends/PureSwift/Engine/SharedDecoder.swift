import Foundation
import PureSwiftKernels

/// Continuous batching: sessions made together (`PureSwiftSession.sharing`) run one model through one runner (its
/// scratch buffers and threads), each with its own KV cache. A session's prompt runs on its own; the single-token
/// steps of sessions that generate at the same time run as one forward pass (`DecoderRunner.decode`), so the
/// weights are read once for all of them and the tokens per second of all streams together grow with their number.
///
/// Steps meet here. The first to arrive while no pass runs leads: it waits, at most `gatherWindow`, until every
/// session of the last two passes has its step in (a session that is still generating comes back within one
/// sampling step), runs one pass for all the steps that have arrived, and wakes their sessions. A session that has
/// stopped generating delays the others once or twice by the window, then is no longer waited for; a lone stream
/// never waits.
// @unchecked Sendable: the queue and flags are guarded by `condition`; the runner runs for one caller at a time
final class SharedDecoder: @unchecked Sendable {
    /// How long a leading step waits for the other streams' steps.
    static let gatherWindow: TimeInterval = 0.002

    private let runner: any DecoderRunner
    private let condition = NSCondition()
    private var pending: [Step] = []
    /// A pass (or a prompt) is running, or a leader is gathering.
    private var busy = false
    /// The caches of the last two decoding passes.
    private var lastPass: Set<ObjectIdentifier> = []
    private var recent: Set<ObjectIdentifier> = []
    /// Logits of one pass: a row per stream.
    private let passLogits: UnsafeMutablePointer<Float>
    /// The most streams one pass takes.
    let streams: Int
    private var largest = 0

    /// The largest decoding pass so far, in streams.
    var largestPass: Int {
        condition.lock()
        defer { condition.unlock() }
        return largest
    }

    private final class Step {
        let token: Int32
        let cache: KVCache
        let logits: UnsafeMutablePointer<Float>
        var done = false
        init(token: Int32, cache: KVCache, logits: UnsafeMutablePointer<Float>) {
            self.token = token
            self.cache = cache
            self.logits = logits
        }
    }

    /// Shares `runner` among up to `streams` sessions (at most the runner's micro-batch). Throws when the logits of
    /// a pass cannot be had.
    init(runner: any DecoderRunner, streams: Int) throws {
        self.runner = runner
        self.streams = max(1, min(streams, runner.state.microBatch))
        passLogits = try allocateZeroed(
            Float.self, count: self.streams * runner.vocabularySize, for: "the logits of \(streams) streams")
    }

    deinit { free(passLogits) }

    var vocabularySize: Int { runner.vocabularySize }
    var batchSize: Int { runner.batchSize }

    /// A KV cache for one more session, as long as the runner's context.
    func makeCache() throws -> KVCache {
        let shape = runner.state.shape
        return try KVCache(layers: shape.layers, capacity: runner.contextLength, kvDimensions: shape.kvDimensions)
    }

    /// `ModelRunner.evaluate` for the session whose cache is `cache`: a single token whose logits are wanted joins
    /// a decoding pass; anything else (a prompt) runs on its own.
    func evaluate(
        _ tokens: UnsafeBufferPointer<Int32>, outputs: Range<Int>, logits: UnsafeMutablePointer<Float>, cache: KVCache
    ) {
        if tokens.count == 1 && outputs == 0..<1 {
            decode(tokens[0], cache: cache, logits: logits)
            return
        }
        condition.lock()
        while busy { condition.wait() }
        busy = true
        condition.unlock()
        runner.evaluate(tokens, outputs: outputs, logits: logits, cache: cache)
        condition.lock()
        busy = false
        condition.broadcast()
        condition.unlock()
    }

    private func decode(_ token: Int32, cache: KVCache, logits: UnsafeMutablePointer<Float>) {
        let step = Step(token: token, cache: cache, logits: logits)
        condition.lock()
        defer { condition.unlock() }
        pending.append(step)
        condition.broadcast()  // a leader may be waiting for this step
        while !step.done {
            if busy {
                condition.wait()
                continue
            }
            busy = true
            let deadline = Date().addingTimeInterval(Self.gatherWindow)
            while !recentStepsArrived() && Date() < deadline { _ = condition.wait(until: deadline) }
            let pass = Array(pending.prefix(streams))
            pending.removeFirst(pass.count)
            condition.unlock()
            run(pass)
            condition.lock()
            for s in pass { s.done = true }
            let ids = Set(pass.map { ObjectIdentifier($0.cache) })
            recent = ids.union(lastPass)
            lastPass = ids
            largest = max(largest, pass.count)
            busy = false
            condition.broadcast()
        }
    }

    /// Whether every session of the last two passes has a step waiting (under the lock).
    private func recentStepsArrived() -> Bool {
        guard pending.count < streams else { return true }
        let arrived = Set(pending.map { ObjectIdentifier($0.cache) })
        return recent.isSubset(of: arrived)
    }

    private func run(_ pass: [Step]) {
        let vocabularySize = runner.vocabularySize
        pass.map(\.token).withUnsafeBufferPointer { tokens in
            runner.decode(tokens, caches: pass.map(\.cache), logits: passLogits)
        }
        for (b, step) in pass.enumerated() {
            step.logits.update(from: passLogits + b * vocabularySize, count: vocabularySize)
        }
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
