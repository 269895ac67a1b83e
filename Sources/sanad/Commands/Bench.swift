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
                           [-pg PP,TG] [-d N[,N...]] [-r REPS] [-t N[,N...]] [-b N[,N...]] [-ub N[,N...]]
                           [-o md|json|jsonl|csv|sql|svg] [--no-warmup]

        Measures prompt processing (pp) and generation (tg) speed with llama-bench's method, so the numbers are
        directly comparable with llama-bench of llama.cpp: random token ids (BOS first if the model adds one), one
        warm-up (a prompt run and one generated token), the KV cache cleared before every repetition, the prompt
        processed in batches, generation one token at a time, tokenization and sampling not timed. t/s per
        repetition = tokens / seconds, reported as mean ± sample standard deviation. With -d N (llama-bench's
        depth) every test runs again with the KV cache first filled with N random tokens, untimed, before each
        repetition: 'pp512 @ d4096' is a 512-token prompt after 4096 tokens of context.

        Every value list (-m, -p, -n, -d, -t, -b, -ub) runs each combination, in llama-bench's order. CSV, JSON and
        SQL carry all of llama-bench's fields in its order (those about GPUs, CPU masks and polling with the values
        a plain CPU run of llama-bench writes), then Sanad's: sanad_backend, load_ms, ttft_ms, peak_rss_bytes, error.

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
          -t, --threads LIST   threads (default: the tier's, else all cores)
          -b, --batch-size LIST
                               logical batch sizes (default: 2048)
          -ub, --ubatch-size LIST
                               physical batch sizes (default: 512); Sanad's engines run min(n_batch, n_ubatch)
                               tokens per forward pass, as llama.cpp computes
          -o, --output FORMAT  md (default, with llama-bench's 'build:' footer), json, jsonl, csv, sql (a
                               'sanad_bench' table: llama-bench's columns and types, then Sanad's) or svg (a bar
                               chart of the run's t/s, written when it ends)
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
        let prompts = try positiveInts(&arguments, "-p", "--n-prompt", allowZero: true)
        let gens = try positiveInts(&arguments, "-n", "--n-gen", allowZero: true)
        let pg = try arguments.list("-pg")
        let depths = try positiveInts(&arguments, "-d", "--n-depth", allowZero: true)
        let reps = try arguments.int("-r", "--repetitions", range: 1...1000) ?? 5
        let threadList = try positiveInts(&arguments, "-t", "--threads", allowZero: false)
        let batches = try positiveInts(&arguments, "-b", "--batch-size", allowZero: false) ?? [2048]
        let ubatches = try positiveInts(&arguments, "-ub", "--ubatch-size", allowZero: false) ?? [512]
        let format = try arguments.option("-o", "--output") ?? "md"
        let noWarmup = arguments.flag("--no-warmup")
        let load = try LoadFlags.parse(&arguments)
        let host = try HostContext.load(&arguments)
        try arguments.finish()
        guard BenchPrinter.formats.contains(format) else {
            throw UsageError("'-o' must be \(BenchPrinter.formats.joined(separator: ", ")), got '\(format)'")
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
        let models = try (modelList ?? [host.config.model]).map { (name: $0, url: try host.resolveModel($0)) }
        let threads = threadList ?? [host.config.threads ?? CPUAvailability.defaultThreads]

        // As llama-bench: n_batch and n_ubatch get a markdown column when they are not its defaults.
        let cacheTypeK = load.cacheTypeK ?? host.config.cacheTypeK
        let cacheTypeV = load.cacheTypeV ?? host.config.cacheTypeV
        let extraColumns = [
            ("n_batch", batches != [2048]), ("n_ubatch", ubatches != [512]), ("type_k", cacheTypeK != .f16),
            ("type_v", cacheTypeV != .f16),
        ].filter(\.1).map(\.0)
        let printer = BenchPrinter(format: format, extraColumns: extraColumns, build: buildDescription())
        printer.begin()
        let cpu = TuneCommand.cpuName()
        for model in models {
            // The file is read for its description only and closed before the engines load it (not counted in
            // their peak memory).
            let info = try BenchModelInfo(file: try GGUFFile(path: model.url.path), name: model.name)
            for id in backendIDs {
                // llama-bench's instance order: batch, micro-batch, threads; the tests (and depths) inside.
                for batch in batches {
                    for ubatch in ubatches {
                        for t in threads {
                            let run = BenchRun(
                                model: info, backend: id, threads: t, batch: batch, ubatch: ubatch, cpu: cpu,
                                cacheTypeK: cacheTypeK, cacheTypeV: cacheTypeV)
                            let ran = try await runTests(
                                tests, run: run, modelURL: model.url, host: host, load: load, reps: reps,
                                warmup: !noWarmup, named: namedBackends, printer: printer)
                            if !ran { break }
                        }
                    }
                }
            }
        }
        printer.end()
        return ExitCode.success
    }

    /// Loads the model on one engine with `run`'s threads and batch sizes and runs every test; false when the
    /// engine cannot run here (said on stderr, a row only for an engine asked for by name).
    static func runTests(
        _ tests: [TestSpec], run: BenchRun, modelURL: URL, host: HostContext, load: LoadFlags, reps: Int,
        warmup: Bool, named: Bool, printer: BenchPrinter
    ) async throws -> Bool {
        let id = run.backend
        let contextNeeded = tests.map { $0.prompt + $0.gen + $0.depth }.max() ?? 512
        let plan: ModelPlan
        do {
            // Sanad's engines take one batch size: the tokens of one forward pass, llama-bench's min(n_batch,
            // n_ubatch).
            plan = try host.planModel(
                ModelRequest(
                    model: modelURL.path, backend: id, threads: run.threads, contextLength: contextNeeded,
                    batchSize: min(run.batch, run.ubatch), checkMemory: load.checkMemory,
                    allowLongContext: load.allowLongContext,
                    cacheTypeK: load.cacheTypeK, cacheTypeV: load.cacheTypeV))
        } catch {
            let reason: String
            if case SanadError.backendUnavailable(_, let why) = error {
                reason = why
            } else {
                reason = "\(error)"
            }
            // As llama-bench: what cannot run is said on stderr; a row only for an engine asked for by name.
            printError("bench: \(id): unavailable — \(reason)\(named ? "" : " (left out)")")
            if named { printer.unavailable(run, reason: reason, tests: tests) }
            return false
        }
        resetPeakResidentMemory()
        printError("bench: \(id): loading \(modelURL.lastPathComponent) (\(run.threads) threads)")
        let loadStart = monotonicNanoseconds()
        let session: any InferenceSession
        do {
            session = try await host.opener.open(plan)
        } catch {
            printError("bench: \(id): failed to load — \(error)")
            printer.unavailable(run, reason: "\(error)", tests: tests)
            return false
        }
        let loadNanoseconds = monotonicNanoseconds() - loadStart
        var rng = BenchRandom(seed: 1)
        let vocabulary = session.model.vocabularySize
        let bos = session.model.addsBOS ? session.model.bosToken : nil
        for (index, test) in tests.enumerated() {
            let label = "\(id) \(test.name) [\(index + 1)/\(tests.count)]"
            if warmup {
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
                    test.prompt > 0 ? promptTokens(test.prompt, bos: bos, vocabulary: vocabulary, rng: &rng) : []
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
            printer.result(
                BenchResult(
                    run: run, test: test, samplesNs: samples, loadNs: loadNanoseconds,
                    firstTokenNs: firstTokenNanoseconds, peakResidentBytes: peakResidentMemory()))
        }
        session.reset()
        return true
    }

    /// A list flag of sizes (`-t 1,2,4`).
    static func positiveInts(_ arguments: inout Arguments, _ names: String..., allowZero: Bool) throws -> [Int]? {
        var values: [Int]?
        for name in names {
            if let list = try arguments.list(name) {
                values = try list.map { try positiveInt($0, flag: name, allowZero: allowZero) }
            }
        }
        return values
    }

    /// What llama-bench's `build_commit` and `build_number` fields (and its `build:` footer) say of Sanad: its
    /// version (Sanad has no build counter).
    static func buildDescription() -> (commit: String, number: Int) {
        (commit: "sanad \(sanadVersion)", number: 0)
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

    /// `name`: the model as the command line or the config named it (llama-bench writes its `-m` argument).
    init(file: GGUFFile, name: String) throws {
        filename = name
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

/// One engine's setting of a run: the model, the engine, threads and batch sizes, on which CPU.
struct BenchRun {
    var model: BenchModelInfo
    var backend: String
    var threads: Int
    var batch: Int
    var ubatch: Int
    var cpu: String
    /// The KV cache's key and value types (`-ctk`/`-ctv`, else the tier's).
    var cacheTypeK: GGMLType = .f16
    var cacheTypeV: GGMLType = .f16
}

struct BenchResult {
    var run: BenchRun
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
