import Foundation
import SanadCore

/// Perplexity of `session`'s model over the text of `path` as `llama-perplexity -f PATH -c CONTEXT` computes it (see
/// Sources/sanad/Commands/Perplexity.swift): the text minus one trailing newline, tokenized with BOS when the model
/// adds one; chunks of `context` tokens from an empty cache, each starting with BOS; the second half of each chunk
/// scored. `maxChunks` is the tool's `--chunks`. Returns the perplexity and the number of chunks.
public func llamaPerplexity(
    _ session: any InferenceSession, textFile path: String, context: Int, maxChunks: Int? = nil
) throws -> (ppl: Double, chunks: Int) {
    var text = try String(contentsOfFile: path, encoding: .utf8)
    if text.hasSuffix("\n") { text.removeLast() }
    let tokens = try session.tokenize(text, addSpecial: true, parseSpecial: false)
    let chunks = min(tokens.count / context, maxChunks ?? Int.max)
    let first = context / 2
    var nll: Double = 0
    var count = 0
    for chunk in 0..<chunks {
        var input = Array(tokens[(chunk * context)..<((chunk + 1) * context)])
        if session.model.addsBOS, let bos = session.model.bosToken { input[0] = bos }
        // The last position's logits too, unscored, as llama-perplexity (Sources/sanad/Commands/Perplexity.swift).
        let rows = try session.evaluateLogits(input, rows: first..<context)
        for (i, logits) in rows.dropLast().enumerated() {
            let target = Int(tokens[chunk * context + first + i + 1])
            let maxLogit = logits.max() ?? 0
            let sum = logits.reduce(0.0) { $0 + Double(expf($1 - maxLogit)) }
            nll -= Double(logits[target] - maxLogit) - log(sum)
        }
        count += context - first - 1
    }
    return (exp(nll / Double(max(1, count))), chunks)
}
