import Foundation
import SanadCore

/// The engine order `sanad tune` measured on this device for one tier: kept in the user's config folder (never in
/// the repo's configs) and applied over the tier file's order when it still describes that tier (same model, same
/// engines).
public struct EngineTuning: Sendable, Equatable {
    /// One measured engine, fastest first.
    public struct Engine: Sendable, Equatable {
        public var id: String
        /// The figures, shown as the engine's `why`.
        public var why: String

        public init(id: String, why: String) {
            self.id = id
            self.why = why
        }
    }

    public var tier: String
    public var model: String
    /// ISO 8601 time of the run.
    public var measuredAt: String
    /// The CPU and core count it ran on.
    public var machine: String
    public var threads: Int
    public var engines: [Engine]

    public init(tier: String, model: String, measuredAt: String, machine: String, threads: Int, engines: [Engine]) {
        self.tier = tier
        self.model = model
        self.measuredAt = measuredAt
        self.machine = machine
        self.threads = threads
        self.engines = engines
    }

    /// `$SANAD_TUNING_DIR`, else `$XDG_CONFIG_HOME/sanad/tuning`, else `~/.config/sanad/tuning`.
    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let d = environment["SANAD_TUNING_DIR"], !d.isEmpty { return URL(fileURLWithPath: d) }
        let config =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
        return config.appendingPathComponent("sanad/tuning")
    }

    /// The file for `tier` in `directory`.
    public static func file(tier: String, in directory: URL = directory()) -> URL {
        directory.appendingPathComponent("tier-\(tier).json")
    }

    public var json: JSONValue {
        .object([
            "tier": .string(tier), "model": .string(model), "measuredAt": .string(measuredAt),
            "machine": .string(machine), "threads": .number(Double(threads)),
            "engines": .array(engines.map { .object(["id": .string($0.id), "why": .string($0.why)]) }),
        ])
    }

    /// Reads `url` strictly; errors name the file and the key.
    public static func load(from url: URL) throws -> EngineTuning {
        let file = url.path
        let json: JSONValue
        do {
            json = try StrictJSON().parse(try Data(contentsOf: url))
        } catch {
            throw SanadError.invalidConfig(
                file: file, keyPath: "", problem: "\(error) (delete the file or run 'sanad tune' again)")
        }
        let o = try ConfigReader(file: file, path: "", value: json)
            .object(allowed: ["tier", "model", "measuredAt", "machine", "threads", "engines"])
        var engines: [Engine] = []
        for entry in try o.required("engines").array() {
            let e = try entry.object(allowed: ["id", "why"])
            engines.append(Engine(id: try e.required("id").string(), why: try e.required("why").string()))
        }
        return EngineTuning(
            tier: try o.required("tier").string(), model: try o.required("model").string(),
            measuredAt: try o.required("measuredAt").string(), machine: try o.required("machine").string(),
            threads: try o.required("threads").int(in: HostConfiguration.Limits.threads), engines: engines)
    }

    /// Writes to `url` through a temporary file and a rename, creating the folder.
    public func save(to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = url.appendingPathExtension("tmp")
        try Data((json.prettyString + "\n").utf8).write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            let problem = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw SanadError.invalidConfig(file: url.path, keyPath: "", problem: "cannot write the file (\(problem))")
        }
    }

    /// Why this tuning does not apply to `config`, nil when it does: another tier, another model, or engines that
    /// are not the tier's.
    public func mismatch(with config: HostConfiguration) -> String? {
        if tier != config.tier { return "it is for tier '\(tier)'" }
        if model != config.model { return "it measured \(model), the tier now runs \(config.model)" }
        let ids = Set(config.backends.map(\.id))
        guard Set(engines.map(\.id)).isSubset(of: ids), !engines.isEmpty else {
            return "its engines (\(engines.map(\.id).joined(separator: ", "))) are not the tier's"
        }
        return nil
    }

    /// `config` with its engines in the measured order (each with the measured `why`, its options kept); engines
    /// the run did not measure (unavailable then) keep their place after the measured ones.
    public func applied(to config: HostConfiguration) -> HostConfiguration {
        var c = config
        var ordered: [BackendChoice] = []
        for e in engines {
            guard var choice = config.backends.first(where: { $0.id == e.id }) else { continue }
            choice.why = e.why
            ordered.append(choice)
        }
        ordered += config.backends.filter { b in !engines.contains { $0.id == b.id } }
        c.backends = ordered
        return c
    }
}
