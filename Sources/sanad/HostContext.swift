import Foundation
import GGUF
import SanadCore

/// Where Sanad's files are and which config is in force for this command.
struct HostContext {
    /// The Sanad checkout (holds configs/ and, by default, models/).
    let home: URL?
    let modelsDirectory: URL
    let configsDirectory: URL?
    let registry: BackendRegistry
    /// Every tier config found in configs/.
    let tiers: [HostConfiguration]
    /// The config in force.
    let config: HostConfiguration
    /// Why this config was chosen.
    let reason: String
    let memory: SystemMemory

    /// Options every command that uses a config accepts.
    static let optionsHelp = """
          --config FILE       host config to use (default: SANAD_CONFIG, else the tier for this machine's memory)
          --tier NAME         use configs/tier-NAME.json
          --models DIR        models folder (default: SANAD_MODELS, else models/ in the Sanad checkout)
        """

    /// Reads `--config`, `--tier` and `--models` from `arguments` and loads the config in force.
    static func load(_ arguments: inout Arguments) throws -> HostContext {
        let configFlag = try arguments.option("--config")
        let tierFlag = try arguments.option("--tier")
        let modelsFlag = try arguments.option("--models")
        let env = ProcessInfo.processInfo.environment
        let home = findHome()
        let modelsDirectory =
            modelsFlag.map { URL(fileURLWithPath: $0) }
            ?? env["SANAD_MODELS"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? (home ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).appendingPathComponent("models")
        let configsDirectory = home?.appendingPathComponent("configs")
        let registry = Wiring.registry()
        func load(_ url: URL) throws -> HostConfiguration {
            try HostConfiguration.load(
                from: url, backendIDs: registry.inferenceIDs, embeddingIDs: registry.embeddingIDs,
                pluginIDs: Wiring.plugins.ids)
        }
        var tiers: [HostConfiguration] = []
        if let configsDirectory {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: configsDirectory.path)) ?? []
            for name in names.sorted() where name.hasPrefix("tier-") && name.hasSuffix(".json") {
                tiers.append(try load(configsDirectory.appendingPathComponent(name)))
            }
        }
        let memory = SystemMemory.current()
        let config: HostConfiguration
        let reason: String
        if let configFlag {
            config = try load(URL(fileURLWithPath: configFlag))
            reason = "--config \(configFlag)"
        } else if let tierFlag {
            guard let t = tiers.first(where: { $0.tier == tierFlag }) else {
                throw UsageError(
                    "unknown tier '\(tierFlag)'; tiers: \(tiers.map(\.tier).joined(separator: ", "))"
                        + (configsDirectory.map { " (from \($0.path))" }
                            ?? " (no configs/ folder found; set SANAD_HOME)"))
            }
            config = t
            reason = "--tier \(tierFlag)"
        } else if let path = env["SANAD_CONFIG"], !path.isEmpty {
            config = try load(URL(fileURLWithPath: path))
            reason = "SANAD_CONFIG=\(path)"
        } else if let chosen = TierSelection.choose(from: tiers, memory: memory) {
            config = chosen.config
            reason = chosen.reason
        } else {
            throw SanadError.invalidConfig(
                file: configsDirectory?.path ?? "configs/", keyPath: "",
                problem: "no tier configs found; run sanad from the Sanad checkout, set SANAD_HOME to it, or pass "
                    + "--config FILE")
        }
        return HostContext(
            home: home, modelsDirectory: modelsDirectory, configsDirectory: configsDirectory, registry: registry,
            tiers: tiers, config: config, reason: reason, memory: memory)
    }

    /// The checkout: SANAD_HOME, else the nearest folder holding configs/tier-*.json above the working directory
    /// or above the executable.
    static func findHome() -> URL? {
        let env = ProcessInfo.processInfo.environment
        if let h = env["SANAD_HOME"], !h.isEmpty { return URL(fileURLWithPath: h) }
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

    /// A model path: an existing path as given, else a file name in the models folder; nil = the config's model.
    func resolveModel(_ nameOrPath: String?) throws -> URL {
        let name = nameOrPath ?? config.model
        let direct = URL(fileURLWithPath: name)
        if name.contains("/") || FileManager.default.fileExists(atPath: direct.path) && nameOrPath != nil {
            guard FileManager.default.fileExists(atPath: direct.path) else {
                throw SanadError.modelNotFound(name: name, searched: [direct.path])
            }
            return direct
        }
        let inFolder = modelsDirectory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: inFolder.path) else {
            throw SanadError.modelNotFound(name: name, searched: [modelsDirectory.path])
        }
        return inFolder
    }

    /// The engine `id`, or the first available one of the config's preference list. Skipped engines are reported
    /// on stderr with their reasons.
    func backend(_ id: String?) throws -> any InferenceBackend {
        if let id {
            let b = try registry.backend(id)
            if case .unavailable(let reason) = b.availability(options: engineOptions(id)) {
                throw SanadError.backendUnavailable(id: id, reason: reason)
            }
            return b
        }
        let chosen = try registry.firstAvailable(config.backends)
        for s in chosen.skipped { printError("note: skipping backend \(s)") }
        return chosen.backend
    }

    /// The config's options for engine `id` (empty when the config does not list it).
    func engineOptions(_ id: String) -> [String: JSONValue] {
        config.backends.first { $0.id == id }?.options ?? [:]
    }

    /// Load options from the config, overridden by flags.
    func loadOptions(backend: String, threads: Int? = nil, context: Int? = nil, seed: UInt64? = nil) -> ModelLoadOptions
    {
        let engineOptions = engineOptions(backend)
        return ModelLoadOptions(
            threads: threads ?? config.threads ?? ProcessInfo.processInfo.activeProcessorCount,
            contextLength: context ?? config.contextLength, batchSize: config.batchSize, seed: seed ?? 0xC0FFEE,
            engineOptions: engineOptions)
    }

    /// Estimates the model's memory at `contextLength` (with what `backend` adds, under the config's options for
    /// it) and refuses when it exceeds the tier's budget.
    func checkMemory(
        model url: URL, contextLength: Int, kvElementBytes: Int = 2, backend: (any InferenceBackend)? = nil
    ) throws -> MemoryEstimate {
        let file = try GGUFFile(path: url.path)
        let engine = backend.flatMap { $0.additionalMemory(model: file, options: engineOptions($0.id)) }
        let estimate = MemoryEstimate(
            model: try ModelSummary(file: file), contextLength: contextLength, batchSize: config.batchSize,
            kvElementBytes: kvElementBytes, engine: engine)
        try estimate.check(against: config, allTiers: tiers)
        return estimate
    }
}
