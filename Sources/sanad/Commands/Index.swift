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

        A vector index kept in one file (checksummed; a damaged file is refused). Texts are embedded with the tier's
        embedding model (or -m/--backend as in 'sanad embed'); an index holds the vectors of one model, whose name
        and weights digest its header records: adding or querying with another model is refused, naming both.
        'add' appends to the file without rewriting it (a killed add leaves the previous index readable; the next
        write cuts the unfinished part off); 'remove' rewrites it crash-safely (temporary file, then rename).

          add TEXT ...       embed and add each text (or each line of -f FILE); the id is --id (one text) or the
                             text itself; an existing id is replaced; --meta KEY=VALUE (repeatable) is stored with it
          query TEXT         the -k most similar entries (cosine, best first) scoring at least --min-score
          list               every entry
          remove ID ...      remove entries by id

        Options:
          --index FILE          the index file (created by 'add' when missing)
          --id ID               the id of the one text being added
          --meta KEY=VALUE      metadata for the added texts (repeatable)
          -f, --file FILE       add every non-empty line of FILE (its id is the text)
          --jsonl FILE          add one entry per line of FILE ('-' = standard input), each an object
                                {"id": ID, "text": TEXT, "meta": {KEY: VALUE, ...}} ("id" defaults to the text;
                                meta values are strings, numbers or booleans; --meta adds to every line's)
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
        let jsonl = try arguments.option("--jsonl")
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
        func embedder() async throws -> (model: any EmbeddingModel, identity: IndexModel) {
            let host = try HostContext.load(hostOptions)
            return (
                try await host.openEmbeddingModel(model: modelName, backend: backendID, threads: threads),
                try host.indexModel(modelName)
            )
        }
        switch action {
        case "add":
            var entries = positionals.map { VectorIndexEntry(id: id ?? $0, text: $0, metadata: metadata) }
            let sources = [file != nil, jsonl != nil, !positionals.isEmpty].filter { $0 }.count
            guard sources <= 1 else { throw UsageError("give the texts one way: arguments, -f FILE or --jsonl FILE") }
            if let file {
                entries = try readText(file).split(separator: "\n").map(String.init).filter { !$0.isEmpty }.map {
                    VectorIndexEntry(id: $0, text: $0, metadata: metadata)
                }
            }
            if let jsonl { entries = try jsonlEntries(jsonl, metadata: metadata) }
            guard !entries.isEmpty else { throw UsageError("missing the texts to add") }
            if id != nil && (entries.count != 1 || jsonl != nil) {
                throw UsageError("--id names one text given as an argument; \(entries.count) were given")
            }
            let (model, identity) = try await embedder()
            let count = try await addToIndex(
                indexPath, entries: entries, labels: entries.map(\.id), model: model, identity: identity,
                progressRequested: progress)
            printError("\(indexPath): \(count) entries (\(identity))")
        case "query":
            guard positionals.count == 1 else { throw UsageError("query takes one TEXT") }
            let index = try VectorIndexFile.load(indexPath)
            let (model, identity) = try await embedder()
            try VectorIndexFile.check(index, path: indexPath, dimension: model.dimension, model: identity)
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
            printError("\(indexPath): \(index.count) entries of \(index.model?.description ?? "an unrecorded model")")
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

/// The entries of a JSONL file: one object a line, `{"id": …, "text": …, "meta": {…}}`; blank lines skipped. Each
/// error names the file and line.
func jsonlEntries(_ file: String, metadata extra: [String: String]) throws -> [VectorIndexEntry] {
    var entries: [VectorIndexEntry] = []
    let name = file == "-" ? "standard input" : file
    for (n, line) in try readText(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { continue }
        func bad(_ what: String) -> UsageError { UsageError("\(name) line \(n + 1): \(what)") }
        let value: JSONValue
        do { value = try StrictJSON().parse(Array(trimmed.utf8)) } catch { throw bad("not JSON (\(error))") }
        guard case .object(let object) = value else { throw bad("expected an object {\"text\": …}") }
        for key in object.keys where !["id", "text", "meta"].contains(key) {
            throw bad("unknown key '\(key)' (known: id, text, meta)")
        }
        guard let text = object["text"]?.stringValue, !text.isEmpty else {
            throw bad("\"text\" must be a non-empty string")
        }
        var id = text
        if let given = object["id"] {
            guard let s = given.stringValue, !s.isEmpty else { throw bad("\"id\" must be a non-empty string") }
            id = s
        }
        var metadata = extra
        if let meta = object["meta"] {
            guard case .object(let pairs) = meta else { throw bad("\"meta\" must be an object") }
            for (key, v) in pairs {
                switch v {
                case .string(let s): metadata[key] = s
                case .number, .bool: metadata[key] = v.jsonString
                default: throw bad("meta '\(key)' must be a string, number or boolean")
                }
            }
        }
        entries.append(VectorIndexEntry(id: id, text: text, metadata: metadata))
    }
    return entries
}
