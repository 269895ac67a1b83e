import Foundation

/// One installed build of llama.cpp b11434's tools, run live by the fidelity tests (see scripts/install-llama):
///
/// - `native`: the tools of the native build (`PREFIX/bin`, `GGML_NATIVE=ON`) and `greedy-ids` built against the same
///   `PREFIX/lib/libllama.so` the llama engine loads. Same library, same machine: the llama engine must equal them.
/// - `reference`: the fixed-flag AVX2 build (`PREFIX/lib/sanad/llama-b11434-avx2`), the arithmetic of the committed
///   fixtures and of the pure-Swift engine on every CPU. Absent on a CPU without AVX2 and on arm64.
///
/// `PREFIX` is `SANAD_LLAMA_PREFIX`, else `/usr/local`; `SANAD_LLAMA_REFERENCE` names another reference folder.
public struct LlamaTools: Sendable, CustomStringConvertible {
    /// What the tests call this build ("native", "reference (AVX2)").
    public let name: String
    /// The folder with llama-simple, llama-tokenize and llama-perplexity.
    public let bin: URL
    /// scripts/golden/greedy-ids built against this build's libllama.
    public let greedyIDs: URL

    public var description: String { "\(name) llama.cpp b11434 (\(bin.path))" }

    /// One tool of this build.
    public func tool(_ name: String) -> URL { bin.appendingPathComponent(name) }

    // MARK: Finding the builds

    /// `SANAD_LLAMA_PREFIX`, else `/usr/local`.
    public static let prefix: URL = {
        if let env = ProcessInfo.processInfo.environment["SANAD_LLAMA_PREFIX"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        return URL(fileURLWithPath: "/usr/local")
    }()

    /// The native build's tools, or nil with `nativeUnavailable` saying why.
    public static let native: LlamaTools? = findNative().tools
    /// Why `native` is nil (how to fix it); nil when it is present.
    public static let nativeUnavailable: String? = findNative().why

    /// The reference (AVX2) build's tools, or nil with `referenceUnavailable` saying why.
    public static let reference: LlamaTools? = findReference().tools
    /// Why `reference` is nil: no such CPU, or not installed (and how to fix it); nil when it is present.
    public static let referenceUnavailable: String? = findReference().why

    private static func findNative() -> (tools: LlamaTools?, why: String?) {
        let stamp = prefix.appendingPathComponent("share/sanad/llama-b11434.stamp")
        let tools = LlamaTools(
            name: "native", bin: prefix.appendingPathComponent("bin"),
            greedyIDs: prefix.appendingPathComponent("lib/sanad/llama-b11434/greedy-ids"))
        guard FileManager.default.fileExists(atPath: stamp.path) else {
            return (
                nil, "llama.cpp b11434 is not installed in \(prefix.path) (no \(stamp.path)); run scripts/install-llama"
            )
        }
        if let missing = tools.missing(["llama-simple", "llama-tokenize", "llama-perplexity"]) {
            return (nil, "\(missing) is missing; run scripts/install-llama")
        }
        return (tools, nil)
    }

    private static func findReference() -> (tools: LlamaTools?, why: String?) {
        if let why = cpuCannotRunReference() { return (nil, why) }
        let dir: URL
        if let env = ProcessInfo.processInfo.environment["SANAD_LLAMA_REFERENCE"], !env.isEmpty {
            dir = URL(fileURLWithPath: env)
        } else {
            dir = prefix.appendingPathComponent("lib/sanad/llama-b11434-avx2")
        }
        let bin = dir.appendingPathComponent("bin")
        let tools = LlamaTools(
            name: "reference (AVX2)", bin: bin, greedyIDs: bin.appendingPathComponent("greedy-ids"))
        if let missing = tools.missing(["llama-simple", "llama-tokenize", "llama-perplexity", "llama-quantize"]) {
            return (nil, "the reference build is not installed (\(missing) is missing); run scripts/install-llama")
        }
        return (tools, nil)
    }

    /// The first of `tools` (and greedy-ids) that is not an executable file, or nil.
    private func missing(_ tools: [String]) -> String? {
        for url in tools.map(tool) + [greedyIDs] where !FileManager.default.isExecutableFile(atPath: url.path) {
            return url.path
        }
        return nil
    }

    /// Why this machine cannot run the reference build (x86-64 with AVX2, FMA, F16C, BMI2), or nil when it can.
    public static func cpuCannotRunReference() -> String? {
        #if arch(x86_64)
            guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
                let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
            else { return "cannot read the CPU's flags from /proc/cpuinfo" }
            let flags = Set(line.split(separator: " ").map(String.init))
            let missing = ["avx2", "fma", "f16c", "bmi2"].filter { !flags.contains($0) }
            return missing.isEmpty
                ? nil : "this CPU lacks \(missing.joined(separator: ", ")), which the reference build (AVX2) needs"
        #else
            return "the reference build is x86-64 AVX2 code and this machine is not x86-64"
        #endif
    }

    // MARK: Running them

    /// What greedy-ids printed for one prompt: llama-simple's greedy loop with token ids and the top logits.
    public struct GreedyRun: Sendable, Equatable {
        /// The prompt's tokens (BOS when the model adds one, special tokens parsed).
        public var promptIDs: [Int32] = []
        /// The generated tokens, without the end-of-generation token.
        public var ids: [Int32] = []
        /// The generated text: the pieces of `ids` joined (bytes; may be cut inside a UTF-8 sequence).
        public var text: Data = Data()
        /// Per generated token, the `topK` largest logits of its step as (token, logit), largest first.
        public var topLogits: [[(id: Int32, logit: Float)]] = []
        /// The end-of-generation token generation stopped at, if it did.
        public var stoppedAtEOG: Int32?

        public static func == (a: GreedyRun, b: GreedyRun) -> Bool {
            a.promptIDs == b.promptIDs && a.ids == b.ids && a.text == b.text && a.stoppedAtEOG == b.stoppedAtEOG
                && a.topLogits.map { $0.map(\.id) } == b.topLogits.map { $0.map(\.id) }
                && a.topLogits.map { $0.map(\.logit.bitPattern) } == b.topLogits.map { $0.map(\.logit.bitPattern) }
        }
    }

    /// `greedy-ids -m MODEL -n maxTokens -k topK -t 1 [extra…] -f PROMPT_FILE` (`extra`: `-ctk TYPE -ctv TYPE`);
    /// remembered for the rest of the test run.
    public func greedy(model: URL, prompt: String, maxTokens: Int = 32, topK: Int = 5, extra: [String] = []) throws
        -> GreedyRun
    {
        let key = "greedy|\(greedyIDs.path)|\(model.path)|\(maxTokens)|\(topK)|\(extra)|\(prompt)"
        return try LlamaToolCache.shared.value(key) {
            let file = try LlamaToolCache.temporaryFile(Data(prompt.utf8))
            defer { try? FileManager.default.removeItem(at: file) }
            let out = try run(
                greedyIDs,
                ["-m", model.path, "-n", "\(maxTokens)", "-k", "\(topK)", "-t", "1"] + extra + ["-f", file.path])
            return try Self.parseGreedy(out, command: greedyIDs.lastPathComponent)
        }
    }

    /// `llama-simple -m MODEL -n maxTokens PROMPT`: its standard output (the prompt's pieces, the text, a newline).
    public func simple(model: URL, prompt: String, maxTokens: Int = 32) throws -> Data {
        let key = "simple|\(bin.path)|\(model.path)|\(maxTokens)|\(prompt)"
        return try LlamaToolCache.shared.value(key) {
            try run(tool("llama-simple"), ["-m", model.path, "-n", "\(maxTokens)", prompt])
        }
    }

    /// `llama-tokenize --ids --no-escape`: plain (no BOS, special-token text not parsed) or as llama-simple tokenizes
    /// (BOS when the model adds one, special tokens parsed).
    public func tokenize(model: URL, text: String, special: Bool) throws -> [Int32] {
        let key = "tokenize|\(bin.path)|\(model.path)|\(special)|\(text)"
        return try LlamaToolCache.shared.value(key) {
            let file = try LlamaToolCache.temporaryFile(Data(text.utf8))
            defer { try? FileManager.default.removeItem(at: file) }
            let flags = special ? [] : ["--no-bos", "--no-parse-special"]
            let out = try run(
                tool("llama-tokenize"),
                ["-m", model.path, "-f", file.path, "--ids", "--no-escape", "--log-disable"] + flags)
            let line = String(decoding: out, as: UTF8.self).split(separator: "\n").last { $0.hasPrefix("[") }
            guard let line,
                let ids = try? JSONDecoder().decode([Int32].self, from: Data(line.utf8))
            else { throw LlamaToolError("llama-tokenize printed no id list: \(String(decoding: out, as: UTF8.self))") }
            return ids
        }
    }

    /// What llama-perplexity printed.
    public struct PerplexityRun: Sendable {
        /// The "[i]X," progress values: the running perplexity after chunk i.
        public var runningPPL: [Double]
        /// The final estimate (4 decimals, as printed).
        public var ppl: Double
        /// The "Final estimate: …" line.
        public var finalLine: String
    }

    /// `llama-perplexity -m MODEL -f TEXT -c context -b batch -t threads [extra…] [--chunks N]` (`extra`: `-ctk TYPE
    /// -ctv TYPE`); remembered for the test run.
    public func perplexity(
        model: URL, textFile: String, context: Int, batch: Int, chunks: Int? = nil, threads: Int = 2,
        extra: [String] = []
    ) throws -> PerplexityRun {
        var arguments =
            [
                "-m", model.path, "-f", textFile, "-c", "\(context)", "-b", "\(batch)", "-t", "\(threads)",
            ] + extra
        if let chunks { arguments += ["--chunks", "\(chunks)"] }
        let key = "perplexity|\(bin.path)|" + arguments.joined(separator: " ")
        return try LlamaToolCache.shared.value(key) {
            let out = String(decoding: try run(tool("llama-perplexity"), arguments, mergeStderr: true), as: UTF8.self)
            return try Self.parsePerplexity(out)
        }
    }

    static func parsePerplexity(_ out: String) throws -> PerplexityRun {
        guard let final = out.split(separator: "\n").first(where: { $0.contains("Final estimate: PPL = ") }) else {
            throw LlamaToolError("llama-perplexity printed no 'Final estimate' line:\n\(out.suffix(2000))")
        }
        let value = final.split(separator: "=")[1].split(separator: " ").first.flatMap { Double($0) }
        guard let value else { throw LlamaToolError("cannot read the perplexity in '\(final)'") }
        // Progress values look like "[1]14.5130,[2]16.0417," on one line.
        var running: [Double] = []
        for line in out.split(separator: "\n") where line.hasPrefix("[1]") {
            for item in line.split(separator: ",") {
                guard let close = item.firstIndex(of: "]"), let v = Double(item[item.index(after: close)...]) else {
                    continue
                }
                running.append(v)
            }
        }
        return PerplexityRun(
            runningPPL: running, ppl: value,
            finalLine: final.range(of: "Final estimate").map { String(final[$0.lowerBound...]) } ?? String(final))
    }

    static func parseGreedy(_ out: Data, command: String) throws -> GreedyRun {
        var result = GreedyRun()
        var sawPrompt = false
        for line in String(decoding: out, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            switch fields.first {
            case "prompt_ids":
                sawPrompt = true
                result.promptIDs = fields.dropFirst().compactMap { Int32($0) }
            case "step":
                guard fields.count >= 4, let id = Int32(fields[2]) else { break }
                result.ids.append(id)
                result.text.append(try hexBytes(fields[3]))
                result.topLogits.append(
                    fields.dropFirst(4).compactMap { item in
                        let parts = item.split(separator: ":")
                        guard parts.count == 2, let token = Int32(parts[0]), let logit = Float(parts[1]) else {
                            return nil
                        }
                        return (token, logit)
                    })
            case "eog":
                result.stoppedAtEOG = fields.count > 1 ? Int32(fields[1]) : nil
            default: break
            }
        }
        guard sawPrompt else {
            throw LlamaToolError(
                "\(command) printed no prompt_ids line: \(String(decoding: out.prefix(500), as: UTF8.self))")
        }
        return result
    }

    private static func hexBytes(_ hex: Substring) throws -> Data {
        if hex == "-" { return Data() }
        var bytes = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) ?? hex.endIndex
            guard let byte = UInt8(hex[index..<next], radix: 16) else {
                throw LlamaToolError("greedy-ids printed a bad hex piece '\(hex)'")
            }
            bytes.append(byte)
            index = next
        }
        return bytes
    }

    /// Runs `executable arguments…` and returns its standard output; a non-zero exit is an error with its stderr.
    private func run(_ executable: URL, _ arguments: [String], mergeStderr: Bool = false) throws -> Data {
        let r = try runChildProcess(executable, arguments, mergeStderr: mergeStderr)
        guard !r.crashed, r.status == 0 else {
            let shown = ([executable.path] + arguments).joined(separator: " ")
            let tail = String(decoding: (mergeStderr ? r.stdout : r.stderr).suffix(2000), as: UTF8.self)
            throw LlamaToolError("\(shown) failed (status \(r.status)):\n\(tail)")
        }
        return r.stdout
    }
}

/// A llama.cpp tool could not be run or printed something unexpected.
public struct LlamaToolError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Tool outputs already computed in this test run, by command: several suites compare with the same runs. One tool
/// runs at a time (each with one or two threads): the tests around them already use the few cores there are.
final class LlamaToolCache: @unchecked Sendable {  // @unchecked: its cache behind its lock
    static let shared = LlamaToolCache()
    private let lock = NSLock()
    private let runLock = NSLock()
    private var values: [String: Any] = [:]

    func value<T>(_ key: String, _ compute: () throws -> T) throws -> T {
        lock.lock()
        if let value = values[key] as? T {
            lock.unlock()
            return value
        }
        lock.unlock()
        runLock.lock()
        defer { runLock.unlock() }
        lock.lock()
        if let value = values[key] as? T {
            lock.unlock()
            return value
        }
        lock.unlock()
        let value = try compute()
        lock.lock()
        values[key] = value
        lock.unlock()
        return value
    }

    static func temporaryFile(_ data: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-llama-\(UUID().uuidString).txt")
        try data.write(to: url)
        return url
    }
}
