import Foundation
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad config`: the tier in force, why, and what it resolves to.
enum ConfigCommand: SanadCommand {
    static let name = "config"
    static let summary = "Show the host config in force: tier, why, backend and plugins"
    static let help = """
        Usage: sanad config [--tier NAME | --config FILE] [--models DIR] [--json]

        Exits 1 when the selected setup cannot run: no engine of its list is available, the model file is missing,
        or the estimate exceeds the tier's budget.

        Shows which tier config applies to this machine and why (physical memory, cgroup limit), the engine it
        resolves to (the first available one of its preference list; the others with their reasons), the model with
        its memory estimate against the tier's budget (with what that engine adds, such as the BLAS engine's F32
        weights), the embedding backend and the plugins. Each engine's 'why' from the config is shown under it.

        Options:
        \(HostContext.optionsHelp)
          --json              machine-readable output
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let json = arguments.flag("--json")
        let host = try HostContext.load(&arguments)
        try arguments.finish()
        let c = host.config
        var backendRows: [JSONValue] = []
        var chosen: String?
        for choice in c.backends {
            let availability =
                host.registry.inference[choice.id]?.availability(options: choice.options)
                ?? .unavailable(reason: "unknown")
            var row: [String: JSONValue] = ["id": .string(choice.id)]
            if let why = choice.why { row["why"] = .string(why) }
            switch availability {
            case .available(let detail):
                row["available"] = .bool(true)
                row["detail"] = .string(detail)
                if chosen == nil { chosen = choice.id }
            case .unavailable(let reason):
                row["available"] = .bool(false)
                row["reason"] = .string(reason)
            }
            row["chosen"] = .bool(
                chosen == choice.id && row["available"] == .bool(true)
                    && backendRows.allSatisfy { $0["chosen"] != .bool(true) })
            backendRows.append(.object(row))
        }
        var modelRow: [String: JSONValue] = ["name": .string(c.model)]
        var estimateText = "not found in \(host.modelsDirectory.path) — run scripts/setup"
        // The setup can run only with an engine, the model file, and an estimate within the budget.
        var fits = chosen != nil
        let resolved = try? host.resolveModel(nil)
        if resolved == nil { fits = false }
        if let url = resolved {
            modelRow["path"] = .string(url.path)
            do {
                let e = try host.checkMemory(
                    model: url, contextLength: c.contextLength,
                    backend: chosen.flatMap { host.registry.inference[$0] })
                estimateText = e.text + " ≤ budget \(c.memoryBudgetMiB) MiB"
                modelRow["estimateBytes"] = .number(Double(e.totalBytes))
                if let engine = e.engine {
                    modelRow["engineMemory"] = .object([
                        "label": .string(engine.label), "bytes": .number(Double(engine.bytes)),
                    ])
                }
            } catch {
                fits = false
                estimateText = "\(error)"
            }
        }
        modelRow["estimate"] = .string(estimateText)
        let order =
            host.tuning.map {
                "measured by 'sanad tune' at \($0.measuredAt) on \($0.machine), \(TuneCommand.threadCount($0.threads)) "
                    + "(\(EngineTuning.file(tier: c.tier).path); --no-tuning for the tier file's)"
            } ?? "from \(c.file.lastPathComponent)" + (host.tuningIgnored.map { " (\($0))" } ?? "")
        let threadsText =
            c.threads.map { "\($0) (config)" }
            ?? "\(CPUAvailability.defaultThreads) (\(CPUAvailability.current.description))"
        if json {
            let object: JSONValue = .object([
                "file": .string(c.file.path), "tier": .string(c.tier), "reason": .string(host.reason),
                "summary": .string(c.summary),
                "memory": .object([
                    "physicalMiB": .number(Double(host.memory.physicalBytes / 1_048_576)),
                    "cgroupLimitMiB": host.memory.cgroupLimitBytes.map { .number(Double($0 / 1_048_576)) } ?? .null,
                    "budgetMiB": .number(Double(c.memoryBudgetMiB)),
                ]),
                "backends": .array(backendRows), "backend": chosen.map(JSONValue.string) ?? .null,
                "order": .object([
                    "source": .string(host.tuning == nil ? "tier file" : "tuning"), "text": .string(order),
                    "measuredAt": host.tuning.map { .string($0.measuredAt) } ?? .null,
                ]),
                "model": .object(modelRow), "contextLength": .number(Double(c.contextLength)),
                "kvCache": .object([
                    "typeK": .string(c.cacheTypeK.cacheTypeName), "typeV": .string(c.cacheTypeV.cacheTypeName),
                    "why": c.cacheWhy.map(JSONValue.string) ?? .null,
                ]),
                "threads": c.threads.map { .number(Double($0)) } ?? .null,
                "defaultThreads": .number(Double(c.threads ?? CPUAvailability.defaultThreads)),
                "cpu": .string(CPUAvailability.current.description),
                "embedding": c.embedding.map { .object(["backend": .string($0.backend), "model": .string($0.model)]) }
                    ?? .null,
                "plugins": .array(c.plugins.map { .string($0.id) }),
                "tiers": .array(host.tiers.map { .string($0.tier) }),
            ])
            print(object.prettyString)
            return fits ? ExitCode.success : ExitCode.failure
        }
        print("tier:       \(c.tier)  (\(c.file.lastPathComponent))")
        print("why:        \(host.reason)")
        if !c.summary.isEmpty { print("about:      \(c.summary)") }
        print("backend:    \(chosen ?? "none available")")
        print("order:      \(order)")
        for row in backendRows {
            let id = row["id"]?.stringValue ?? ""
            if row["available"] == .bool(true) {
                print(
                    "  \(row["chosen"] == .bool(true) ? "*" : " ") \(id): available — \(row["detail"]?.stringValue ?? "")"
                )
            } else {
                print("    \(id): unavailable — \(row["reason"]?.stringValue ?? "")")
            }
            if let why = row["why"]?.stringValue { print("      why: \(why)") }
        }
        print("model:      \(c.model)")
        print("memory:     \(estimateText)")
        print(
            "context:    \(c.contextLength) tokens, threads: \(threadsText), batch \(c.batchSize)"
        )
        print(
            "KV cache:   keys \(c.cacheTypeK.cacheTypeName), values \(c.cacheTypeV.cacheTypeName)"
                + (c.cacheWhy.map { " — \($0)" } ?? ""))
        print("embedding:  \(c.embedding.map { "\($0.backend) (\($0.model))" } ?? "none")")
        print("plugins:    \(c.plugins.isEmpty ? "none" : c.plugins.map(\.id).joined(separator: ", "))")
        print(
            "grounded:   worded by the \(c.groundedPhrasing.rawValue)"
                + (c.groundedPhrasingWhy.map { " — \($0)" } ?? (c.groundedPhrasing == .model ? ", checked" : "")))
        print("tiers:      \(host.tiers.map { "\($0.tier) (≥ \($0.minimumMemoryMiB) MiB)" }.joined(separator: ", "))")
        return fits ? ExitCode.success : ExitCode.failure
    }
}
