import Foundation
import GGUF
import SanadChat
import SanadCore
import SanadHost

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
    /// The engine order `sanad tune` measured, when it was applied over the tier file's.
    let tuning: EngineTuning?
    /// Why a tuning file that exists was not applied (nil when there is none, or it was applied).
    let tuningIgnored: String?

    /// Options every command that uses a config accepts.
    static let optionsHelp = """
          --config FILE       host config to use (default: SANAD_CONFIG, else the tier for this machine's memory)
          --tier NAME         use configs/tier-NAME.json
          --models DIR        models folder (default: SANAD_MODELS, else models/ in the Sanad checkout)
          --no-tuning         the tier file's engine order, not the one 'sanad tune' measured on this device
        """

    /// Reads `--config`, `--tier` and `--models` from `arguments` and loads the config in force.
    static func load(_ arguments: inout Arguments) throws -> HostContext {
        let configFlag = try arguments.option("--config")
        let tierFlag = try arguments.option("--tier")
        let modelsFlag = try arguments.option("--models")
        let noTuning = arguments.flag("--no-tuning")
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
                pluginIDs: Wiring.plugins.ids, validateOptions: registry.validateOptions)
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
            fromTierFile = true
        } else if let path = env["SANAD_CONFIG"], !path.isEmpty {
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
        // A tier file's engine order gives way to the one measured on this device (`sanad tune`).
        var tuning: EngineTuning?
        var tuningIgnored: String?
        let tuningFile = EngineTuning.file(tier: config.tier)
        if fromTierFile, !noTuning, FileManager.default.fileExists(atPath: tuningFile.path) {
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
            tuningIgnored: tuningIgnored)
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

    /// The one way commands open a model (see `ModelOpener`).
    var opener: ModelOpener {
        ModelOpener(registry: registry, config: config, tiers: tiers, modelsDirectory: modelsDirectory)
    }

    /// A model path: an existing path as given, else a file name in the models folder; nil = the config's model.
    func resolveModel(_ nameOrPath: String?) throws -> URL { try opener.resolveModel(nameOrPath) }

    /// The config's options for engine `id` (empty when the config does not list it).
    func engineOptions(_ id: String) -> [String: JSONValue] { opener.engineOptions(id) }

    /// Refuses an engine id that is not registered, as a usage error (exit 64).
    func validateBackendID(_ id: String?) throws {
        guard let id, registry.inference[id] == nil else { return }
        throw UsageError("unknown backend '\(id)'; known backends: \(registry.inferenceIDs.joined(separator: ", "))")
    }

    /// Plans the request (model, engine with the reasons earlier ones were skipped, context and memory checks),
    /// reports skipped engines on stderr, and loads. Every command that loads a model comes through here.
    func openModel(_ request: ModelRequest) async throws -> (session: any InferenceSession, plan: ModelPlan) {
        let plan = try planModel(request)
        return (try await opener.open(plan), plan)
    }

    /// The checks of `openModel` without the load.
    func planModel(_ request: ModelRequest) throws -> ModelPlan {
        try validateBackendID(request.backend)
        let plan = try opener.plan(request)
        for s in plan.skipped { printError("note: skipping backend \(s)") }
        if !request.checkMemory, plan.estimate.totalBytes > config.memoryBudgetMiB * 1_048_576 {
            printError(
                "note: --no-memory-check: \(plan.estimate.text) exceeds tier '\(config.tier)' budget "
                    + "\(config.memoryBudgetMiB) MiB")
        }
        if request.allowLongContext, let training = plan.trainingContextLength,
            let context = plan.options.contextLength, context > training
        {
            printError(
                "note: --allow-long-context: context \(context) is beyond the model's training context \(training); "
                    + "no RoPE scaling is applied")
        }
        return plan
    }

    /// Estimates the model's memory at `contextLength` (with what `backend` adds, under the config's options for
    /// it) and refuses when it exceeds the tier's budget.
    func checkMemory(model url: URL, contextLength: Int, backend: (any InferenceBackend)? = nil) throws
        -> MemoryEstimate
    {
        let estimate = try opener.estimate(
            model: try GGUFFile(path: url.path), contextLength: contextLength, backend: backend)
        try estimate.check(against: config, allTiers: tiers)
        return estimate
    }
}

/// The flags every command that loads a model accepts beyond -m, --backend, -c and -t.
struct LoadFlags {
    var checkMemory = true
    var allowLongContext = false

    static let help = """
          --no-memory-check      load even when the estimate exceeds the tier's memory budget
          --allow-long-context   allow a context beyond the model's training context
        """

    static func parse(_ arguments: inout Arguments) -> LoadFlags {
        LoadFlags(
            checkMemory: !arguments.flag("--no-memory-check"),
            allowLongContext: arguments.flag("--allow-long-context"))
    }
}
