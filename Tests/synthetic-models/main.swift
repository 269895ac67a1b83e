import Foundation
import SanadTestSupport

// Writes the synthetic models of the fidelity tests (SanadTestSupport's SyntheticModel, the same generator and seeds)
// at a benchmark's size into a folder, quantized by the reference build's llama-quantize: the files bench/compare.sh
// measures per family. Run through bench/synthetic-models, which builds this program (release) first.

let usage = """
    Usage: bench/synthetic-models [--families LIST] [--size SIZE] DIR [TYPE...]

    Writes the synthetic model of each family (random weights from the family's test seed, SmolLM2's vocabulary)
    to DIR as FAMILY-NM-seedS-TYPE.gguf (N million parameters, seed S), quantized with the reference llama.cpp build's llama-quantize into each
    TYPE (default: Q4_K_M). A file already in DIR is kept. The F32 file each type is made from is removed unless
    F32 is one of the types.

    Arguments:
      DIR              the folder to write to (made if missing)
      TYPE             \(SyntheticModel.engineTypes.joined(separator: ", "))

    Options:
      --families LIST  comma-separated, of \(SyntheticModel.families.map(\.name).joined(separator: ", ")) (default: all)
      --size SIZE      100m (default: 24 layers, width 512, about 107M parameters), medium or small (the tests' size)
      -h, --help       this help

    Needs models/SmolLM2-135M-Instruct.Q4_1.gguf (the vocabulary; SANAD_MODELS names another models folder) and the
    reference build (scripts/install-llama; SANAD_LLAMA_REFERENCE names another).

    Example:
      bench/synthetic-models /tmp/sanad-bench-models Q4_K_M Q8_0
    """

/// Prints `message` as a usage error and exits 64.
func usageError(_ message: String) -> Never {
    FileHandle.standardError.write(
        Data("Error: \(message)\nSee 'bench/synthetic-models --help' for usage.\n".utf8))
    exit(64)
}

/// The size a `--size` value names.
func size(named name: String) -> SyntheticModel.Size? {
    switch name.lowercased() {
    case "100m": .hundredMillion
    case "medium": .medium
    case "small": .small
    default: nil
    }
}

/// The options and arguments of the command line.
struct Request {
    var directory: URL
    var types = ["Q4_K_M"]
    var families = SyntheticModel.families
    var size = SyntheticModel.Size.hundredMillion
}

/// Reads the command line, exiting with a usage error (64) on anything it does not take.
func parse(_ arguments: [String]) -> Request {
    var positional: [String] = []
    var families: [SyntheticModel.Family]?
    var chosenSize: SyntheticModel.Size?
    var i = 0
    func value(_ flag: String) -> String {
        i += 1
        guard i < arguments.count else { usageError("\(flag) needs a value") }
        return arguments[i]
    }
    while i < arguments.count {
        let a = arguments[i]
        switch a {
        case "-h", "--help":
            print(usage)
            exit(0)
        case "--families":
            let names = value(a).split(separator: ",").map(String.init)
            families = names.map { name in
                guard let f = SyntheticModel.families.first(where: { $0.name == name }) else {
                    usageError(
                        "unknown family '\(name)' in --families; the families are "
                            + SyntheticModel.families.map(\.name).joined(separator: ", "))
                }
                return f
            }
        case "--size":
            let name = value(a)
            guard let s = size(named: name) else { usageError("unknown --size '\(name)'; use 100m, medium or small") }
            chosenSize = s
        default:
            if a.hasPrefix("-") && a.count > 1 { usageError("unknown option '\(a)'") }
            positional.append(a)
        }
        i += 1
    }
    guard let dir = positional.first else { usageError("missing DIR, the folder to write the models to") }
    var request = Request(directory: URL(fileURLWithPath: dir))
    if positional.count > 1 { request.types = Array(positional.dropFirst()) }
    for t in request.types where !SyntheticModel.engineTypes.contains(t) {
        usageError("unknown type '\(t)'; the types are \(SyntheticModel.engineTypes.joined(separator: ", "))")
    }
    if let families { request.families = families }
    if let chosenSize { request.size = chosenSize }
    return request
}

/// Makes every (family, type) file of `request` in its folder and prints each path; returns the exit status.
func run(_ request: Request) -> Int32 {
    if let why = SyntheticModel.unavailable {
        FileHandle.standardError.write(Data("Error: cannot make synthetic models: \(why)\n".utf8))
        return 1
    }
    let fm = FileManager.default
    do {
        try fm.createDirectory(at: request.directory, withIntermediateDirectories: true)
        for family in request.families {
            let spec = family.spec(request.size)
            let millions = Int((Double(spec.parameterCount) / 1e6).rounded())
            // F32 last: the quantized types are made from it.
            for type in request.types.filter({ $0 != "F32" }) + request.types.filter({ $0 == "F32" }) {
                let name = "\(family.name)-\(millions)M-seed\(family.seed)-\(type).gguf"
                let target = request.directory.appendingPathComponent(name)
                if fm.fileExists(atPath: target.path) {
                    print("\(target.path) (kept)")
                    continue
                }
                let start = Date()
                let made = try SyntheticModel.file(spec, seed: family.seed, type: type, in: request.directory)
                try fm.moveItem(at: made, to: target)
                print(
                    "\(target.path) (\(millions)M parameters, "
                        + String(format: "%.0f s)", Date().timeIntervalSince(start)))
            }
            try? fm.removeItem(
                at: SyntheticModel.cachedURL(spec, seed: family.seed, type: "F32", in: request.directory))
        }
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        return 1
    }
    return 0
}

exit(run(parse(Array(CommandLine.arguments.dropFirst()))))
