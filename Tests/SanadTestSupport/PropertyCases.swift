import SanadCore
import Testing

// Property-test support shared by every test target: the core's `SeededGenerator` (xoshiro256**, the same sequence
// on every platform) with helpers for drawing cases, and `forAll`, which runs numbered cases that can be replayed
// from their seed.

extension SeededGenerator {
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    public mutating func bool(_ probability: Double = 0.5) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    public mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// A string of a length in `length`, of characters drawn from `alphabet`.
    public mutating func string(from alphabet: [Character], length: ClosedRange<Int>) -> String {
        String((0..<int(length)).map { _ in pick(alphabet) })
    }

    /// A float in [-1, 1) with 24 random bits.
    public mutating func nextFloat() -> Float { Float(next() >> 40) / Float(1 << 23) - 1 }
}

/// Which generated case is running, for failure messages.
public struct Case: CustomStringConvertible, Sendable {
    public let index: Int
    public let seed: UInt64
    public var description: String { "case \(index) (seed 0x\(String(seed, radix: 16)))" }
    public var label: Comment { Comment(rawValue: description) }
}

/// The seed of case `index` of a run seeded with `seed`.
func caseSeed(_ seed: UInt64, _ index: Int) -> UInt64 { seed &+ UInt64(index) &* 0x2545_F491_4F6C_DD1D }

/// Runs `body` for `cases` cases, each with its own generator seeded from `seed` and the case number; a failing
/// case's number and seed are in the failure message (`Case.label`).
public func forAll(
    cases: Int = 200, seed: UInt64 = 0x5A4E_4144, _ body: (inout SeededGenerator, Case) throws -> Void
) rethrows {
    for i in 0..<cases {
        var rng = SeededGenerator(seed: caseSeed(seed, i))
        try body(&rng, Case(index: i, seed: caseSeed(seed, i)))
    }
}

public func forAll(
    cases: Int = 200, seed: UInt64 = 0x5A4E_4144, _ body: (inout SeededGenerator, Case) async throws -> Void
) async rethrows {
    for i in 0..<cases {
        var rng = SeededGenerator(seed: caseSeed(seed, i))
        try await body(&rng, Case(index: i, seed: caseSeed(seed, i)))
    }
}
