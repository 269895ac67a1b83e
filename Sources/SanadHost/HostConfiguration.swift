import Foundation
import GGUF
import SanadChat
import SanadCore

/// One host config: a memory tier's choice of engines, model, context, embedding backend and plugins.
///
/// Files live in `configs/` (one per tier). Decoding is strict: an unknown key, an unknown backend/plugin id or a
/// wrong type is an error naming the file, the key path and the valid choices.
public struct HostConfiguration: Sendable, Equatable {
    /// An engine in the preference list (defined in the core, where the registry picks from such lists).
    public typealias BackendChoice = SanadCore.BackendChoice

    /// The embedding engine and its model.
    public struct EmbeddingChoice: Sendable, Equatable {
        public var backend: String
        public var model: String

        public init(backend: String, model: String) {
            self.backend = backend
            self.model = model
        }
    }

    /// A plugin to host and its options.
    public struct PluginChoice: Sendable, Equatable {
        public var id: String
        public var options: [String: JSONValue]

        public init(id: String, options: [String: JSONValue] = [:]) {
            self.id = id
            self.options = options
        }
    }

    /// The file this came from.
    public var file: URL
    /// The tier's name (`2gb`, `4gb`, `8gb`).
    public var tier: String
    /// Why this tier exists / what it favours.
    public var summary: String
    /// Machines with at least this much memory (MiB) may use the tier.
    public var minimumMemoryMiB: Int
    /// What the model, KV cache and scratch may take (MiB); loads above it are refused.
    public var memoryBudgetMiB: Int
    /// Model file name in the models folder.
    public var model: String
    public var contextLength: Int
    /// Worker threads; nil = all cores.
    public var threads: Int?
    public var batchSize: Int
    /// Engines in order of preference: the first available one runs.
    public var backends: [BackendChoice]
    public var embedding: EmbeddingChoice?
    public var plugins: [PluginChoice]
    /// Who words grounded replies on this tier (`groundedReplies.phrasing`; default: the model, checked) and why
    /// (`groundedReplies.why`: the measurement behind the choice).
    public var groundedPhrasing: GroundedPhrasing = .model
    public var groundedPhrasingWhy: String?
    /// How the KV cache stores keys and values (`kvCache.typeK`/`typeV`: llama.cpp's `-ctk`/`-ctv` names; default
    /// f16) and why (`kvCache.why`). `--cache-type-k/-v` override them per command.
    public var cacheTypeK: GGMLType = .f16
    public var cacheTypeV: GGMLType = .f16
    public var cacheWhy: String?

    /// The ranges a config's numbers must fall in: wide enough for any real machine and model, narrow enough that
    /// every product the host and the engines form from them (bytes from MiB, C `int32_t` context and thread counts)
    /// stays representable.
    public enum Limits {
        /// 16 M tokens (`-c` accepts the same).
        public static let contextLength = 16...(1 << 24)
        /// 1 MiB … 1 PiB.
        public static let memoryMiB = 1...(1 << 30)
        public static let minimumMemoryMiB = 0...(1 << 30)
        public static let threads = 1...1024
        public static let batchSize = 1...(1 << 20)
    }

    static let keys = [
        "tier", "summary", "minimumMemoryMiB", "memoryBudgetMiB", "model", "contextLength", "threads", "batchSize",
        "backends", "embedding", "plugins", "groundedReplies", "kvCache",
    ]

    /// Reads and validates `url` (strict JSON, see `StrictJSON`). `backendIDs`, `embeddingIDs` and `pluginIDs`
    /// are the registered ids; `validateOptions` checks an engine's `options` (see `BackendRegistry.validateOptions`),
    /// its error reported under the key path `backends[i].options`.
    public static func load(
        from url: URL, backendIDs: [String], embeddingIDs: [String], pluginIDs: [String],
        validateOptions: ((_ id: String, _ options: [String: JSONValue]) throws -> Void)? = nil
    ) throws -> HostConfiguration {
        let file = url.path
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SanadError.invalidConfig(
                file: file, keyPath: "", problem: "cannot read the file (\(error.localizedDescription))")
        }
        let json: JSONValue
        do {
            json = try StrictJSON().parse(data)
        } catch {
            throw SanadError.invalidConfig(file: file, keyPath: "", problem: "\(error)")
        }
        let root = ConfigReader(file: file, path: "", value: json)
        let object = try root.object(allowed: keys)

        let tier = try object.required("tier").string()
        let backendsReader = try object.required("backends").array()
        guard !backendsReader.isEmpty else {
            throw SanadError.invalidConfig(
                file: file, keyPath: "backends",
                problem: "is empty; list at least one of: \(backendIDs.joined(separator: ", "))")
        }
        var backends: [BackendChoice] = []
        for entry in backendsReader {
            let o = try entry.object(allowed: ["id", "options", "why"])
            let id = try o.required("id").string(oneOf: backendIDs)
            let options = try o.optional("options")
            let values = try options?.objectValue() ?? [:]
            if let validateOptions, let options {
                do {
                    try validateOptions(id, values)
                } catch {
                    throw options.fail("\(error)")
                }
            }
            backends.append(BackendChoice(id: id, options: values, why: try o.optional("why")?.string()))
        }
        var embedding: EmbeddingChoice?
        if let e = try object.optional("embedding") {
            let o = try e.object(allowed: ["backend", "model"])
            embedding = EmbeddingChoice(
                backend: try o.required("backend").string(oneOf: embeddingIDs),
                model: try o.required("model").string())
        }
        var plugins: [PluginChoice] = []
        for entry in try object.optional("plugins")?.array() ?? [] {
            let o = try entry.object(allowed: ["id", "options"])
            let id = try o.required("id").string(oneOf: pluginIDs)
            plugins.append(PluginChoice(id: id, options: try o.optional("options")?.objectValue() ?? [:]))
        }
        var phrasing = GroundedPhrasing.model
        var phrasingWhy: String?
        if let g = try object.optional("groundedReplies") {
            let o = try g.object(allowed: ["phrasing", "why"])
            let name = try o.required("phrasing").string(oneOf: GroundedPhrasing.allCases.map(\.rawValue))
            phrasing = GroundedPhrasing(rawValue: name) ?? .model
            phrasingWhy = try o.optional("why")?.string()
        }
        var config = HostConfiguration(
            file: url, tier: tier, summary: try object.optional("summary")?.string() ?? "",
            minimumMemoryMiB: try object.required("minimumMemoryMiB").int(in: Limits.minimumMemoryMiB),
            memoryBudgetMiB: try object.required("memoryBudgetMiB").int(in: Limits.memoryMiB),
            model: try object.required("model").string(),
            contextLength: try object.required("contextLength").int(in: Limits.contextLength),
            threads: try object.optional("threads")?.int(in: Limits.threads),
            batchSize: try object.optional("batchSize")?.int(in: Limits.batchSize) ?? 512,
            backends: backends, embedding: embedding, plugins: plugins)
        config.groundedPhrasing = phrasing
        config.groundedPhrasingWhy = phrasingWhy
        if let c = try object.optional("kvCache") {
            let o = try c.object(allowed: ["typeK", "typeV", "why"])
            let names = GGMLType.cacheTypes.map(\.cacheTypeName)
            for (key, side) in [("typeK", \HostConfiguration.cacheTypeK), ("typeV", \HostConfiguration.cacheTypeV)] {
                if let name = try o.optional(key)?.string(oneOf: names), let type = GGMLType(cacheTypeName: name) {
                    config[keyPath: side] = type
                }
            }
            config.cacheWhy = try o.optional("why")?.string()
        }
        return config
    }
}

/// Walks a JSON config keeping the key path, so every error names where it is.
struct ConfigReader {
    let file: String
    let path: String
    let value: JSONValue

    func fail(_ problem: String) -> SanadError {
        SanadError.invalidConfig(file: file, keyPath: path, problem: problem)
    }

    func object(allowed: [String]) throws -> ConfigObject {
        guard case .object(let o) = value else { throw fail("expected an object, found \(value.kindName)") }
        for key in o.keys.sorted() where !allowed.contains(key) {
            throw SanadError.invalidConfig(
                file: file, keyPath: path.isEmpty ? key : path + "." + key,
                problem: "unknown key; valid keys here: \(allowed.joined(separator: ", "))")
        }
        return ConfigObject(reader: self, values: o)
    }

    func array() throws -> [ConfigReader] {
        guard case .array(let a) = value else { throw fail("expected an array, found \(value.kindName)") }
        return a.enumerated().map { ConfigReader(file: file, path: "\(path)[\($0.offset)]", value: $0.element) }
    }

    func string(oneOf choices: [String]? = nil) throws -> String {
        guard case .string(let s) = value else { throw fail("expected a string, found \(value.kindName)") }
        if let choices, !choices.contains(s) {
            throw fail("'\(s)' is not one of: \(choices.joined(separator: ", "))")
        }
        return s
    }

    func int(in range: ClosedRange<Int>) throws -> Int {
        guard case .number(let n) = value else { throw fail("expected an integer, found \(value)") }
        guard n.rounded() == n else { throw fail("expected a whole number, found \(value)") }
        guard n >= Double(range.lowerBound) && n <= Double(range.upperBound), let i = Int(exactly: n) else {
            throw fail("\(value) is out of range: must be in \(range.lowerBound)…\(range.upperBound)")
        }
        return i
    }

    func objectValue() throws -> [String: JSONValue] {
        guard case .object(let o) = value else { throw fail("expected an object, found \(value.kindName)") }
        return o
    }
}

struct ConfigObject {
    let reader: ConfigReader
    let values: [String: JSONValue]

    func child(_ key: String, _ value: JSONValue) -> ConfigReader {
        ConfigReader(file: reader.file, path: reader.path.isEmpty ? key : reader.path + "." + key, value: value)
    }

    func required(_ key: String) throws -> ConfigReader {
        guard let v = values[key] else {
            throw SanadError.invalidConfig(
                file: reader.file, keyPath: reader.path.isEmpty ? key : reader.path + "." + key,
                problem: "missing required key")
        }
        return child(key, v)
    }

    func optional(_ key: String) throws -> ConfigReader? {
        guard let v = values[key], v != .null else { return nil }
        return child(key, v)
    }
}
