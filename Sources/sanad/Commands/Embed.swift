import Foundation
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad embed`: sentence vectors, one JSON array per line.
enum EmbedCommand: SanadCommand {
    static let name = "embed"
    static let summary = "Print sentence embeddings, one JSON array per text"
    static let help = """
        Usage: sanad embed [-m MODEL] [--backend ID] [-t N] [-f FILE] [TEXT ...]

        Embeds each TEXT (or each line of FILE; '-' = standard input) with the tier's embedding model (its
        `embedding` block: engine and model) and prints one L2-normalised vector per line as a JSON array, in the
        order given. A text longer than the model reads (256 tokens for all-MiniLM-L6-v2) is embedded from its
        first tokens, and a note on standard error says so.

        Options:
          -m, --model MODEL   a model folder (sentence-transformers BERT: pure-swift) or a .gguf file (llama), as a
                              path or a name in the models folder (default: the tier's embedding model)
          --backend ID        embedding engine (default: the tier's; with -m, pure-swift for a folder and llama for
                              a .gguf file)
          -t, --threads N     worker threads (default: the tier's)
          -f, --file FILE     embed every non-empty line of FILE
          --progress          a progress line on standard error even when it is not a terminal
        \(HostContext.optionsHelp)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let modelName = try arguments.option("-m", "--model")
        let backendID = try arguments.option("--backend")
        let threads = try arguments.int("-t", "--threads", range: 1...512)
        let file = try arguments.option("-f", "--file")
        let progress = arguments.flag("--progress")
        let host = try HostContext.load(&arguments)
        var texts = try arguments.positionals(names: "TEXT")
        if let file {
            guard texts.isEmpty else { throw UsageError("give the texts either with -f or as arguments, not both") }
            texts = try readText(file).split(separator: "\n", omittingEmptySubsequences: true).map {
                String($0.hasSuffix("\r") ? $0.dropLast() : $0)
            }
        }
        guard !texts.isEmpty else { throw UsageError("missing the texts (arguments or -f FILE)") }
        let model = try await host.openEmbeddingModel(model: modelName, backend: backendID, threads: threads)
        let batch = try await embedShowingProgress(model, texts, progressRequested: progress)
        reportTruncation(batch)
        for v in batch.vectors { print(jsonArray(v)) }
        return ExitCode.success
    }
}

/// `[v0, v1, …]` with each float written as its shortest round-tripping decimal.
func jsonArray(_ v: [Float]) -> String {
    "[" + v.map { $0.isFinite ? "\($0)" : "0" }.joined(separator: ", ") + "]"
}
