import Foundation

/// One token with its log-probability: the natural log of its softmax probability over the whole vocabulary.
public struct TokenLogProbability: Sendable, Equatable {
    public var token: Int32
    /// The token's piece (`TokenEvaluator.pieceBytes`): a piece may be part of a multi-byte character.
    public var bytes: [UInt8]
    public var logProbability: Float

    public init(token: Int32, bytes: [UInt8], logProbability: Float) {
        self.token = token
        self.bytes = bytes
        self.logProbability = logProbability
    }
}

/// A generated token's log-probability and the most likely tokens at its position (highest first).
public struct GeneratedLogProbabilities: Sendable, Equatable {
    public var chosen: TokenLogProbability
    public var top: [TokenLogProbability]

    public init(chosen: TokenLogProbability, top: [TokenLogProbability]) {
        self.chosen = chosen
        self.top = top
    }

    /// The log-softmax of `logits` (the engine's raw logits: no penalty, constraint or temperature) at `chosen` and
    /// at its `topCount` most likely tokens (ties: the lower id first), in double precision.
    public static func compute(
        logits: UnsafeBufferPointer<Float>, chosen: Int32, topCount: Int, piece: (Int32) -> [UInt8]
    ) -> GeneratedLogProbabilities {
        var largest = -Float.infinity
        for v in logits where v > largest { largest = v }
        var sum = 0.0
        if largest.isFinite {
            for v in logits where v > -Float.infinity { sum += exp(Double(v - largest)) }
        }
        let logNormalizer = Double(largest) + log(sum)
        func entry(_ token: Int32) -> TokenLogProbability {
            let i = Int(token)
            let value = i >= 0 && i < logits.count ? Double(logits[i]) - logNormalizer : -.infinity
            return TokenLogProbability(token: token, bytes: piece(token), logProbability: Float(value))
        }
        // The top tokens by a small sorted insertion list: topCount is at most a few dozen.
        var best: [(token: Int, logit: Float)] = []
        if topCount > 0 {
            best.reserveCapacity(topCount + 1)
            for i in 0..<logits.count {
                let v = logits[i]
                if best.count == topCount, let last = best.last, !(v > last.logit) { continue }
                var at = best.count
                while at > 0 && best[at - 1].logit < v { at -= 1 }
                best.insert((i, v), at: at)
                if best.count > topCount { best.removeLast() }
            }
        }
        return GeneratedLogProbabilities(chosen: entry(chosen), top: best.map { entry(Int32($0.token)) })
    }
}

/// Collects the log-probabilities of a generation's tokens as the loop samples them (`GenerationParameters
/// .logProbabilities`): the entry of a token is recorded before its `.token` event is emitted, so a consumer that has
/// seen k token events finds at least k entries. The end-of-generation token is not recorded.
public final class LogProbabilityRecorder: @unchecked Sendable {  // @unchecked: `entries` only under `lock`
    /// How many alternatives each entry lists (0…`maximumTop`).
    public let topCount: Int
    public static let maximumTop = 20
    private let lock = NSLock()
    private var entries: [GeneratedLogProbabilities] = []

    public init(topCount: Int) {
        self.topCount = max(0, min(topCount, Self.maximumTop))
    }

    public func record(_ entry: GeneratedLogProbabilities) {
        lock.lock()
        entries.append(entry)
        lock.unlock()
    }

    /// The entries recorded so far.
    public var recorded: [GeneratedLogProbabilities] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }

    /// The entries from `start` on (empty when there are none yet).
    public func recorded(from start: Int) -> [GeneratedLogProbabilities] {
        lock.lock()
        defer { lock.unlock() }
        return start < entries.count ? Array(entries[start...]) : []
    }
}
