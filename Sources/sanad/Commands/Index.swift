import Foundation
import SanadCommandLine
import SanadCore
import SanadHost
import SanadIndex

/// `sanad index`: a vector index file for retrieval experiments.
enum IndexCommand: SanadCommand {
    static let name = "index"
    static let summary = "Add texts to a vector index file, query it, list or remove entries"
    static let help = """
        Usage: sanad index add|query|list|remove --index FILE [options] [TEXT|ID ...]

        A vector index kept in one file (crash-safe writes, checksummed; a damaged file is refused). Texts are
        embedded with the tier's embedding model (or -m/--backend as in 'sanad embed'); an index holds the vectors
        of one model.

          add TEXT ...       embed and add each text (or each line of -f FILE); the id is --id (one text) or the
                             text itself; an existing id is replaced; --meta KEY=VALUE (repeatable) is stored with it
          query TEXT         the -k most similar entries (cosine, best first) scoring at least --min-score
          list               every entry
          remove ID ...      remove entries by id

        Options:
          --index FILE          the index file (created by 'add' when missing)
          --id ID               the id of the one text being added
          --meta KEY=VALUE      metadata for the added texts (repeatable)
          -f, --file FILE       add every non-empty line of FILE
          -k N                  results of a query (default 5)
          --min-score S         leave out results under S (default -1: none)
          --json                JSON output: one object per line
          -m, --model MODEL     embedding model (see 'sanad embed --help')
          --backend ID          embedding engine
          -t, --threads N       worker threads
          --progress            a progress line on standard error even when it is not a terminal (add)
        \(HostContext.optionsHelp)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let json = arguments.flag("--json")
        guard let indexPath = try arguments.option("--index") else { throw UsageError("missing --index FILE") }
        let id = try arguments.option("--id")
        let metaValues = repeatedValues(of: "--meta", in: arguments.items)
        while try arguments.option("--meta") != nil {}
        let file = try arguments.option("-f", "--file")
        let k = try arguments.int("-k", range: 1...10_000) ?? 5
        let minimumScore = Float(try arguments.double("--min-score") ?? -1)
        let modelName = try arguments.option("-m", "--model")
        let backendID = try arguments.option("--backend")
        let threads = try arguments.int("-t", "--threads", range: 1...512)
        let progress = arguments.flag("--progress")
        let hostOptions = try HostOptions.parse(&arguments)
        var positionals = try arguments.positionals(min: 1, names: "the action (add, query, list or remove)")
        let action = positionals.removeFirst()
        var metadata: [String: String] = [:]
        for m in metaValues {
            guard let eq = m.firstIndex(of: "="), eq != m.startIndex else {
                throw UsageError("--meta expects KEY=VALUE, got '\(m)'")
            }
            metadata[String(m[..<eq])] = String(m[m.index(after: eq)...])
        }
        func embedder() async throws -> any EmbeddingModel {
            let host = try HostContext.load(hostOptions)
            return try await host.openEmbeddingModel(model: modelName, backend: backendID, threads: threads)
        }
        switch action {
        case "add":
            var texts = positionals
            if let file {
                guard texts.isEmpty else { throw UsageError("give the texts either with -f or as arguments, not both") }
                texts = try readText(file).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
            }
            guard !texts.isEmpty else { throw UsageError("missing the texts to add") }
            if id != nil && texts.count != 1 { throw UsageError("--id names one text; \(texts.count) were given") }
            let model = try await embedder()
            // A damaged index is refused before the texts are embedded.
            if FileManager.default.fileExists(atPath: indexPath) { _ = try VectorIndexFile.load(indexPath) }
            let batch = try await embedShowingProgress(model, texts, progressRequested: progress)
            reportTruncation(batch, labels: texts)
            let count = try VectorIndexFile.update(indexPath, dimension: model.dimension) { index in
                for (text, vector) in zip(texts, batch.vectors) {
                    try index.add(
                        VectorIndexEntry(id: id ?? text, text: text, metadata: metadata), vector: vector,
                        file: indexPath)
                }
                return index.count
            }
            printError("\(indexPath): \(count) entries")
        case "query":
            guard positionals.count == 1 else { throw UsageError("query takes one TEXT") }
            let index = try VectorIndexFile.load(indexPath)
            let model = try await embedder()
            let started = Date()
            let vector = try await model.embed(positionals)[0]
            let embedded = Date()
            let matches = try index.search(
                vector, k: k, minimumScore: minimumScore,
                threads: threads ?? CPUAvailability.defaultThreads)
            let searched = Date()
            for m in matches {
                if json {
                    print(
                        JSONValue.object([
                            "id": .string(m.entry.id), "score": .number((Double(m.score) * 1e6).rounded() / 1e6),
                            "text": .string(m.entry.text),
                            "metadata": .object(m.entry.metadata.mapValues { .string($0) }),
                        ]).jsonString)
                } else {
                    print(
                        String(format: "%.4f  ", m.score) + m.entry.id
                            + (m.entry.id == m.entry.text ? "" : "  " + m.entry.text))
                }
            }
            printError(
                String(
                    format: "%d of %d entries; embedding %.1f ms, search %.2f ms", matches.count, index.count,
                    embedded.timeIntervalSince(started) * 1000, searched.timeIntervalSince(embedded) * 1000))
        case "list":
            guard positionals.isEmpty else { throw UsageError("list takes no arguments") }
            let index = try VectorIndexFile.load(indexPath)
            for e in index.entries {
                if json {
                    print(
                        JSONValue.object([
                            "id": .string(e.id), "text": .string(e.text),
                            "metadata": .object(e.metadata.mapValues { .string($0) }),
                        ]).jsonString)
                } else {
                    let meta = e.metadata.keys.sorted().map { "\($0)=\(e.metadata[$0] ?? "")" }.joined(separator: " ")
                    print(e.id + (e.id == e.text ? "" : "\t" + e.text) + (meta.isEmpty ? "" : "\t" + meta))
                }
            }
        case "remove":
            guard !positionals.isEmpty else { throw UsageError("remove takes the ids to remove") }
            let (missing, count) = try VectorIndexFile.update(indexPath) { index in
                (positionals.filter { !index.remove($0) }, index.count)
            }
            for id in missing { printError("note: no entry '\(id)'") }
            printError("\(indexPath): \(count) entries")
        default:
            throw UsageError("unknown action '\(action)'; use add, query, list or remove")
        }
        return ExitCode.success
    }
}
