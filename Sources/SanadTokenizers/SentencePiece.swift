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

    private struct Symbol {
        var start: Int32
        var count: Int32  // bytes; 0 once merged into the symbol on its left
        var prev: Int32
        var next: Int32
    }

    private struct Bigram: HeapElement {
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
        var symbols: [Symbol] = []
        symbols.reserveCapacity(text.count)
        var offset = 0
        while offset < text.count {
            let length = min(utf8SequenceLength(text[offset]), text.count - offset)
            let index = Int32(symbols.count)
            symbols.append(
                Symbol(
                    start: Int32(offset), count: Int32(length), prev: index - 1,
                    next: offset + length == text.count ? -1 : index + 1))
            offset += length
        }

        var queue = BinaryHeap<Bigram>()
        func addBigram(_ left: Int32, _ right: Int32) {
            guard left >= 0, right >= 0 else { return }
            let start = Int(symbols[Int(left)].start)
            let size = Int(symbols[Int(left)].count + symbols[Int(right)].count)
            guard let token = vocabulary.value(UnsafeBufferPointer(rebasing: text[start..<start + size])) else {
                return
            }
            queue.push(Bigram(score: scores[Int(token)], left: left, right: right, size: Int32(size)))
        }
        for i in 1..<symbols.count { addBigram(Int32(i - 1), Int32(i)) }

        while let bigram = queue.pop() {
            let l = Int(bigram.left)
            let r = Int(bigram.right)
            guard symbols[l].count > 0, symbols[r].count > 0, symbols[l].count + symbols[r].count == bigram.size
            else { continue }
            symbols[l].count += symbols[r].count
            symbols[r].count = 0
            symbols[l].next = symbols[r].next
            if symbols[r].next >= 0 { symbols[Int(symbols[r].next)].prev = bigram.left }
            addBigram(symbols[l].prev, bigram.left)
            addBigram(bigram.left, symbols[l].next)
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
