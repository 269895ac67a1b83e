import Foundation
import GGUF
import SanadChat
import SanadCore

/// What the program wires in (`Wiring.swift` in the CLI, or an app's own): the engines, the plugins by config id,
/// and the product the chat presents. Only the program knows the concrete modules; everything else reaches them
/// through this value.
public struct HostWiring: Sendable {
    /// Makes the registry of every engine (fresh per host: engines cache their libraries themselves).
    public var registry: @Sendable () -> BackendRegistry
    /// The feature plugins by the id configs use.
    public var plugins: PluginRegistry
    /// The wording, greeting and deep-link format the chat, the server's web chat and the tools present.
    public var product: ChatProduct

    public init(registry: @escaping @Sendable () -> BackendRegistry, plugins: PluginRegistry, product: ChatProduct) {
        self.registry = registry
        self.plugins = plugins
        self.product = product
    }
}

/// How a person chose the config: `--config`, `--tier`, `--models`, `--no-tuning` on the command line, or an app's
/// own settings.
public struct HostOptions: Sendable, Equatable {
    public var configFile: String?
    public var tier: String?
    public var modelsDirectory: String?
    public var noTuning: Bool

    public init(configFile: String? = nil, tier: String? = nil, modelsDirectory: String? = nil, noTuning: Bool = false)
    {
        self.configFile = configFile
        self.tier = tier
        self.modelsDirectory = modelsDirectory
        self.noTuning = noTuning
    }
}

/// A choice a person made that names nothing that exists (an unknown tier or engine): the CLI's usage error, exit 64.
public struct HostUsageError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The host every front end starts from the same way (the CLI, the server, an app): where Sanad's files are, the
/// engines, the config in force and why, the tuning measured on this device, the plugins and their data folders,
/// the clock they see, and the product.
public struct HostContext: Sendable {
    /// The Sanad checkout (holds configs/ and, by default, models/).
    public let home: URL?
    public let modelsDirectory: URL
    public let configsDirectory: URL?
    public let registry: BackendRegistry
    /// Every tier config found in configs/.
    public let tiers: [HostConfiguration]
    /// The config in force.
    public let config: HostConfiguration
    /// Why this config was chosen.
    public let reason: String
    public let memory: SystemMemory
    /// The engine order `sanad tune` measured, when it was applied over the tier file's.
    public let tuning: EngineTuning?
    /// Why a tuning file that exists was not applied (nil when there is none, or it was applied).
    public let tuningIgnored: String?
    /// The plugins by id and the product.
    public let wiring: HostWiring
    /// The plugins' clock.
    public let clock: @Sendable () -> Date
    let environment: [String: String]

    /// The product the chat presents.
    public var product: ChatProduct { wiring.product }

    /// Finds the checkout and the models, reads every tier config, and picks the config in force: `--config`, else
    /// `--tier`, else `SANAD_CONFIG`, else the tier for this machine's memory; a tier file's engine order gives way to
    /// the one `sanad tune` measured on this device unless `noTuning`.
    public static func load(
        _ options: HostOptions, wiring: HostWiring, clock: @escaping @Sendable () -> Date = { Date() },
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> HostContext {
        let home = findHome(environment: environment)
        let modelsDirectory =
            options.modelsDirectory.map { URL(fileURLWithPath: $0) }
            ?? environment["SANAD_MODELS"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? (home ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).appendingPathComponent("models")
        let configsDirectory = home?.appendingPathComponent("configs")
        let registry = wiring.registry()
        func load(_ url: URL) throws -> HostConfiguration {
            try HostConfiguration.load(
                from: url, backendIDs: registry.inferenceIDs, embeddingIDs: registry.embeddingIDs,
                pluginIDs: wiring.plugins.ids, validateOptions: registry.validateOptions)
        }
        var tiers: [HostConfiguration] = []
        if let configsDirectory {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: configsDirectory.path)) ?? []
            for name in names.sorted() where name.hasPrefix("tier-") && name.hasSuffix(".json") {
                tiers.append(try load(configsDirectory.appendingPathComponent(name)))
            }
        }
        let memory = SystemMemory.current()
        var config: HostConfiguration
        let reason: String
        var fromTierFile = false
        if let file = options.configFile {
            config = try load(URL(fileURLWithPath: file))
            reason = "--config \(file)"
        } else if let tier = options.tier {
            guard let t = tiers.first(where: { $0.tier == tier }) else {
                throw HostUsageError(
                    "unknown tier '\(tier)'; tiers: \(tiers.map(\.tier).joined(separator: ", "))"
                        + (configsDirectory.map { " (from \($0.path))" }
                            ?? " (no configs/ folder found; set SANAD_HOME)"))
            }
            config = t
            reason = "--tier \(tier)"
            fromTierFile = true
        } else if let path = environment["SANAD_CONFIG"], !path.isEmpty {
            config = try load(URL(fileURLWithPath: path))
            reason = "SANAD_CONFIG=\(path)"
        } else if let chosen = TierSelection.choose(from: tiers, memory: memory) {
            config = chosen.config
            reason = chosen.reason
            fromTierFile = true
        } else {
            throw SanadError.invalidConfig(
                file: configsDirectory?.path ?? "configs/", keyPath: "",
                problem: "no tier configs found; run sanad from the Sanad checkout, set SANAD_HOME to it, or pass "
                    + "--config FILE")
        }
        var tuning: EngineTuning?
        var tuningIgnored: String?
        let tuningFile = EngineTuning.file(tier: config.tier)
        if fromTierFile, !options.noTuning, FileManager.default.fileExists(atPath: tuningFile.path) {
            do {
                let t = try EngineTuning.load(from: tuningFile)
                if let why = t.mismatch(with: config) {
                    tuningIgnored = "\(tuningFile.path) not applied: \(why); run 'sanad tune' again"
                } else {
                    config = t.applied(to: config)
                    tuning = t
                }
            } catch {
                tuningIgnored = "\(error)"
            }
        }
        return HostContext(
            home: home, modelsDirectory: modelsDirectory, configsDirectory: configsDirectory, registry: registry,
            tiers: tiers, config: config, reason: reason, memory: memory, tuning: tuning,
            tuningIgnored: tuningIgnored, wiring: wiring, clock: clock, environment: environment)
    }

    /// The checkout: SANAD_HOME, else the nearest folder holding configs/tier-*.json above the working directory
    /// or above the executable.
    public static func findHome(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let h = environment["SANAD_HOME"], !h.isEmpty { return URL(fileURLWithPath: h) }
        var starts = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: exe).deletingLastPathComponent())
        } else {
            starts.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        }
        for start in starts {
            var dir = start.standardizedFileURL
            for _ in 0..<8 {
                let configs = dir.appendingPathComponent("configs/tier-4gb.json")
                if FileManager.default.fileExists(atPath: configs.path) { return dir }
                let parent = dir.deletingLastPathComponent()
                if parent.path == dir.path { break }
                dir = parent
            }
        }
        return nil
    }

    // MARK: Models and engines

    /// The one way front ends open a model (see `ModelOpener`).
    public var opener: ModelOpener {
        ModelOpener(registry: registry, config: config, tiers: tiers, modelsDirectory: modelsDirectory)
    }

    /// A model path: an existing path as given, else a file name in the models folder; nil = the config's model.
    public func resolveModel(_ nameOrPath: String?) throws -> URL { try opener.resolveModel(nameOrPath) }

    /// The config's options for engine `id` (empty when the config does not list it).
    public func engineOptions(_ id: String) -> [String: JSONValue] { opener.engineOptions(id) }

    /// Refuses an engine id that is not registered (a usage error).
    public func checkBackend(_ id: String?) throws {
        guard let id, registry.inference[id] == nil else { return }
        throw HostUsageError(
            "unknown backend '\(id)'; known backends: \(registry.inferenceIDs.joined(separator: ", "))")
    }

    /// Plans the request (model, engine with the reasons earlier ones were skipped, context and memory checks) and
    /// says what a person should know about it (`notes`: skipped engines, overridden checks).
    public func plan(_ request: ModelRequest) throws -> (plan: ModelPlan, notes: [String]) {
        try checkBackend(request.backend)
        let plan = try opener.plan(request)
        var notes = plan.skipped.map { "skipping backend \($0)" }
        if !request.checkMemory, plan.estimate.totalBytes > config.memoryBudgetMiB * 1_048_576 {
            notes.append(
                "--no-memory-check: \(plan.estimate.text) exceeds tier '\(config.tier)' budget "
                    + "\(config.memoryBudgetMiB) MiB")
        }
        if request.allowLongContext, let training = plan.trainingContextLength,
            let context = plan.options.contextLength, context > training
        {
            notes.append(
                "--allow-long-context: context \(context) is beyond the model's training context \(training); "
                    + "no RoPE scaling is applied")
        }
        return (plan, notes)
    }

    /// Estimates the model's memory at `contextLength` (with what `backend` adds, under the config's options for
    /// it) and refuses when it exceeds the tier's budget.
    public func checkMemory(model url: URL, contextLength: Int, backend: (any InferenceBackend)? = nil) throws
        -> MemoryEstimate
    {
        let estimate = try opener.estimate(
            model: try GGUFFile(path: url.path), contextLength: contextLength, backend: backend)
        try estimate.check(against: config, allTiers: tiers)
        return estimate
    }

    // MARK: Plugins

    /// The config's plugins, in config order, each with its options, its data folder and the host's clock (or
    /// `now`).
    /// `userData`, when given, replaces the `userData` option of every plugin that has one (`--user FILE`).
    public func makePlugins(now: (@Sendable () -> Date)? = nil, userData: URL? = nil) throws -> [any FeaturePlugin] {
        try config.plugins.map { choice in
            var options = choice.options
            if let userData, options[Self.userDataOption] != nil {
                options[Self.userDataOption] = .string(userData.path)
            }
            let context = PluginContext(
                options: options, dataDirectory: try dataDirectory(for: choice.id), configFile: config.file,
                now: now ?? clock)
            return try wiring.plugins.make(choice.id, context: context)
        }
    }

    /// The plugin option that names the person's data file, which `--user FILE` replaces.
    public static let userDataOption = "userData"

    /// Whether a hosted plugin reads a person's data file (its options name `userData`).
    public var readsUserData: Bool { config.plugins.contains { $0.options[Self.userDataOption] != nil } }

    /// `SANAD_DATA/<id>`, else `~/.local/share/sanad/plugins/<id>`; created when missing.
    public func dataDirectory(for id: String) throws -> URL {
        try Self.dataDirectory(for: id, environment: environment)
    }

    /// `SANAD_DATA/<id>`, else `~/.local/share/sanad/plugins/<id>`; created when missing.
    public static func dataDirectory(
        for id: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> URL {
        let base =
            environment["SANAD_DATA"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/sanad/plugins")
        let url = base.appendingPathComponent(id)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw SanadError.engine(
                "cannot create the data folder \(url.path) for plugin '\(id)' (\(error.localizedDescription)); "
                    + "set SANAD_DATA to a writable folder")
        }
        return url
    }

    /// Every plugin's tools, then the host's `open_deep_link` (in the product's link format).
    public func tools(_ plugins: [any FeaturePlugin]) -> [(plugin: String, tool: any Tool)] {
        Self.tools(plugins, product: product)
    }

    /// Every plugin's tools, then the host's `open_deep_link` in `product`'s link format.
    public static func tools(_ plugins: [any FeaturePlugin], product: ChatProduct) -> [(plugin: String, tool: any Tool)]
    {
        plugins.flatMap { p in p.tools.map { (plugin: p.id, tool: $0) } } + [
            (plugin: "host", tool: OpenDeepLinkTool(plugins: plugins, format: product.linkFormat))
        ]
    }

    /// A clock that starts at `text` (YYYY-MM-DD = noon UTC that day, or an ISO-8601 date-time) and runs on from
    /// there; nil when `text` is neither.
    public static func clock(startingAt text: String) -> (@Sendable () -> Date)? {
        guard let start = parseISO8601(text) ?? parseISO8601(text + "T12:00:00Z") else { return nil }
        let origin = Date()
        return { start.addingTimeInterval(Date().timeIntervalSince(origin)) }
    }
}
