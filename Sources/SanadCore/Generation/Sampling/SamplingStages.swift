import Foundation

// The stages of the sampling chain as free functions over a candidate list. Candidates are (token, logit) pairs;
// after `sortDescending` they are ordered by logit, highest first. Each stage keeps at least one candidate.

/// A token still in the running, with its (possibly transformed) logit and, after `normalize`, its probability.
public struct SamplingCandidate: Sendable, Equatable {
    public var token: Int32
    public var logit: Float
    public var probability: Float

    public init(token: Int32, logit: Float, probability: Float = 0) {
        self.token = token
        self.logit = logit
        self.probability = probability
    }
}

/// llama.cpp's repetition penalty: each distinct token of `recent` has its logit divided by `penalty` when positive
/// and multiplied by it otherwise. `penalty == 1` does nothing.
public func applyRepetitionPenalty(
    _ logits: UnsafeMutableBufferPointer<Float>, recent: some Sequence<Int32>, penalty: Float
) {
    guard penalty != 1 else { return }
    var seen = Set<Int32>()
    for token in recent where token >= 0 && Int(token) < logits.count && seen.insert(token).inserted {
        let i = Int(token)
        logits[i] = logits[i] <= 0 ? logits[i] * penalty : logits[i] / penalty
    }
}

/// llama.cpp's frequency and presence penalties (OpenAI's `frequency_penalty` and `presence_penalty`): a token that
/// occurs `count` times in `recent` has `count × frequency + presence` subtracted from its logit. Both 0 do nothing.
public func applyFrequencyPresencePenalties(
    _ logits: UnsafeMutableBufferPointer<Float>, recent: some Sequence<Int32>, frequency: Float, presence: Float
) {
    guard frequency != 0 || presence != 0 else { return }
    var counts: [Int32: Int] = [:]
    for token in recent where token >= 0 && Int(token) < logits.count { counts[token, default: 0] += 1 }
    for (token, count) in counts {
        logits[Int(token)] -= Float(count) * frequency + presence
    }
}

/// The index of the largest logit (the first one on ties), or 0 for an empty buffer.
public func argmax(_ logits: UnsafeBufferPointer<Float>) -> Int {
    var best = 0
    var bestValue = -Float.infinity
    for i in 0..<logits.count where logits[i] > bestValue {
        best = i
        bestValue = logits[i]
    }
    return best
}

/// Sorts by logit, highest first (ties by lower token id, so results do not depend on the sort's stability).
public func sortDescending(_ candidates: inout [SamplingCandidate]) {
    candidates.sort { $0.logit > $1.logit || ($0.logit == $1.logit && $0.token < $1.token) }
}

/// Whether `a` ranks below `b` (lower logit; on equal logits the higher token id ranks lower).
@inline(__always)
func ranksBelow(_ a: SamplingCandidate, _ b: SamplingCandidate) -> Bool {
    a.logit < b.logit || (a.logit == b.logit && a.token > b.token)
}

/// Keeps the `k` highest logits, sorted (k ≤ 0 keeps all, sorted). Selection runs through a k-element min-heap,
/// O(n log k), so a 50 000-token vocabulary is not sorted whole.
public func topK(_ candidates: inout [SamplingCandidate], k: Int) {
    if k > 0 && k < candidates.count {
        var heap = Array(candidates[0..<k])
        func siftDown(_ start: Int) {
            var i = start
            while true {
                let left = 2 * i + 1
                let right = left + 1
                var smallest = i
                if left < heap.count && ranksBelow(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count && ranksBelow(heap[right], heap[smallest]) { smallest = right }
                if smallest == i { return }
                heap.swapAt(i, smallest)
                i = smallest
            }
        }
        for i in stride(from: k / 2 - 1, through: 0, by: -1) { siftDown(i) }
        for c in candidates[k...] where ranksBelow(heap[0], c) {
            heap[0] = c
            siftDown(0)
        }
        candidates = heap
    }
    sortDescending(&candidates)
}

/// Sets each candidate's probability to the softmax of the logits.
public func normalize(_ candidates: inout [SamplingCandidate]) {
    guard let maxLogit = candidates.map(\.logit).max() else { return }
    var sum: Double = 0
    for i in candidates.indices {
        let e = expf(candidates[i].logit - maxLogit)
        candidates[i].probability = e
        sum += Double(e)
    }
    let inverse = Float(1 / sum)
    for i in candidates.indices { candidates[i].probability *= inverse }
}

/// Keeps the smallest prefix (of sorted candidates) whose probability reaches `p` (p ≥ 1 keeps all).
public func topP(_ candidates: inout [SamplingCandidate], p: Float) {
    guard p < 1, candidates.count > 1 else { return }
    normalize(&candidates)
    var cumulative: Float = 0
    var keep = candidates.count
    for (i, c) in candidates.enumerated() {
        cumulative += c.probability
        if cumulative >= p {
            keep = i + 1
            break
        }
    }
    candidates.removeSubrange(keep...)
}

/// `topK(k: 0)`, `topP(p:)` then `minP(minP:)` — the same candidates in the same order — without sorting the ones
/// min-p drops (most of a 262k vocabulary): min-p's threshold comes from the best logit, which top-p always keeps,
/// so only the candidates above it are sorted; top-p's probabilities are still normalized over all of them.
public func topPAboveMinP(_ candidates: inout [SamplingCandidate], p: Float, minP: Float) {
    guard minP > 0, candidates.count > 1, let maxLogit = candidates.map(\.logit).max() else {
        topK(&candidates, k: 0)
        topP(&candidates, p: p)
        return
    }
    let threshold = maxLogit + logf(minP)
    var kept = candidates.filter { $0.logit >= threshold }
    sortDescending(&kept)
    if p < 1 {
        var sum: Double = 0
        for c in candidates { sum += Double(expf(c.logit - maxLogit)) }
        let inverse = Float(1 / sum)
        var cumulative: Float = 0
        for i in kept.indices {
            kept[i].probability = expf(kept[i].logit - maxLogit) * inverse
            cumulative += kept[i].probability
            if cumulative >= p {
                kept.removeSubrange((i + 1)...)
                break
            }
        }
    }
    candidates = kept
}

/// Drops candidates whose probability is below `minP` times the largest (compared on logits, as llama.cpp does).
public func minP(_ candidates: inout [SamplingCandidate], minP: Float) {
    guard minP > 0, candidates.count > 1, let maxLogit = candidates.map(\.logit).max() else { return }
    let threshold = maxLogit + logf(minP)
    let kept = candidates.filter { $0.logit >= threshold }
    if !kept.isEmpty { candidates = kept }
}

/// Divides logits by the temperature (> 0).
public func applyTemperature(_ candidates: inout [SamplingCandidate], temperature: Float) {
    guard temperature > 0, temperature != 1 else { return }
    for i in candidates.indices { candidates[i].logit /= temperature }
}

/// Draws one candidate from the softmax of the logits.
public func pick(_ candidates: inout [SamplingCandidate], using generator: inout SeededGenerator) -> Int32 {
    normalize(&candidates)
    let r = generator.nextUnitFloat()
    var cumulative: Float = 0
    for c in candidates {
        cumulative += c.probability
        if r < cumulative { return c.token }
    }
    return candidates.last?.token ?? 0
}
