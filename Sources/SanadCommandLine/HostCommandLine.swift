import Foundation
import GGUF
import SanadChat
import SanadCore
import SanadHost
import SanadIndex

/// The program's wiring, installed once by `main` before any command runs (`CommandLineHost.install`), so commands
/// that live with their plugins (`Plugins/*/CLI`) open the same host as the generic ones without knowing `Wiring`.
public enum CommandLineHost {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var installed: HostWiring?

    /// Sets the wiring every `HostContext.load(&arguments)` uses.
    public static func install(_ wiring: HostWiring) {
        lock.lock()
        defer { lock.unlock() }
        installed = wiring
    }

    /// The installed wiring; a program that forgot `install` stops here with a message (a programming error).
    public static var wiring: HostWiring {
        lock.lock()
        defer { lock.unlock() }
        guard let installed else { preconditionFailure("CommandLineHost.install was not called before a command ran") }
        return installed
    }
}

extension HostContext {
    /// Options every command that uses a config accepts.
    public static let optionsHelp = """
          --config FILE       host config to use (default: SANAD_CONFIG, else the tier for this machine's memory)
          --tier NAME         use configs/tier-NAME.json
          --models DIR        models folder (default: SANAD_MODELS, else models/ in the Sanad checkout)
          --no-tuning         the tier file's engine order, not the one 'sanad tune' measured on this device
        """

    /// Reads `--config`, `--tier`, `--models` and `--no-tuning` from `arguments` and loads the host with the
    /// program's wiring; an unknown tier is a usage error.
    public static func load(_ arguments: inout Arguments) throws -> HostContext {
        try load(HostOptions.parse(&arguments))
    }

    /// The host for options read earlier (`HostOptions.parse`), with the program's wiring.
    public static func load(_ options: HostOptions) throws -> HostContext {
        do {
            return try load(options, wiring: CommandLineHost.wiring)
        } catch let error as HostUsageError {
            throw UsageError(error.message)
        }
    }

    /// Refuses an engine id that is not registered, as a usage error (exit 64).
    public func validateBackendID(_ id: String?) throws {
        do { try checkBackend(id) } catch let error as HostUsageError { throw UsageError(error.message) }
    }

    /// Plans the request, prints what a person should know about it on stderr (`note: skipping backend …`), and
    /// loads. Every command that loads a model comes through here.
    public func openModel(_ request: ModelRequest) async throws -> (session: any InferenceSession, plan: ModelPlan) {
        let plan = try planModel(request)
        return (try await opener.open(plan), plan)
    }

    /// The checks of `openModel` without the load.
    public func planModel(_ request: ModelRequest) throws -> ModelPlan {
        try validateBackendID(request.backend)
        let (plan, notes) = try self.plan(request)
        for note in notes { printError("note: \(note)") }
        return plan
    }
}

extension HostOptions {
    /// `--config`, `--tier`, `--models` and `--no-tuning` from `arguments`. A command that loads its host only for
    /// some work reads them with its other options, before its positionals, and loads the host when it needs it.
    public static func parse(_ arguments: inout Arguments) throws -> HostOptions {
        HostOptions(
            configFile: try arguments.option("--config"), tier: try arguments.option("--tier"),
            modelsDirectory: try arguments.option("--models"), noTuning: arguments.flag("--no-tuning"))
    }

    /// Whether none was given.
    public var isEmpty: Bool { self == HostOptions() }
}

/// The flags every command that loads a model accepts beyond -m, --backend, -c and -t.
public struct LoadFlags {
    public var checkMemory = true
    public var allowLongContext = false
    /// `-ctk`/`--cache-type-k`, `-ctv`/`--cache-type-v`: the KV cache's key and value types; nil = the tier's.
    public var cacheTypeK: GGMLType?
    public var cacheTypeV: GGMLType?

    public init(
        checkMemory: Bool = true, allowLongContext: Bool = false, cacheTypeK: GGMLType? = nil,
        cacheTypeV: GGMLType? = nil
    ) {
        self.checkMemory = checkMemory
        self.allowLongContext = allowLongContext
        self.cacheTypeK = cacheTypeK
        self.cacheTypeV = cacheTypeV
    }

    public static let help = """
          --no-memory-check      load even when the estimate exceeds the tier's memory budget
          --allow-long-context   allow a context beyond the model's training context
          -ctk, --cache-type-k TYPE
                                 how the KV cache stores keys, as llama.cpp's -ctk: f16 (default, or the
                                 tier's kvCache.typeK) or q8_0 (half the memory again, results exact
                                 against llama.cpp run with the same types); the llama engine also takes f32,
                                 bf16, q4_0, q4_1, iq4_nl, q5_0, q5_1
          -ctv, --cache-type-v TYPE
                                 the same for values (-ctv)
        """

    public static func parse(_ arguments: inout Arguments) throws -> LoadFlags {
        LoadFlags(
            checkMemory: !arguments.flag("--no-memory-check"),
            allowLongContext: arguments.flag("--allow-long-context"),
            cacheTypeK: try cacheType(arguments.option("-ctk", "--cache-type-k"), flag: "--cache-type-k"),
            cacheTypeV: try cacheType(arguments.option("-ctv", "--cache-type-v"), flag: "--cache-type-v"))
    }

    /// The cache type `name` names, or a usage error listing llama.cpp's names.
    static func cacheType(_ name: String?, flag: String) throws -> GGMLType? {
        guard let name else { return nil }
        guard let type = GGMLType(cacheTypeName: name) else {
            throw UsageError(
                "\(flag) '\(name)' is not a cache type; use one of "
                    + GGMLType.cacheTypes.map(\.cacheTypeName).joined(separator: ", "))
        }
        return type
    }
}

/// The plugins' clock and plugins as commands take them (`--now`, `SANAD_NOW`).
public enum PluginHost {
    public static let clockHelp = """
          --now DATE          the plugins' clock starts at DATE (YYYY-MM-DD = noon UTC that day, or an ISO-8601
                              date-time) and runs on from there (default: SANAD_NOW, else the real time)
        """

    /// `--now` or `SANAD_NOW`: a clock starting at that time and running on; else the real clock.
    public static func clock(_ arguments: inout Arguments) throws -> @Sendable () -> Date {
        let flag = try arguments.option("--now")
        let env = ProcessInfo.processInfo.environment["SANAD_NOW"].flatMap { $0.isEmpty ? nil : $0 }
        guard let text = flag ?? env else { return { Date() } }
        guard let clock = HostContext.clock(startingAt: text) else {
            throw UsageError(
                "\(flag != nil ? "'--now'" : "SANAD_NOW") expects YYYY-MM-DD or an ISO-8601 date-time such as "
                    + "2026-11-22T09:00:00+03:00, got '\(text)'")
        }
        return clock
    }

    public static let userHelp = """
          --user FILE         the person's data file, instead of the one the config names (every hosted plugin
                              whose options name a userData file reads FILE); an error names the file and the field
        """

    /// `--user FILE`: the person's data file (it must exist; its fields are checked by the plugins that read it).
    public static func userFile(_ arguments: inout Arguments, host: HostContext) throws -> URL? {
        guard let path = try arguments.option("--user") else { return nil }
        let url = URL(fileURLWithPath: path).standardizedFileURL
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw UsageError("--user: the file \(url.path) does not exist")
        }
        guard host.readsUserData else {
            throw UsageError("--user: no plugin of the config (\(host.config.file.path)) reads a user data file")
        }
        return url
    }

    /// The config's plugins, in config order, each with its options, a data folder and the clock; `userData`
    /// replaces the person's data file the config names (`--user`).
    public static func makePlugins(_ host: HostContext, now: @escaping @Sendable () -> Date, userData: URL? = nil)
        throws -> [any FeaturePlugin]
    {
        try host.makePlugins(now: now, userData: userData)
    }

    /// `SANAD_DATA/<id>`, else `~/.local/share/sanad/plugins/<id>`; created when missing.
    public static func dataDirectory(for id: String) throws -> URL { try HostContext.dataDirectory(for: id) }

    /// Every plugin's tools, then the host's `open_deep_link` in the program's product link format.
    public static func tools(_ plugins: [any FeaturePlugin]) -> [(plugin: String, tool: any Tool)] {
        HostContext.tools(plugins, product: CommandLineHost.wiring.product)
    }
}

/// `model`'s vectors for `texts`, with a progress line on standard error while it works (in place on a terminal;
/// plain lines when `progressRequested` and standard error is not a terminal).
public func embedShowingProgress(_ model: any EmbeddingModel, _ texts: [String], progressRequested: Bool = false)
    async throws -> EmbeddingBatch
{
    let line = ProgressLine(
        "embedding", total: texts.count, unit: "texts", mode: ProgressLine.mode(requested: progressRequested))
    defer { line.finish() }
    return try await model.embedReportingTruncation(texts) { line.update($0) }
}

/// Embeds `entries`' texts with `model` (a progress line while it works; a note for every text it cut) and adds
/// them to the index file at `path` (created when missing) as `identity`'s vectors; returns the entry count. An
/// index of another model or dimension is refused before anything is embedded.
public func addToIndex(
    _ path: String, entries: [VectorIndexEntry], labels: [String]? = nil, model: any EmbeddingModel,
    identity: IndexModel, progressRequested: Bool = false
) async throws -> Int {
    if FileManager.default.fileExists(atPath: path) {
        try VectorIndexFile.check(
            try VectorIndexFile.load(path), path: path, dimension: model.dimension, model: identity)
    }
    let batch = try await embedShowingProgress(model, entries.map(\.text), progressRequested: progressRequested)
    reportTruncation(batch, labels: labels)
    return try VectorIndexFile.append(
        path, dimension: model.dimension, model: identity,
        entries: Array(zip(entries, batch.vectors)).map { (entry: $0.0, vector: $0.1) })
}

/// `--phrasing model|template` (who words grounded replies; nil: the tier config's), for `chat` and `serve`.
public func parsePhrasing(_ arguments: inout Arguments) throws -> GroundedPhrasing? {
    try arguments.option("--phrasing").map { name in
        guard let phrasing = GroundedPhrasing(rawValue: name) else {
            throw UsageError("--phrasing '\(name)': use model or template")
        }
        return phrasing
    }
}

/// The help lines of `--phrasing`.
public let phrasingHelp = """
      --phrasing model|template
                             who words grounded replies: the model (its draft checked, replaced by the
                             template when it fails) or the template at once (default: the tier config's
                             groundedReplies.phrasing, else model)
    """

/// A note on standard error for every text the model cut.
public func reportTruncation(_ batch: EmbeddingBatch, labels: [String]? = nil) {
    for i in batch.truncated {
        let label = labels.map { "'\($0[i])'" } ?? "text \(i + 1)"
        printError(
            "note: \(label) is longer than the model's \(batch.sequenceLimit.map(String.init) ?? "") tokens; "
                + "embedded from its first tokens")
    }
}

extension HostContext {
    /// Where the embedding model is: `model` (a path or a name in the models folder) or the config's.
    public func embeddingModelURL(_ model: String?) throws -> URL {
        guard let name = model ?? config.embedding?.model else {
            throw UsageError(
                "config '\(config.file.path)' has no `embedding` block; pass -m MODEL (a model folder or .gguf file)")
        }
        return try resolveModel(name)
    }

    /// What a vector index records of that model (its name and weights digest).
    public func indexModel(_ model: String?) throws -> IndexModel { try IndexModel.of(try embeddingModelURL(model)) }

    /// The embedding model: `model` (a path or a name in the models folder) or the config's, through `backend` or
    /// the config's engine (with a model given: pure-swift for a folder, llama for a .gguf file).
    public func openEmbeddingModel(model: String?, backend: String?, threads: Int?) async throws -> any EmbeddingModel {
        let choice = config.embedding
        let url = try embeddingModelURL(model)
        let id: String
        if let backend {
            id = backend
        } else if model != nil {
            id = url.pathExtension.lowercased() == "gguf" ? "llama" : "pure-swift"
        } else {
            id = choice?.backend ?? "pure-swift"
        }
        guard let engine = registry.embedding[id] else {
            throw UsageError(
                "unknown embedding backend '\(id)'; known: \(registry.embeddingIDs.joined(separator: ", "))")
        }
        if case .unavailable(let reason) = engine.availability {
            throw SanadError.engine("embedding backend '\(id)' is unavailable: \(reason)")
        }
        let options = ModelLoadOptions(
            threads: threads ?? config.threads ?? CPUAvailability.defaultThreads,
            engineOptions: engineOptions(id))
        return FiniteEmbeddingModel(try await engine.loadEmbeddingModel(at: url, options: options), name: url.path)
    }
}

/// A `--chat-template NAME|FILE` value (or `--template`): a built-in family or a Jinja file; anything else is a usage
/// error (exit 64) naming the known families.
public func parseTemplate(_ nameOrPath: String) throws -> ChatPromptTemplate {
    if ChatTemplate(rawValue: nameOrPath) == nil && !FileManager.default.fileExists(atPath: nameOrPath) {
        throw UsageError(
            "unknown chat template '\(nameOrPath)': not a built-in family "
                + "(\(ChatTemplate.allCases.map(\.rawValue).joined(separator: ", "))) nor a Jinja file")
    }
    do {
        return try ChatPromptTemplate.named(nameOrPath)
    } catch {
        throw UsageError("--chat-template \(nameOrPath): \(error)")
    }
}
