import Foundation
import GGUF
import PureSwiftBackend
import PureSwiftKernels
import SanadCore
import SanadTestSupport
import Testing

/// The checks every synthetic model (SanadTestSupport's `SyntheticModel`) passes against the reference llama.cpp
/// build (AVX2), under every kernel build this CPU runs: the prompt's tokens; greedy ids over 32 tokens and the
/// top-10 logits of every step bit for bit (the prompt evaluated as one batch, then each token on its own, as
/// greedy-ids runs them); perplexity over the first `perplexityChunks` chunks of 256 tokens of the GPL-3 text equal
/// to the 4 decimals llama-perplexity prints.
enum SyntheticFidelity {
    /// A prompt of 20 tokens: past llama.cpp's tiled K-quant batch (8 rows), under its batched-attention length.
    static let prompt =
        "The synthetic model reads this sentence, then continues it with whatever its random weights say"
    static let textFile = "/usr/share/common-licenses/GPL-3"
    static let context = 256
    static let perplexityChunks = 1

    /// The weight types every synthetic architecture is checked in (`SyntheticModel.engineTypes`: every single type
    /// the engine multiplies with and the three mixes), less those `SANAD_SYNTHETIC_TYPES` leaves out.
    static let allTypes = types(SyntheticModel.engineTypes)

    /// `all`, or the ones of them `SANAD_SYNTHETIC_TYPES` names (comma-separated), to rerun a few while working on a
    /// kernel.
    static func types(_ all: [String]) -> [String] {
        guard let list = ProcessInfo.processInfo.environment["SANAD_SYNTHETIC_TYPES"], !list.isEmpty else { return all }
        let chosen = Set(list.split(separator: ",").map(String.init))
        return all.filter(chosen.contains)
    }

    /// Why the synthetic fidelity tests cannot run here, or nil.
    static var unavailable: String? {
        if let why = SyntheticModel.unavailable { return why }
        if !FileManager.default.fileExists(atPath: textFile) { return "\(textFile) (the perplexity text) is absent" }
        return nil
    }

    /// All the checks for `spec` with weights from `seed` quantized to `type` ("F32", "Q4_K", "Q4_K_M", …), with
    /// the KV cache's keys and values stored as `cache` (llama.cpp's `-ctk`/`-ctv`; the reference tools get the
    /// same flags).
    static func check(
        _ spec: SyntheticModel.Spec, seed: UInt64, type: String, cache: (k: GGMLType, v: GGMLType) = (.f16, .f16)
    ) throws {
        try checkFile(try SyntheticModel.file(spec, seed: seed, type: type), label: type, cache: cache)
    }

    /// The same checks for the model file `model` (`label` names it in failures), under `builds`.
    static func checkFile(
        _ model: URL, label type: String, cache: (k: GGMLType, v: GGMLType) = (.f16, .f16),
        builds: [any KernelSet] = KernelBuilds.runnable
    ) throws {
        let tools = try #require(LlamaTools.reference, "\(LlamaTools.referenceUnavailable ?? "")")
        let cacheFlags =
            cache == (.f16, .f16) ? [] : ["-ctk", cache.k.cacheTypeName, "-ctv", cache.v.cacheTypeName]
        let reference = try tools.greedy(model: model, prompt: prompt, maxTokens: 32, topK: 10, extra: cacheFlags)
        try #require(reference.ids.count == 32 && reference.topLogits.count == 32, "greedy-ids stopped early")
        let pplReference = try tools.perplexity(
            model: model, textFile: textFile, context: context, batch: 2048, chunks: perplexityChunks,
            extra: cacheFlags)
        for build in builds {
            let label = "\(type) \(build.name)" + (cacheFlags.isEmpty ? "" : " " + cacheFlags.joined(separator: " "))
            let session = try PureSwiftSession(
                path: model.path,
                options: ModelLoadOptions(
                    threads: 2, contextLength: 512, batchSize: 512,
                    engineOptions: ["kernels": .string(build.name)], cacheTypeK: cache.k, cacheTypeV: cache.v))
            let promptIDs = try session.tokenize(prompt, addSpecial: true, parseSpecial: true)
            #expect(promptIDs == reference.promptIDs, "\(label): prompt tokens")
            checkSteps(
                session, build, reference,
                cache: RunnerOptions(kernels: build, cacheKeyType: cache.k, cacheValueType: cache.v),
                label: label)
            let (ppl, chunks) = try llamaPerplexity(
                session, textFile: textFile, context: context, maxChunks: perplexityChunks)
            #expect(chunks == pplReference.runningPPL.count)
            #expect(
                abs(ppl - pplReference.ppl) <= 0.00005 + 1e-9,
                "\(label): pure-swift PPL \(ppl), llama.cpp \(pplReference.ppl)")
        }
    }

    /// Teacher-forced greedy steps: at every step the largest logit is llama.cpp's token and the top 10 logits are
    /// llama.cpp's, bit for bit.
    static func checkSteps(
        _ session: PureSwiftSession, _ build: any KernelSet, _ reference: LlamaTools.GreedyRun,
        cache options: RunnerOptions? = nil, threads: Int = 2, contextLength: Int = 512, label: String
    ) {
        guard
            let runner = try? session.network.makeRunner(
                contextLength: contextLength, batchSize: 512, threads: threads,
                options: options ?? RunnerOptions(kernels: build))
        else {
            Issue.record("\(label): cannot make a runner")
            return
        }
        var row = [Float](repeating: 0, count: runner.vocabularySize)
        var differing: [String] = []
        var ids: [Int32] = []
        // The prompt in batches of at most 512 tokens, as greedy-ids' llama_decode splits it (its n_ubatch).
        for start in stride(from: 0, to: reference.promptIDs.count - 512, by: 512) {
            Array(reference.promptIDs[start..<(start + 512)]).withUnsafeBufferPointer { tokens in
                runner.evaluate(tokens, outputs: 0..<0, logits: &row)
            }
        }
        for step in 0..<reference.ids.count {
            let input =
                step == 0
                ? Array(reference.promptIDs[((reference.promptIDs.count - 1) / 512 * 512)...])
                : [reference.ids[step - 1]]
            input.withUnsafeBufferPointer { tokens in
                runner.evaluate(tokens, outputs: (tokens.count - 1)..<tokens.count, logits: &row)
            }
            ids.append(Int32(row.indices.max { row[$0] < row[$1] || (row[$0] == row[$1] && $0 > $1) } ?? 0))
            for (id, logit) in reference.topLogits[step] where row[Int(id)].bitPattern != logit.bitPattern {
                differing.append("step \(step) token \(id): \(row[Int(id)]) vs \(logit)")
            }
        }
        let first = zip(ids, reference.ids).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(first == nil, "\(label): greedy ids differ first at step \(first ?? -1)")
        let count = differing.count
        #expect(count == 0, "\(label): \(differing.prefix(5)) (\(count) in all)")
    }
}
