import Foundation
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad perplexity`: llama-perplexity's measurement (b11434, tools/perplexity/perplexity.cpp) on any engine.
enum PerplexityCommand: SanadCommand {
    static let name = "perplexity"
    static let summary = "Measure a model's perplexity on a text the way llama-perplexity does"
    static let help = """
        Usage: sanad perplexity [-m MODEL] -f FILE [-c CTX] [-b BATCH] [-t THREADS] [--backend ID]

        llama-perplexity's method: the whole text is tokenized (with BOS when the model adds one) and cut into chunks
        of CTX tokens; each chunk is evaluated from an empty cache (its first token replaced by BOS when the model
        adds BOS), and only the second half of each chunk is scored, by the log-softmax of the logits. The running
        value is printed per chunk on standard error as [chunk]value, after the time of the first pass and an
        estimate of the rest (ETA); the result ends standard output as 'PPL = value +/- error'.

        Options:
          -m, --model MODEL   a .gguf path, or a file name in the models folder (default: the tier's model)
          -f, --file FILE     the text ('-' = standard input)
          -c, --ctx CTX       chunk length (default 512)
          -b, --batch N       tokens per forward pass (default: CTX)
          -t, --threads N     compute threads (default: the tier's)
          --backend ID        engine to use (default: the first available of the tier's list)
        \(LoadFlags.help)
        \(HostContext.optionsHelp)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let modelName = try arguments.option("-m", "--model")
        guard let file = try arguments.option("-f", "--file") else { throw UsageError("missing -f FILE") }
        let context = try arguments.int("-c", "--ctx", range: 8...1 << 20) ?? 512
        let batch = try arguments.int("-b", "--batch", range: 1...1 << 20)
        let threads = try arguments.int("-t", "--threads", range: 1...1024)
        let backendID = try arguments.option("--backend")
        let load = try LoadFlags.parse(&arguments)
        let host = try HostContext.load(&arguments)
        try arguments.finish()
        try host.validateBackendID(backendID)

        // As llama.cpp's -f: one trailing newline is dropped.
        var text = try readText(file)
        if text.hasSuffix("\n") { text.removeLast() }
        let (session, plan) = try await host.openModel(
            ModelRequest(
                model: modelName, backend: backendID, threads: threads, contextLength: context,
                batchSize: min(batch ?? context, context), checkMemory: load.checkMemory,
                allowLongContext: load.allowLongContext,
                cacheTypeK: load.cacheTypeK, cacheTypeV: load.cacheTypeV))
        let backend = plan.backend
        let options = plan.options

        let started = Date()
        var tokens = try session.tokenize(text, addSpecial: true, parseSpecial: false)
        guard tokens.count >= 2 * context else {
            throw SanadError.engine(
                "'\(file)' tokenizes to \(tokens.count) tokens; perplexity with a context of \(context) needs at least "
                    + "\(2 * context)")
        }
        let chunks = tokens.count / context
        let first = context / 2
        let bos = session.model.addsBOS ? session.model.bosToken : nil
        printError(
            "perplexity: \(tokens.count) tokens, \(chunks) chunks of \(context), batch \(options.batchSize), "
                + "backend \(backend.id)")
        var nll: Double = 0
        var nll2: Double = 0
        var count = 0
        let passesStarted = Date()
        for chunk in 0..<chunks {
            let start = chunk * context
            var input = Array(tokens[start..<(start + context)])
            if let bos { input[0] = bos }
            // Logits at positions first ..< context-1 predict the tokens first+1 ..< context. As llama-perplexity,
            // the last position's logits are computed too (and not scored): some kernels round by the batch's
            // rows (Q4_K's groups of four), so asking for one row fewer changes the others' last bits.
            let rows = try session.evaluateLogits(input, rows: first..<context)
            for (i, logits) in rows.dropLast().enumerated() {
                let v = -logSoftmax(logits, token: Int(tokens[start + first + i + 1]))
                nll += v
                nll2 += v * v
            }
            count += context - first - 1
            if chunk == 0 {
                // As llama-perplexity: the time of one pass and the estimate for the rest, before the first value.
                let pass = Date().timeIntervalSince(passesStarted)
                printError(
                    String(format: "perplexity: %.2f seconds per pass - ETA ", pass)
                        + ProgressLine.duration(pass * Double(chunks - 1)))
            }
            FileHandle.standardError.write(Data(String(format: "[%d]%.4f,", chunk + 1, exp(nll / Double(count))).utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        tokens.removeAll()
        let mean = nll / Double(count)
        let ppl = exp(mean)
        let variance = nll2 / Double(count) - mean * mean
        let seconds = Date().timeIntervalSince(started)
        printError(String(format: "perplexity: %.2f s (%.2f s per chunk)", seconds, seconds / Double(chunks)))
        if variance > 0 {
            print(String(format: "PPL = %.4f +/- %.5f", ppl, (variance / Double(count - 1)).squareRoot() * ppl))
        } else {
            print(String(format: "PPL = %.4f", ppl))
        }
        return ExitCode.success
    }

    /// log p(token) from raw logits as llama-perplexity computes it: float max, double sum of float exponentials.
    static func logSoftmax(_ logits: [Float], token: Int) -> Double {
        var maxLogit = logits[0]
        for v in logits { maxLogit = max(maxLogit, v) }
        var sum: Double = 0
        for v in logits { sum += Double(expf(v - maxLogit)) }
        return Double(logits[token] - maxLogit) - log(sum)
    }
}
