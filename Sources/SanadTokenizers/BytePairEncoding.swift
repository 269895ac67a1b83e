/// Byte-level BPE (`tokenizer.ggml.model` = `gpt2`), as llama.cpp's `llm_tokenizer_bpe_session`:
/// pre-tokenize into words, map each word's bytes to GPT-2's byte alphabet, then repeatedly merge the adjacent pair
/// with the lowest merge rank (the leftmost among equals) until no pair of the word is in `tokenizer.ggml.merges`.
/// With `ignoreMerges` (Llama 3) a word that is a token as a whole is that token.
struct BytePairEncoding: Sendable {
    let preTokenizer: PreTokenizer
    let ignoreMerges: Bool
    /// Every token text (entry = token id), then every merge part or result that is not a token (entry ≥ token
    /// count), so that a symbol is named by one integer while it is merged.
    let strings: ByteStringTable
    let tokenCount: Int
    /// `(left << 32 | right)` → `(rank << 32 | merged)`, strings by their entry in `strings`.
    let merges: [UInt64: UInt64]

    /// Builds the merge table from `tokenizer.ggml.merges` ("left right", rank = position; the first of
    /// duplicates wins). `vocabulary` holds the token texts with their ids.
    init(
        preTokenizer: PreTokenizer, ignoreMerges: Bool = false, vocabulary: ByteStringTable, tokenCount: Int,
        merges mergeLines: [String]
    ) {
        self.preTokenizer = preTokenizer
        self.ignoreMerges = ignoreMerges
        self.tokenCount = tokenCount
        var strings = vocabulary
        var merges: [UInt64: UInt64] = [:]
        merges.reserveCapacity(mergeLines.count)
        for (rank, line) in mergeLines.enumerated() {
            let bytes = Array(line.utf8)
            // llama.cpp splits at the first space after the first byte; a line without one names no pair.
            guard bytes.count > 1, let space = bytes[1...].firstIndex(of: 0x20) else { continue }
            let left = Array(bytes[..<space])
            let right = Array(bytes[(space + 1)...])
            guard !right.isEmpty else { continue }  // symbols are never empty
            let next = Int32(strings.count)
            let l = strings.insertIfAbsent(left, value: next).value
            let r = strings.insertIfAbsent(right, value: Int32(strings.count)).value
            let m = strings.insertIfAbsent(left + right, value: Int32(strings.count)).value
            let key = UInt64(UInt32(l)) << 32 | UInt64(UInt32(r))
            if merges[key] == nil { merges[key] = UInt64(UInt32(rank)) << 32 | UInt64(UInt32(m)) }
        }
        self.strings = strings
        self.merges = merges
    }

    /// Tokenizes one fragment of raw text (no special tokens inside), appending to `output`. `cache` maps a word's
    /// raw bytes to its tokens and may be shared across fragments of one call.
    func encode(_ text: UnsafeBufferPointer<UInt8>, into output: inout [Int32], cache: inout [[UInt8]: [Int32]]) {
        let codepoints = llamaCodepoints(text)
        let ends = preTokenizer.wordEnds(codepoints)
        var start = 0
        var word: [UInt8] = []
        var mapped: [UInt8] = []
        for end in ends {
            word.removeAll(keepingCapacity: true)
            for i in start..<end { appendUTF8(codepoints[i], to: &word) }
            start = end
            if let tokens = cache[word] {
                output.append(contentsOf: tokens)
                continue
            }
            mapped.removeAll(keepingCapacity: true)
            ByteLevelMapping.encode(word, into: &mapped)
            let tokens = mapped.withUnsafeBufferPointer { word in
                if ignoreMerges, let id = strings.value(word), Int(id) < tokenCount { return [id] }
                return mergeWord(word)
            }
            cache[word] = tokens
            output.append(contentsOf: tokens)
        }
    }

    private struct Bigram: MergeCandidate {
        var rank: Int32
        var left: Int32
        var right: Int32
        var size: Int32
        var merged: Int32
        @inline(__always)
        static func precedes(_ a: Bigram, _ b: Bigram) -> Bool {
            a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
        }
    }

    /// Merges one byte-mapped word and returns its tokens.
    private func mergeWord(_ word: UnsafeBufferPointer<UInt8>) -> [Int32] {
        var symbols = characterSymbols(word) { strings.value($0) ?? -1 }
        mergeSymbols(&symbols) { symbols, left, right -> Bigram? in
            let l = symbols[Int(left)].string
            let r = symbols[Int(right)].string
            guard l >= 0, r >= 0, let merge = merges[UInt64(UInt32(l)) << 32 | UInt64(UInt32(r))] else { return nil }
            return Bigram(
                rank: Int32(truncatingIfNeeded: merge >> 32), left: left, right: right,
                size: symbols[Int(left)].count + symbols[Int(right)].count,
                merged: Int32(truncatingIfNeeded: merge & 0xFFFF_FFFF))
        } apply: { symbol, bigram in
            symbol.string = bigram.merged
        }

        var tokens: [Int32] = []
        for symbol in symbols where symbol.count > 0 {
            if symbol.string >= 0 && Int(symbol.string) < tokenCount {
                tokens.append(symbol.string)
                continue
            }
            // Not a token: each byte alone, where a byte is a token (llama.cpp drops the others).
            for i in Int(symbol.start)..<Int(symbol.start + symbol.count) {
                let single = UnsafeBufferPointer(rebasing: word[i..<i + 1])
                if let id = strings.value(single), Int(id) < tokenCount { tokens.append(id) }
            }
        }
        return tokens
    }
}
