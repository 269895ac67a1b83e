import Foundation
import GGUF
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad bench`: llama-bench's method and output, for every engine.
enum BenchCommand: SanadCommand {
    static let name = "bench"
    static let summary = "Benchmark engines the way llama-bench does (pp512, tg128, …)"
    static let help = """
        Usage: sanad bench [-m MODEL[,MODEL...]] [--backends ID,...|all] [-p N[,N...]] [-n N[,N...]]
                           [-pg PP,TG] [-d N[,N...]] [-r REPS] [-t THREADS] [-b BATCH] [-o md|json|jsonl|csv]
                           [--no-warmup]

        Measures prompt processing (pp) and generation (tg) speed with llama-bench's method, so the numbers are
        directly comparable with llama-bench of llama.cpp: random token ids (BOS first if the model adds one), one
        warm-up (a prompt run and one generated token), the KV cache cleared before every repetition, the prompt
        processed in batches, generation one token at a time, tokenization and sampling not timed. t/s per
        repetition = tokens / seconds, reported as mean ± sample standard deviation. With -d N (llama-bench's
        depth) every test runs again with the KV cache first filled with N random tokens, untimed, before each
        repetition: 'pp512 @ d4096' is a 512-token prompt after 4096 tokens of context.

        Progress goes to stderr, results to stdout (so `-o json > file` works). An engine that cannot run here is
        said on stderr with its reason and left out, unless --backends names it: then it is a row marked
        unavailable (its reason in the JSON and CSV 'error' field).

        Options:
          -m, --model LIST     models (paths or names in the models folder; default: the tier's model)
          --backends LIST      engine ids, or 'all' (default: all)
          -p, --n-prompt LIST  prompt lengths (default: 512)
          -n, --n-gen LIST     generation lengths (default: 128)
          -pg PP,TG            also a combined prompt+generation test (for example -pg 512,128)
          -d, --n-depth LIST   context depths: the KV cache holds this many tokens when each test starts
                               (default: 0)
          -r, --repetitions N  repetitions per test (default: 5)
          -t, --threads N      threads (default: the tier's, else all cores)
          -b, --batch-size N   prompt batch size (default: 512)
          -o, --output FORMAT  md (default), json, jsonl or csv
          --no-warmup          skip the warm-up run
        \(LoadFlags.help)
        \(HostContext.optionsHelp)
        """

    struct TestSpec {
        var prompt: Int
        var gen: Int
        /// Tokens in the KV cache before the test (llama-bench's `n_depth`).
        var depth = 0
        var name: String {
            let test = gen == 0 ? "pp\(prompt)" : prompt == 0 ? "tg\(gen)" : "pp\(prompt)+tg\(gen)"
            return depth > 0 ? "\(test) @ d\(depth)" : test
        }
    }

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let modelList = try arguments.list("-m", "--model")
        let backendList = try arguments.list("--backends")
        let prompts = try arguments.list("-p", "--n-prompt")?.map { try positiveInt($0, flag: "-p", allowZero: true) }
        let gens = try arguments.list("-n", "--n-gen")?.map { try positiveInt($0, flag: "-n", allowZero: true) }
        let pg = try arguments.list("-pg")
        let depths = try arguments.list("-d", "--n-depth")?.map { try positiveInt($0, flag: "-d", allowZero: true) }
        let reps = try arguments.int("-r", "--repetitions", range: 1...1000) ?? 5
        let threadsFlag = try arguments.int("-t", "--threads", range: 1...1024)
        let batch = try arguments.int("-b", "--batch-size", range: 1...65536) ?? 512
        let format = try arguments.option("-o", "--output") ?? "md"
        let noWarmup = arguments.flag("--no-warmup")
        let load = LoadFlags.parse(&arguments)
        let host = try HostContext.load(&arguments)
        try arguments.finish()
        guard ["md", "json", "jsonl", "csv"].contains(format) else {
            throw UsageError("'-o' must be md, json, jsonl or csv, got '\(format)'")
        }
        var tests: [TestSpec] = []
        for p in prompts ?? [512] where p > 0 { tests.append(TestSpec(prompt: p, gen: 0)) }
        for n in gens ?? [128] where n > 0 { tests.append(TestSpec(prompt: 0, gen: n)) }
        if let pg {
            guard pg.count == 2 else { throw UsageError("'-pg' expects PP,TG, got '\(pg.joined(separator: ","))'") }
            tests.append(
                TestSpec(
                    prompt: try positiveInt(pg[0], flag: "-pg", allowZero: false),
                    gen: try positiveInt(pg[1], flag: "-pg", allowZero: false)))
        }
        guard !tests.isEmpty else { throw UsageError("no tests: give -p, -n or -pg with positive sizes") }
        // As llama-bench orders them: every test at the first depth, then at the next.
        tests = (depths ?? [0]).flatMap { depth in tests.map { TestSpec(prompt: $0.prompt, gen: $0.gen, depth: depth) }
        }
        let backendIDs: [String]
        let namedBackends = backendList != nil && backendList != ["all"]
        if let backendList, backendList != ["all"] {
            for id in backendList { try host.validateBackendID(id) }
            backendIDs = backendList
        } else {
            backendIDs = host.registry.inferenceIDs
        }
        let models = try (modelList ?? [host.config.model]).map { try host.resolveModel($0) }
        let threads = threadsFlag ?? host.config.threads ?? CPUAvailability.defaultThreads

        let printer = BenchPrinter(format: format)
        printer.begin()
        for model in models {
            // The file is read for its description only and closed before the engines load it (not counted in
            // their peak memory).
            let info = try BenchModelInfo(file: try GGUFFile(path: model.path), url: model)
            for id in backendIDs {
                let contextNeeded = tests.map { $0.prompt + $0.gen + $0.depth }.max() ?? 512
                let plan: ModelPlan
                do {
                    plan = try host.planModel(
                        ModelRequest(
                            model: model.path, backend: id, threads: threads, contextLength: contextNeeded,
                            batchSize: batch, checkMemory: load.checkMemory, allowLongContext: load.allowLongContext))
                } catch {
                    let reason: String
                    if case SanadError.backendUnavailable(_, let why) = error {
                        reason = why
                    } else {
                        reason = "\(error)"
                    }
                    // As llama-bench: what cannot run is said on stderr; a row only for an engine asked for by name.
                    printError("bench: \(id): unavailable — \(reason)\(namedBackends ? "" : " (left out)")")
                    if namedBackends {
                        printer.unavailable(model: info, backend: id, threads: threads, reason: reason, tests: tests)
                    }
                    continue
                }
                resetPeakResidentMemory()
                printError("bench: \(id): loading \(model.lastPathComponent) (\(threads) threads)")
                let loadStart = monotonicNanoseconds()
                let session: any InferenceSession
                do {
                    session = try await host.opener.open(plan)
                } catch {
                    printError("bench: \(id): failed to load — \(error)")
                    printer.unavailable(model: info, backend: id, threads: threads, reason: "\(error)", tests: tests)
                    continue
                }
                let loadNanoseconds = monotonicNanoseconds() - loadStart
                var rng = BenchRandom(seed: 1)
                let vocabulary = session.model.vocabularySize
                let bos = session.model.addsBOS ? session.model.bosToken : nil
                for (index, test) in tests.enumerated() {
                    let label = "\(id) \(test.name) [\(index + 1)/\(tests.count)]"
                    if !noWarmup {
                        printError("bench: \(label): warm-up")
                        session.reset()
                        if test.prompt > 0 {
                            try session.append(promptTokens(test.prompt, bos: bos, vocabulary: vocabulary, rng: &rng))
                        }
                        if test.gen > 0 { try session.append([bos ?? rng.token(vocabulary)]) }
                    }
                    var samples: [UInt64] = []
                    var firstTokenNanoseconds: [UInt64] = []
                    for rep in 0..<reps {
                        session.reset()
                        if test.depth > 0 {
                            printError("bench: \(label): depth run \(rep + 1)/\(reps)")
                            try session.append(promptTokens(test.depth, bos: bos, vocabulary: vocabulary, rng: &rng))
                        }
                        printError("bench: \(label): repetition \(rep + 1)/\(reps)")
                        // Token ids are drawn before the clock starts: only the engine's work is timed.
                        let prompt =
                            test.prompt > 0
                            ? promptTokens(test.prompt, bos: bos, vocabulary: vocabulary, rng: &rng) : []
                        var genTokens: [Int32] = [bos ?? rng.token(vocabulary)]
                        for _ in 1..<max(test.gen, 1) { genTokens.append(rng.token(vocabulary)) }
                        let start = monotonicNanoseconds()
                        if !prompt.isEmpty { try session.append(prompt) }
                        for i in 0..<test.gen {
                            try session.append([genTokens[i]])
                            if i == 0 { firstTokenNanoseconds.append(monotonicNanoseconds() - start) }
                        }
                        samples.append(monotonicNanoseconds() - start)
                    }
                    let result = BenchResult(
                        model: info, backend: id, threads: threads, batch: batch, test: test, samplesNs: samples,
                        loadNs: loadNanoseconds, firstTokenNs: firstTokenNanoseconds,
                        peakResidentBytes: peakResidentMemory())
                    printer.result(result)
                }
                session.reset()
            }
        }
        printer.end()
        return ExitCode.success
    }

    static func positiveInt(_ text: String, flag: String, allowZero: Bool) throws -> Int {
        guard let v = Int(text), v > 0 || (allowZero && v == 0), v <= 1 << 20 else {
            throw UsageError("'\(flag)' expects \(allowZero ? "non-negative" : "positive") integers, got '\(text)'")
        }
        return v
    }

    static func promptTokens(_ count: Int, bos: Int32?, vocabulary: Int, rng: inout BenchRandom) -> [Int32] {
        var tokens = (0..<count).map { _ in rng.token(vocabulary) }
        if let bos { tokens[0] = bos }
        return tokens
    }
}

/// A reproducible generator for random token ids.
struct BenchRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func token(_ vocabulary: Int) -> Int32 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int32(truncatingIfNeeded: (state >> 33) % UInt64(max(vocabulary, 1)))
    }
}

/// What llama-bench reports about a model.
struct BenchModelInfo {
    var filename: String
    var type: String
    var size: Int
    var parameters: Int

    init(file: GGUFFile, url: URL) throws {
        filename = url.lastPathComponent
        size = file.tensorBytes
        parameters = file.parameterCount
        let summary = try ModelSummary(file: file)
        type =
            "\(summary.architecture) \(summary.parameterText.replacingOccurrences(of: " ", with: "")) "
            + fileTypeName(file.int("general.file_type"))
    }
}

/// llama.cpp's `llama_ftype` names for `general.file_type`.
func fileTypeName(_ value: Int?) -> String {
    let names: [Int: String] = [
        0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K - Medium",
        11: "Q3_K - Small", 12: "Q3_K - Medium", 13: "Q3_K - Large", 14: "Q4_K - Small", 15: "Q4_K - Medium",
        16: "Q5_K - Small", 17: "Q5_K - Medium", 18: "Q6_K", 32: "BF16",
    ]
    guard let value else { return "unknown type" }
    return names[value] ?? "ftype \(value)"
}

struct BenchResult {
    var model: BenchModelInfo
    var backend: String
    var threads: Int
    var batch: Int
    var test: BenchCommand.TestSpec
    var samplesNs: [UInt64]
    var loadNs: UInt64
    var firstTokenNs: [UInt64]
    var peakResidentBytes: Int?

    var tokens: Int { test.prompt + test.gen }
    var samplesTs: [Double] { samplesNs.map { Double(tokens) / (Double($0) / 1e9) } }
    var avgNs: Double { mean(samplesNs.map { Double($0) }) }
    var stddevNs: Double { sampleStandardDeviation(samplesNs.map { Double($0) }) }
    var avgTs: Double { mean(samplesTs) }
    var stddevTs: Double { sampleStandardDeviation(samplesTs) }
}

func mean(_ values: [Double]) -> Double {
    values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
}

/// Sample standard deviation (n − 1), as llama-bench reports; 0 for fewer than two values.
func sampleStandardDeviation(_ values: [Double]) -> Double {
    guard values.count > 1 else { return 0 }
    let m = mean(values)
    let squares = values.reduce(0) { $0 + ($1 - m) * ($1 - m) }
    return (squares / Double(values.count - 1)).squareRoot()
}

/// Prints results as they come, in llama-bench's formats.
final class BenchPrinter {
    let format: String
    var first = true
    let testTime = ISO8601DateFormatter().string(from: Date())

    init(format: String) {
        self.format = format
    }

    static let csvFields = [
        "build_commit", "backends", "sanad_backend", "model_filename", "model_type", "model_size", "model_n_params",
        "n_batch", "n_threads", "n_prompt", "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns", "avg_ts",
        "stddev_ts",
        "load_ms", "ttft_ms", "peak_rss_bytes", "error",
    ]

    func begin() {
        switch format {
        case "md":
            print(
                "| model                          |       size |     params | backend    | threads |            test |                  t/s |"
            )
            print(
                "| ------------------------------ | ---------: | ---------: | ---------- | ------: | --------------: | -------------------: |"
            )
        case "json": print("[")
        case "csv": print(Self.csvFields.joined(separator: ","))
        default: break
        }
    }

    func end() {
        if format == "json" { print(first ? "]" : "\n]") }
    }

    func fields(
        model: BenchModelInfo, backend: String, threads: Int, batch: Int, test: BenchCommand.TestSpec
    ) -> [(String, JSONValue)] {
        [
            ("build_commit", .string("sanad")), ("backends", .string("CPU")), ("sanad_backend", .string(backend)),
            ("model_filename", .string(model.filename)), ("model_type", .string(model.type)),
            ("model_size", .number(Double(model.size))), ("model_n_params", .number(Double(model.parameters))),
            ("n_batch", .number(Double(batch))), ("n_threads", .number(Double(threads))),
            ("n_prompt", .number(Double(test.prompt))), ("n_gen", .number(Double(test.gen))),
            ("n_depth", .number(Double(test.depth))),
            ("test_time", .string(testTime)),
        ]
    }

    func result(_ r: BenchResult) {
        var row = fields(model: r.model, backend: r.backend, threads: r.threads, batch: r.batch, test: r.test)
        row += [
            ("avg_ns", .number(Double(UInt64(r.avgNs)))), ("stddev_ns", .number(Double(UInt64(r.stddevNs)))),
            ("avg_ts", .number(r.avgTs)), ("stddev_ts", .number(r.stddevTs)),
            ("load_ms", .number(Double(r.loadNs) / 1e6)),
            ("ttft_ms", r.firstTokenNs.isEmpty ? .null : .number(mean(r.firstTokenNs.map { Double($0) }) / 1e6)),
            ("peak_rss_bytes", r.peakResidentBytes.map { .number(Double($0)) } ?? .null),
            ("samples_ns", .array(r.samplesNs.map { .number(Double($0)) })),
            ("samples_ts", .array(r.samplesTs.map { .number($0) })),
        ]
        emit(
            row, markdown: String(format: "%.2f ± %.2f", r.avgTs, r.stddevTs), model: r.model, backend: r.backend,
            threads: r.threads, test: r.test)
    }

    func unavailable(
        model: BenchModelInfo, backend: String, threads: Int, reason: String, tests: [BenchCommand.TestSpec]
    ) {
        for test in tests {
            var row = fields(model: model, backend: backend, threads: threads, batch: 0, test: test)
            row.append(("error", .string(reason)))
            emit(row, markdown: "unavailable", model: model, backend: backend, threads: threads, test: test)
        }
    }

    private func emit(
        _ row: [(String, JSONValue)], markdown: String, model: BenchModelInfo, backend: String, threads: Int,
        test: BenchCommand.TestSpec
    ) {
        let object = JSONValue.object(Dictionary(uniqueKeysWithValues: row))
        switch format {
        case "md":
            let size = String(format: "%.2f MiB", Double(model.size) / 1_048_576)
            print(
                "| \(pad(model.type, 30)) | \(pad(size, 10, right: true)) | \(pad(formatParameterCount(model.parameters), 10, right: true)) | \(pad(backend, 10)) | \(pad(String(threads), 7, right: true)) | \(pad(test.name, 15, right: true)) | \(pad(markdown, 20, right: true)) |"
            )
        case "json":
            print((first ? "" : ",\n") + indent(object.prettyString), terminator: "")
        case "jsonl":
            print(object.jsonString)
        default:
            let values = Self.csvFields.map { key -> String in
                guard let v = row.first(where: { $0.0 == key })?.1 else { return "" }
                switch v {
                case .string(let s): return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                case .null: return ""
                default: return v.jsonString
                }
            }
            print(values.joined(separator: ","))
        }
        first = false
        fflush(cStandardOutput)
    }

    private func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
    }

    private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let count = text.count
        guard count < width else { return text }
        let spaces = String(repeating: " ", count: width - count)
        return right ? spaces + text : text + spaces
    }
}

/// Monotonic clock in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Resets the kernel's peak-RSS mark for this process (Linux: writing 5 to /proc/self/clear_refs).
func resetPeakResidentMemory() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

/// Peak resident memory (VmHWM) in bytes, where the system reports it.
func peakResidentMemory() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.split(separator: " ").compactMap { Int($0) }.first
        return digits.map { $0 * 1024 }
    }
    return nil
}
