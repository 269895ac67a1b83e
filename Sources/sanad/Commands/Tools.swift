import Foundation
import SanadChat
import SanadCommandLine
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
          sanad tools call open_deep_link '{"url": "SCHEME://service/dependents?alert=dep-1"}'
                              (SCHEME: the product's link scheme, as list_alerts' links show it)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let json = arguments.flag("--json")
        let clock = try PluginHost.clock(&arguments)
        let host = try HostContext.load(&arguments)
        let rest = try arguments.positionals(min: 1, max: 3, names: "a subcommand (list or call)")
        let plugins = try PluginHost.makePlugins(host, now: clock)
        let tools = host.tools(plugins)
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
