import CreditScoringCLI
import FormsCLI
import Foundation
import OCRIngestCLI
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost
import ServicesCLI

/// Every subcommand, in the order `sanad --help` lists them. Add a command here and in its own file.
nonisolated(unsafe) let allCommands: [any SanadCommand.Type] = [
    BackendsCommand.self,
    ConfigCommand.self,
    ModelsCommand.self,
    TokenizeCommand.self,
    EmbedCommand.self,
    IndexCommand.self,
    GenerateCommand.self,
    ReceiptCommand.self,
    KeysCommand.self,
    PerplexityCommand.self,
    CompareCommand.self,
    ChatCommand.self,
    RunCommand.self,
    ToolsCommand.self,
    IngestCommand.self,
    FormCommand.self,
    CreditCommand.self,
    ServicesCommand.self,
    BenchCommand.self,
    TuneCommand.self,
    ServeCommand.self,
]

/// The version `--version` and `sanad bench`'s build fields name.
let sanadVersion = "0.1.0"

let topLevelHelp = """
    Sanad: an on-device LLM inference host.

    Usage: sanad <command> [options]

    Commands:
    \(allCommands.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

    Global environment:
      SANAD_CONFIG    host config file (else the tier chosen from this machine's memory)
      SANAD_MODELS    models folder (default: models/ in the Sanad checkout)
      SANAD_HOME      the Sanad checkout (configs/, models/); found from the executable's location otherwise

    Exit codes: 0 success, 1 failure, 2 mismatch found (compare), 64 usage error, 130 interrupted.
    See 'sanad <command> --help' for a command's options.
    """

func runMain() async -> Int32 {
    var argv = Array(CommandLine.arguments.dropFirst())
    guard let name = argv.first, name != "--help", name != "-h", name != "help" else {
        if argv.count >= 2, argv[0] == "help",
            let c = allCommands.first(where: { $0.name == argv[1] || $0.aliases.contains(argv[1]) })
        {
            print(c.help)
            return ExitCode.success
        }
        print(topLevelHelp)
        return argv.isEmpty ? ExitCode.usage : ExitCode.success
    }
    if name == "--version" {
        // As llama-cli's --version names its build: Sanad's version and each engine's build as found here.
        print("sanad \(sanadVersion)")
        for backend in Wiring.inferenceBackends() {
            switch backend.availability {
            case .available(let detail): print("  \(backend.id): \(detail)")
            case .unavailable(let reason): print("  \(backend.id): unavailable (\(reason))")
            }
        }
        return ExitCode.success
    }
    guard let command = allCommands.first(where: { $0.name == name || $0.aliases.contains(name) }) else {
        printError("Error: unknown command '\(name)'")
        printError("Usage: sanad <command> [options]")
        printError("See 'sanad --help' for the commands.")
        return ExitCode.usage
    }
    argv.removeFirst()
    var arguments = Arguments(argv, command: name)
    if arguments.wantsHelp {
        print(command.help)
        return ExitCode.success
    }
    /// A usage error: the message, the command's usage line and where to read more; exit 64.
    func usageFailure(_ message: String) -> Int32 {
        printError("Error: \(message)")
        if let usage = command.help.split(separator: "\n").first(where: { $0.hasPrefix("Usage:") }) {
            printError(String(usage))
        }
        printError("See 'sanad \(name) --help'.")
        return ExitCode.usage
    }
    do {
        return try await command.run(&arguments)
    } catch let error as UsageError {
        return usageFailure(error.message)
    } catch let error as HostUsageError {
        return usageFailure(error.message)
    } catch {
        printError("Error: \(error)")
        return ExitCode.failure
    }
}

setvbuf(cStandardOutput, nil, _IOLBF, 0)
// The default thread count's CPU sample runs from here, overlapping the command's own start-up work.
CPUAvailability.startLaunchSample()
CommandLineHost.install(Wiring.host)
exit(await runMain())
