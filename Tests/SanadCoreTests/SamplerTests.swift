import Foundation
import SanadCore
import Testing

@Suite("Sampling")
struct SamplerTests {
    /// A fixed, slightly bumpy distribution over 200 tokens whose maximum is at 137.
    static func logits() -> [Float] {
        var r = SeededGenerator(seed: 42)
        var l = (0..<200).map { _ in r.nextUnitFloat() * 8 - 4 }
        l[137] = 6
        l[12] = 5.5
        return l
    }

    func sample(_ parameters: SamplingParameters, _ logits: [Float], history: [Int32] = [], times: Int = 1) -> [Int32] {
        let sampler = Sampler(parameters: parameters)
        return (0..<times).map { _ in
            var l = logits
            // No constraint stage, so nothing can throw.
            return (try? l.withUnsafeMutableBufferPointer { try sampler.sample($0, history: history) }) ?? -1
        }
    }

    @Test("greedy picks the argmax")
    func greedyIsArgmax() {
        #expect(sample(.greedy, Self.logits()) == [137])
        var shifted = Self.logits()
        shifted[3] = 9
        #expect(sample(.greedy, shifted) == [3])
    }

    @Test("top-k = 1 picks the argmax whatever the temperature and seed", arguments: [UInt64(1), 2, 3, 99])
    func topKOneIsArgmax(seed: UInt64) {
        let p = SamplingParameters(temperature: 5, topK: 1, topP: 1, minP: 0, seed: seed)
        #expect(sample(p, Self.logits(), times: 20).allSatisfy { $0 == 137 })
    }

    @Test("the same seed and logits give the same tokens; another seed another sequence")
    func seeded() {
        let p = SamplingParameters(temperature: 1.5, topK: 0, topP: 1, minP: 0, seed: 7)
        let a = sample(p, Self.logits(), times: 50)
        let b = sample(p, Self.logits(), times: 50)
        #expect(a == b)
        var q = p
        q.seed = 8
        #expect(sample(q, Self.logits(), times: 50) != a)
        // Sampling at a high temperature does visit more than the top token.
        #expect(Set(a).count > 5)
    }

    @Test("frequency and presence penalties subtract count × frequency + presence, as llama.cpp's penalties do")
    func frequencyPresencePenalties() {
        var logits: [Float] = [1, 2, 3, 4]
        logits.withUnsafeMutableBufferPointer {
            applyFrequencyPresencePenalties($0, recent: [3, 3, 1, 9, -1], frequency: 0.5, presence: 0.25)
        }
        #expect(logits == [1, 2 - 0.75, 3, 4 - 1.25])
        var p = SamplingParameters.greedy
        p.presencePenalty = 1.5
        let crafted: [Float] = [0, 0, 0, 0, 2, 0, 0, 1.5, 0, 0]
        #expect(sample(.greedy, crafted, history: [4]) == [4])
        #expect(p.penalizes && sample(p, crafted, history: [4]) == [7])
        p.presencePenalty = 0
        p.frequencyPenalty = 0.4  // once: 1.6 > 1.5; twice: 1.2 < 1.5
        #expect(sample(p, crafted, history: [4]) == [4] && sample(p, crafted, history: [4, 4]) == [7])
    }

    @Test("log-probabilities are the log-softmax of the raw logits; the top list is ordered, ties by lower id")
    func logProbabilities() {
        let logits: [Float] = [1, 3, 3, 0, -2]
        let entry = logits.withUnsafeBufferPointer {
            GeneratedLogProbabilities.compute(logits: $0, chosen: 3, topCount: 3) { [UInt8($0) + 65] }
        }
        let normalizer = log(logits.map { exp(Double($0)) }.reduce(0, +))
        #expect(abs(Double(entry.chosen.logProbability) - (0 - normalizer)) < 1e-6)
        #expect(entry.chosen.token == 3 && entry.chosen.bytes == [68])
        #expect(entry.top.map(\.token) == [1, 2, 0])
        #expect(abs(Double(entry.top[0].logProbability) - (3 - normalizer)) < 1e-6)
        let total = logits.indices.map { i in
            logits.withUnsafeBufferPointer {
                exp(
                    Double(
                        GeneratedLogProbabilities.compute(logits: $0, chosen: Int32(i), topCount: 0) { _ in [] }
                            .chosen.logProbability))
            }
        }.reduce(0, +)
        #expect(abs(total - 1) < 1e-5)
    }

    @Test("the repetition penalty changes the pick in a crafted case")
    func repetitionPenalty() {
        var logits = [Float](repeating: 0, count: 10)
        logits[4] = 2.0
        logits[7] = 1.5
        #expect(sample(.greedy, logits, history: [4]) == [4])
        var p = SamplingParameters.greedy
        p.repetitionPenalty = 1.5  // 2.0 / 1.5 < 1.5
        #expect(sample(p, logits, history: [1, 4, 4]) == [7])
        // Negative logits are multiplied: −1 × 2 < −1.5.
        var negative = [Float](repeating: -5, count: 4)
        negative[0] = -1
        negative[1] = -1.5
        p.repetitionPenalty = 2
        #expect(sample(p, negative, history: [0]) == [1])
        // Tokens outside the window are not penalized.
        p.repetitionWindow = 1
        #expect(sample(p, negative, history: [0, 3]) == [0])
    }

    @Test("top-p keeps the smallest set reaching p; min-p drops the unlikely; each keeps at least one")
    func truncationStages() {
        var candidates = [
            SamplingCandidate(token: 0, logit: 3), SamplingCandidate(token: 1, logit: 2),
            SamplingCandidate(token: 2, logit: 0),
        ]
        topK(&candidates, k: 0)
        #expect(candidates.map(\.token) == [0, 1, 2])
        var p = candidates
        topP(&p, p: 0.5)  // softmax(3, 2, 0) ≈ 0.71, 0.26, 0.04
        #expect(p.map(\.token) == [0])
        p = candidates
        topP(&p, p: 0.9)
        #expect(p.map(\.token) == [0, 1])
        p = candidates
        minP(&p, minP: 0.3)  // e^(2−3) ≈ 0.37 ≥ 0.3, e^(0−3) ≈ 0.05 < 0.3
        #expect(p.map(\.token) == [0, 1])
        var k = [
            SamplingCandidate(token: 5, logit: 1), SamplingCandidate(token: 2, logit: 4),
            SamplingCandidate(token: 9, logit: 4),
        ]
        topK(&k, k: 2)
        #expect(k.map(\.token) == [2, 9])  // equal logits: lower id first
    }

    @Test("without top-k, top-p over min-p's survivors keeps what the whole chain keeps, in order (300 cases)")
    func topPAboveMinPMatchesTheChain() {
        var rng = SeededGenerator(seed: 7)
        for c in 0..<300 {
            // Logits on a coarse grid, so ties are common.
            let count = 1 + Int(rng.nextUnitFloat() * 400)
            var candidates = (0..<count).map {
                SamplingCandidate(token: Int32($0), logit: (rng.nextUnitFloat() * 24).rounded() / 2 - 6)
            }
            candidates.shuffle(using: &rng)
            let p = [Float(1), 0.95, 0.5, 0.9, 0.01][c % 5]
            let floor = [Float(0.05), 0.1, 0.001, 0.5][c % 4]
            var chain = candidates
            topK(&chain, k: 0)
            topP(&chain, p: p)
            minP(&chain, minP: floor)
            var fast = candidates
            topPAboveMinP(&fast, p: p, minP: floor)
            minP(&fast, minP: floor)
            #expect(fast.map(\.token) == chain.map(\.token), "case \(c): p \(p), min-p \(floor), \(count) candidates")
        }
    }

    @Test("a constraint stage can forbid tokens before the pick")
    func constraintMask() throws {
        final class Forbid: LogitConstraint {
            var accepted: [Int32] = []
            func mask(_ logits: UnsafeMutableBufferPointer<Float>) { logits[137] = -.infinity }
            func accept(_ token: Int32) { accepted.append(token) }
        }
        let forbid = Forbid()
        let sampler = Sampler(parameters: .greedy, constraint: forbid)
        var l = Self.logits()
        let token = try l.withUnsafeMutableBufferPointer { try sampler.sample($0, history: []) }
        #expect(token == 12)
        #expect(forbid.accepted == [12])
    }
}

@Suite("Stop strings")
struct StopStringFilterTests {
    /// Feeds pieces through a filter; returns the visible text and whether it stopped.
    func run(_ stops: [String], _ pieces: [String]) -> (String, Bool) {
        var filter = StopStringFilter(stops)
        var out = ""
        for p in pieces {
            let (text, stopped) = filter.append(p)
            out += text
            if stopped { return (out, true) }
        }
        return (out + filter.flush(), false)
    }

    @Test("a stop string split across pieces is found and not shown")
    func splitAcrossPieces() {
        #expect(run(["</end>"], ["Hello </", "en", "d> world"]) == ("Hello ", true))
        #expect(run(["\n\n"], ["a\n", "\nb"]) == ("a", true))
    }

    @Test("text that only starts like a stop string is held back, then released")
    func heldBack() {
        var filter = StopStringFilter(["STOP"])
        #expect(filter.append("go ST") == ("go ", false))
        #expect(filter.append("AR") == ("STAR", false))
        #expect(filter.append("S") == ("", false))
        #expect(filter.flush() == "S")
    }

    @Test("the earliest of several stop strings wins; non-ASCII text is cut on character boundaries")
    func several() {
        #expect(run(["لا", "x"], ["نعم x لا"]) == ("نعم ", true))
        #expect(run([], ["a", "b"]) == ("ab", false))
    }
}
