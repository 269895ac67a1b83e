import Foundation
import GGUF
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad models`: every GGUF in the models folder.
enum ModelsCommand: SanadCommand {
    static let name = "models"
    static let summary = "List the GGUF models in the models folder with their memory estimates"
    static let help = """
        Usage: sanad models [--models DIR] [--tier NAME | --config FILE] [-c CTX] [--json] [FILE...]

        Reads every .gguf file in the models folder (or the files given) without loading weights and shows its
        architecture, parameter count, quantization mix, size, training context length, chat template family, which
        engines can run it (the pure-Swift and BLAS engines judge the architecture, tensor types and tokenizer from
        the file; llama.cpp tells when it loads; an unavailable engine says why) and the
        memory estimate (weights + KV cache + scratch) at the tier's context length. A damaged file is reported with
        what is wrong; the listing goes on.

        Options:
        \(HostContext.optionsHelp)
          -c, --ctx N         context length for the estimate (default: the tier's)
          --json              machine-readable output
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let json = arguments.flag("--json")
        let ctx = try arguments.int("-c", "--ctx", range: 1...1 << 24)
        let host = try HostContext.load(&arguments)
        var files = try arguments.positionals().map { URL(fileURLWithPath: $0) }
        if files.isEmpty {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: host.modelsDirectory.path)
            } catch {
                throw SanadError.engine(
                    "the models folder \(host.modelsDirectory.path) cannot be listed (it does not exist or is not a "
                        + "readable folder); pass --models DIR, set SANAD_MODELS, or run scripts/setup")
            }
            files = names.filter { $0.hasSuffix(".gguf") }.sorted().map {
                host.modelsDirectory.appendingPathComponent($0)
            }
            if files.isEmpty {
                printError("no .gguf files in \(host.modelsDirectory.path); run scripts/setup to fetch the models")
            }
        }
        let context = ctx ?? host.config.contextLength
        var rows: [JSONValue] = []
        var failures = 0
        for url in files {
            do {
                // Well-formed (GGUFFile), then plausible and consistent (the check every engine runs first).
                let file = try GGUFFile(path: url.path)
                try ModelValidation.validate(file)
                let s = try ModelSummary(file: file)
                let e = MemoryEstimate(model: s, contextLength: context, batchSize: host.config.batchSize)
                let fits = e.totalBytes <= saturatingProduct(host.config.memoryBudgetMiB, 1_048_576)
                let engines = host.registry.inferenceIDs.compactMap { id -> (id: String, support: ModelSupport)? in
                    guard let engine = try? host.registry.backend(id) else { return nil }
                    return (id, engine.support(for: file, options: host.engineOptions(id)))
                }
                if json {
                    rows.append(
                        .object([
                            "file": .string(s.fileName), "architecture": .string(s.architecture),
                            "name": s.name.map(JSONValue.string) ?? .null,
                            "parameters": .number(Double(s.parameterCount)),
                            "sizeBytes": .number(Double(s.fileSize)),
                            "quantization": .object(
                                Dictionary(
                                    uniqueKeysWithValues: s.quantizationMix.map {
                                        ($0.type, JSONValue.number(Double($0.count)))
                                    })),
                            "contextLength": s.trainingContextLength.map { .number(Double($0)) } ?? .null,
                            "chatTemplate": .string(s.chatTemplateText),
                            "engines": .object(
                                Dictionary(uniqueKeysWithValues: engines.map { ($0.id, Self.supportJSON($0.support)) })),
                            "estimate": .object([
                                "contextLength": .number(Double(context)),
                                "weightBytes": .number(Double(e.weightBytes)),
                                "kvCacheBytes": .number(Double(e.kvCacheBytes)),
                                "scratchBytes": .number(Double(e.scratchBytes)),
                                "totalBytes": .number(Double(e.totalBytes)),
                                "fitsTier": .bool(fits), "tier": .string(host.config.tier),
                            ]),
                        ]))
                } else {
                    print(s.fileName)
                    print("  architecture:  \(s.architecture)\(s.name.map { " (\($0))" } ?? "")")
                    print("  parameters:    \(s.parameterText)")
                    print("  size:          \(formatMiB(s.fileSize))")
                    print("  quantization:  \(s.quantizationText)")
                    print("  context:       \(s.trainingContextLength.map(String.init) ?? "unknown") (training)")
                    print("  chat template: \(s.chatTemplateText)")
                    for (i, engine) in engines.enumerated() {
                        let label = i == 0 ? "engines:" : ""
                        print(
                            "  \(label.padding(toLength: 15, withPad: " ", startingAt: 0))\(engine.id): "
                                + Self.supportText(engine.support))
                    }
                    print(
                        "  estimate:      \(e.text) — \(fits ? "fits" : "exceeds") tier '\(host.config.tier)' budget \(host.config.memoryBudgetMiB) MiB"
                    )
                }
            } catch {
                failures += 1
                if json {
                    rows.append(.object(["file": .string(url.lastPathComponent), "error": .string("\(error)")]))
                } else {
                    print(url.lastPathComponent)
                    print("  error:         \(error)")
                }
            }
        }
        if json { print(JSONValue.array(rows).prettyString) }
        return failures == 0 ? ExitCode.success : ExitCode.failure
    }

    /// `runs (…)`, `cannot: …` or `at load (…)`.
    static func supportText(_ support: ModelSupport) -> String {
        switch support {
        case .runs(let detail): return "runs (\(detail))"
        case .cannot(let reason): return "cannot: \(reason)"
        case .atLoad(let detail): return "unknown until it loads (\(detail))"
        }
    }

    static func supportJSON(_ support: ModelSupport) -> JSONValue {
        switch support {
        case .runs(let detail): return .object(["runs": .bool(true), "detail": .string(detail)])
        case .cannot(let reason): return .object(["runs": .bool(false), "detail": .string(reason)])
        case .atLoad(let detail): return .object(["runs": .null, "detail": .string(detail)])
        }
    }
}
