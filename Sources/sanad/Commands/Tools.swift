import AbsherData
import Foundation
import SanadChat
import SanadCore
import SanadHost

/// `sanad tools`: list and call the tools of the tier's plugins directly.
enum ToolsCommand: SanadCommand {
    static let name = "tools"
    static let summary = "List the plugins' tools, or call one with JSON arguments"
    static let help = """
        Usage: sanad tools list [--json] [--now DATE]
               sanad tools call NAME ['{json arguments}'] [--now DATE]

        The tools are those of the plugins the host config lists (see 'sanad config'), plus the host's own
        open_deep_link. 'call' prints the tool's JSON result; arguments default to {}.

        Options:
          --json              list as JSON (name, plugin, description, argument schema)
        \(PluginHost.clockHelp)
        \(HostContext.optionsHelp)

        Examples:
          sanad tools call list_alerts
          sanad tools call open_deep_link '{"url": "absher://service/dependents?alert=dep-1"}'
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let json = arguments.flag("--json")
        let clock = try PluginHost.clock(&arguments)
        let host = try HostContext.load(&arguments)
        let rest = try arguments.positionals(min: 1, max: 3, names: "a subcommand (list or call)")
        let plugins = try PluginHost.makePlugins(host, now: clock)
        let tools = PluginHost.tools(plugins)
        switch rest[0] {
        case "list":
            guard rest.count == 1 else { throw UsageError("unexpected argument '\(rest[1])'") }
            if json {
                print(
                    JSONValue.array(
                        tools.map {
                            .object([
                                "name": .string($0.tool.name), "plugin": .string($0.plugin),
                                "description": .string($0.tool.description), "arguments": $0.tool.argumentsSchema,
                            ])
                        }
                    ).prettyString)
            } else {
                for t in tools {
                    print(
                        "\(t.tool.name.padding(toLength: 22, withPad: " ", startingAt: 0)) [\(t.plugin)] \(t.tool.description)"
                    )
                }
            }
            return ExitCode.success
        case "call":
            guard rest.count >= 2 else { throw UsageError("missing the tool NAME; see 'sanad tools list'") }
            guard let tool = tools.first(where: { $0.tool.name == rest[1] })?.tool else {
                throw UsageError("unknown tool '\(rest[1])'; tools: \(tools.map(\.tool.name).joined(separator: ", "))")
            }
            var args = JSONValue.object([:])
            if rest.count == 3 {
                do {
                    args = try JSONValue.parse(rest[2])
                } catch {
                    throw UsageError("the arguments are not JSON: \(error)")
                }
            }
            do {
                print(try await tool.call(args).prettyString)
            } catch let error as ToolError {
                printError("Error: \(error)")
                return ExitCode.failure
            }
            return ExitCode.success
        default:
            throw UsageError("unknown subcommand '\(rest[0])'; use 'list' or 'call'")
        }
    }
}

/// Builds the plugins of a host config and the clock they see (shared by `sanad chat` and `sanad tools`).
enum PluginHost {
    static let clockHelp = """
          --now DATE          the plugins' clock starts at DATE (YYYY-MM-DD = noon UTC that day, or an ISO-8601
                              date-time) and runs on from there (default: SANAD_NOW, else the real time)
        """

    /// `--now` or `SANAD_NOW`: a clock starting at that time and running on; else the real clock.
    static func clock(_ arguments: inout Arguments) throws -> @Sendable () -> Date {
        let flag = try arguments.option("--now")
        let env = ProcessInfo.processInfo.environment["SANAD_NOW"].flatMap { $0.isEmpty ? nil : $0 }
        guard let text = flag ?? env else { return { Date() } }
        guard let start = parseStart(text) else {
            throw UsageError(
                "\(flag != nil ? "'--now'" : "SANAD_NOW") expects YYYY-MM-DD or an ISO-8601 date-time such as "
                    + "2026-11-22T09:00:00+03:00, got '\(text)'")
        }
        let origin = Date()
        return { start.addingTimeInterval(Date().timeIntervalSince(origin)) }
    }

    static func parseStart(_ text: String) -> Date? {
        if let d = parseISO8601(text) { return d }
        return parseISO8601(text + "T12:00:00Z")
    }

    /// The config's plugins, in config order, each with its options, a data folder and the clock.
    static func makePlugins(_ host: HostContext, now: @escaping @Sendable () -> Date) throws -> [any FeaturePlugin] {
        try host.config.plugins.map { choice in
            let context = PluginContext(
                options: choice.options, dataDirectory: try dataDirectory(for: choice.id), configFile: host.config.file,
                now: now)
            return try Wiring.plugins.make(choice.id, context: context)
        }
    }

    /// `SANAD_DATA/<id>`, else `~/.local/share/sanad/plugins/<id>`; created when missing.
    static func dataDirectory(for id: String) throws -> URL {
        let env = ProcessInfo.processInfo.environment
        let base =
            env["SANAD_DATA"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/sanad/plugins")
        let url = base.appendingPathComponent(id)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw SanadError.engine(
                "cannot create the data folder \(url.path) for plugin '\(id)' (\(error.localizedDescription)); set SANAD_DATA to a writable folder"
            )
        }
        return url
    }

    /// Every plugin's tools, then the host's `open_deep_link`.
    static func tools(_ plugins: [any FeaturePlugin]) -> [(plugin: String, tool: any Tool)] {
        plugins.flatMap { p in p.tools.map { (plugin: p.id, tool: $0) } } + [
            (plugin: "host", tool: OpenDeepLinkTool(plugins: plugins, format: AbsherSettings.linkFormat))
        ]
    }
}
