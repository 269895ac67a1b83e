import Foundation
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad backends`: every engine, available or why not.
enum BackendsCommand: SanadCommand {
    static let name = "backends"
    static let summary = "List the engines and whether each can run here"
    static let help = """
        Usage: sanad backends [--json] [--config FILE]

        Lists every inference and embedding engine Sanad knows, whether it is available on this machine, and if not,
        why and how to fix it. With a host config (--config FILE or SANAD_CONFIG), each engine is checked with that
        config's options for it (a `library` path, a kernel build), and a config that does not load is an error.

        Options:
          --json           one JSON object per engine
          --config FILE    check the engines with this host config's engine options
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let json = arguments.flag("--json")
        let options = try HostOptions.parse(&arguments)
        try arguments.finish()
        let configNamed =
            options.configFile != nil || !(ProcessInfo.processInfo.environment["SANAD_CONFIG"] ?? "").isEmpty
        let host = configNamed ? try HostContext.load(options) : nil
        let registry = Wiring.registry()
        var rows: [JSONValue] = []
        for id in registry.inferenceIDs {
            guard let b = registry.inference[id] else { continue }
            let embeds = registry.embedding[id] != nil
            let role = embeds ? "generation + embeddings" : "generation"
            let (available, note): (Bool, String) =
                switch host.map({ b.availability(options: $0.engineOptions(id)) }) ?? b.availability {
                case .available(let detail): (true, detail)
                case .unavailable(let reason): (false, reason)
                }
            if json {
                rows.append(
                    .object([
                        "id": .string(id), "available": .bool(available),
                        available ? "detail" : "reason": .string(note),
                        "summary": .string(b.summary), "embeddings": .bool(embeds),
                    ]))
            } else {
                let status = (available ? "available" : "unavailable").padding(
                    toLength: 12, withPad: " ", startingAt: 0)
                print(
                    "\(id.padding(toLength: 12, withPad: " ", startingAt: 0)) \(status) [\(role)] \(b.summary) — \(note)"
                )
            }
        }
        if json { print(JSONValue.array(rows).prettyString) }
        return ExitCode.success
    }
}
