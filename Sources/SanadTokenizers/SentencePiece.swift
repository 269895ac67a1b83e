/// SentencePiece-style tokenization (`tokenizer.ggml.model` = `llama`: LLaMA 1/2, Gemma 3, …) as llama.cpp's
/// `llm_tokenizer_spm_session`: start from single UTF-8 characters and repeatedly merge the adjacent pair whose
/// concatenation is a token with the highest score (the leftmost among equals); a piece left that is no token is
/// written as byte tokens `<0xNN>` (byte fallback). Spaces were already escaped to ▁ (U+2581) by the caller.
struct SentencePiece: Sendable {
    /// Token texts → ids (every token, control and byte tokens included, as llama.cpp's `text_to_token`).
    let vocabulary: ByteStringTable
    let scores: [Float]
    /// The token for each byte: `<0xNN>`, else the byte itself as a token, else -1.
    let byteTokens: [Int32]

    init(vocabulary: ByteStringTable, scores: [Float]) {
        self.vocabulary = vocabulary
        self.scores = scores
        var byteTokens = [Int32](repeating: -1, count: 256)
        let hex = Array("0123456789ABCDEF".utf8)
        for b in 0..<256 {
            let name: [UInt8] = [0x3C, 0x30, 0x78, hex[b >> 4], hex[b & 15], 0x3E]  // <0xNN>
            byteTokens[b] = vocabulary.value(name) ?? vocabulary.value([UInt8(b)]) ?? -1
        }
        self.byteTokens = byteTokens
    }

    private struct Bigram: MergeCandidate {
        var score: Float
        var left: Int32
        var right: Int32
        var size: Int32
        @inline(__always)
        static func precedes(_ a: Bigram, _ b: Bigram) -> Bool {
            a.score > b.score || (a.score == b.score && a.left < b.left)
        }
    }

    /// Tokenizes escaped text, appending to `output`. A byte with no token (a vocabulary without byte fallback)
    /// becomes `unknown` when there is one; llama.cpp stops with an exception there.
    func encode(_ text: UnsafeBufferPointer<UInt8>, unknown: Int32?, into output: inout [Int32]) {
        guard !text.isEmpty else { return }
        var symbols = characterSymbols(text)
        mergeSymbols(&symbols) { symbols, left, right -> Bigram? in
            let start = Int(symbols[Int(left)].start)
            let size = Int(symbols[Int(left)].count + symbols[Int(right)].count)
            guard let token = vocabulary.value(UnsafeBufferPointer(rebasing: text[start..<start + size])) else {
                return nil
            }
            return Bigram(score: scores[Int(token)], left: left, right: right, size: Int32(size))
        }

        var i = 0
        while i != -1 {
            let symbol = symbols[i]
            let start = Int(symbol.start)
            let end = start + Int(symbol.count)
            if let token = vocabulary.value(UnsafeBufferPointer(rebasing: text[start..<end])) {
                output.append(token)
            } else {
                for k in start..<end {
                    let byteToken = byteTokens[Int(text[k])]
                    if byteToken >= 0 {
                        output.append(byteToken)
                    } else if let unknown {
                        output.append(unknown)
                    }
                }
            }
            i = Int(symbol.next)
        }
    }
}
