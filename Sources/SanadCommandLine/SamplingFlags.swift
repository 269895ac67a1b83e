import Foundation
import SanadCore

/// The sampling flags of the commands that generate (`generate`, `run`): `--temp`, `--seed`, `--top-k`, `--top-p`,
/// `--min-p`, `--repeat-penalty`, checked, with llama.cpp's defaults. Without `--seed` the seed is random, as in
/// llama.cpp (the one used is in `seed`, for a command to report); `--seed N` repeats a run.
public struct SamplingFlags: Sendable {
    public var parameters: SamplingParameters
    /// Whether the seed was given (else drawn at random).
    public var seedGiven: Bool

    /// The lines a help lists (option column 23 wide, as `generate --help` lays them out).
    public static let help = """
          --temp T               temperature; 0 = greedy (default 0.8)
          --seed S               sampling seed (default: random; the one used is printed on standard error)
          --top-k K              keep the K most likely tokens, 0 = off (default 40)
          --top-p P              nucleus sampling, 1 = off (default 0.95)
          --min-p P              drop tokens below P × the best one's probability, 0 = off (default 0.05)
          --repeat-penalty R     penalize recent tokens, 1 = off (default 1)
        """

    public static func parse(_ arguments: inout Arguments) throws -> SamplingFlags {
        let defaults = SamplingParameters()
        var p = defaults
        p.temperature = try arguments.double("--temp").map(Float.init) ?? defaults.temperature
        let seedText = try arguments.option("--seed")
        p.topK = try arguments.int("--top-k", range: 0...1 << 24) ?? defaults.topK
        p.topP = try arguments.double("--top-p").map(Float.init) ?? defaults.topP
        p.minP = try arguments.double("--min-p").map(Float.init) ?? defaults.minP
        p.repetitionPenalty = try arguments.double("--repeat-penalty").map(Float.init) ?? defaults.repetitionPenalty
        guard p.temperature >= 0 else { throw UsageError("'--temp' must be ≥ 0 (0 = greedy), got \(p.temperature)") }
        guard (0...1).contains(p.topP), (0...1).contains(p.minP), p.repetitionPenalty > 0 else {
            throw UsageError("--top-p and --min-p must be in 0…1 and --repeat-penalty positive")
        }
        if let seedText {
            guard let s = UInt64(seedText) else {
                throw UsageError("'--seed' expects a non-negative integer, got '\(seedText)'")
            }
            p.seed = s
        } else {
            p.seed = UInt64.random(in: 0...UInt64(UInt32.max))
        }
        return SamplingFlags(parameters: p, seedGiven: seedText != nil)
    }
}
