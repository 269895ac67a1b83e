/// Byte-level BPE pre-tokenizers: split text into words before merges, as llama.cpp's `unicode_regex_split` does for
/// a vocabulary's `tokenizer.ggml.pre`. Each regex is a hand-written scanner with the same result as llama.cpp on
/// every input (llama.cpp itself uses hand-written scanners for the common regexes and `std::regex` over a
/// "collapsed" text for the rest).
enum PreTokenizer: Sendable, Equatable {
    /// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)` (GPT-2).
    case gpt2
    /// `\p{N}` (every digit its own word) and then the GPT-2 regex: smollm, starcoder, refact, codeshell, …
    case digitsThenGPT2
    /// Llama 3's `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|
    /// \s+(?!\S)|\s+` (llama-bpe, llama3, falcon3, …), as llama.cpp's `unicode_regex_split_custom_llama3` scans it.
    case llama3
    /// Qwen2's regex, Llama 3's with `\p{N}` for `\p{N}{1,3}` (every digit its own word): qwen2, deepseek-r1-qwen,
    /// … (llama.cpp's `unicode_regex_split_custom_qwen2`).
    case qwen2

    /// Splits `codepoints` into words; returns each word's end index (exclusive), in order.
    func wordEnds(_ codepoints: [UInt32]) -> [Int] {
        var ends: [Int] = []
        ends.reserveCapacity(codepoints.count / 3 + 1)
        switch self {
        case .gpt2:
            splitGPT2(codepoints, 0, codepoints.count, into: &ends)
        case .digitsThenGPT2:
            // Pass 1, `\p{N}`: every number code point alone, the runs between them as they are.
            var start = 0
            var i = 0
            while i < codepoints.count {
                if CodepointClass.of(codepoints[i]).isNumber {
                    if i > start { splitGPT2(codepoints, start, i, into: &ends) }
                    ends.append(i + 1)
                    start = i + 1
                }
                i += 1
            }
            if start < codepoints.count { splitGPT2(codepoints, start, codepoints.count, into: &ends) }
        case .llama3:
            splitLlama3(codepoints, 0, codepoints.count, digits: 3, into: &ends)
        case .qwen2:
            splitLlama3(codepoints, 0, codepoints.count, digits: 1, into: &ends)
        }
        return ends
    }
}

/// The GPT-2 regex `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+` over
/// `cps[lo..<hi]`; appends each word's end. Positions outside `lo..<hi` look like nothing (not a letter, digit,
/// space or other), so a word never crosses the range.
func splitGPT2(_ cps: [UInt32], _ lo: Int, _ hi: Int, into ends: inout [Int]) {
    @inline(__always) func cls(_ p: Int) -> CodepointClass {
        p >= lo && p < hi ? CodepointClass.of(cps[p]) : .outside
    }
    let apostrophe: UInt32 = 0x27
    let space: UInt32 = 0x20
    var pos = lo
    while pos < hi {
        let c = cps[pos]
        // 's 't 'm 'd 're 've 'll (lower case only)
        if c == apostrophe && pos + 1 < hi {
            let n1 = cps[pos + 1]
            if n1 == 0x73 || n1 == 0x74 || n1 == 0x6D || n1 == 0x64 {  // s t m d
                pos += 2
                ends.append(pos)
                continue
            }
            if pos + 2 < hi {
                let n2 = cps[pos + 2]
                if (n1 == 0x72 && n2 == 0x65) || (n1 == 0x76 && n2 == 0x65) || (n1 == 0x6C && n2 == 0x6C) {  // re ve ll
                    pos += 3
                    ends.append(pos)
                    continue
                }
            }
        }
        // An optional leading space, then a run of one class.
        let lead = c == space ? cls(pos + 1) : cls(pos)
        if lead.isLetter || lead.isNumber || (lead.exists && !lead.isWhitespace) {
            if c == space { pos += 1 }
            if lead.isLetter {
                repeat { pos += 1 } while cls(pos).isLetter
            } else if lead.isNumber {
                repeat { pos += 1 } while cls(pos).isNumber
            } else {
                var k: CodepointClass
                repeat {
                    pos += 1
                    k = cls(pos)
                } while k.exists && !k.isWhitespace && !k.isLetter && !k.isNumber
            }
            ends.append(pos)
            continue
        }
        // Whitespace: `\s+(?!\S)` leaves the last space to the word that follows; `\s+` takes the rest.
        var count = 0
        while cls(pos + count).isWhitespace { count += 1 }
        if count > 1 && pos + count < hi {
            pos += count - 1
        } else if count > 0 {
            pos += count
        } else {
            pos += 1  // nothing matched: one code point alone
        }
        ends.append(pos)
    }
}

/// Llama 3's regex over `cps[lo..<hi]` with numbers of up to `digits` digits (3: `\p{N}{1,3}`; 1: Qwen2's
/// `\p{N}`), step for step as llama.cpp's `unicode_regex_split_custom_llama3` and `_qwen2`; appends each word's
/// end. Positions outside the range look like nothing, as in `splitGPT2`.
func splitLlama3(_ cps: [UInt32], _ lo: Int, _ hi: Int, digits: Int, into ends: inout [Int]) {
    @inline(__always) func cls(_ p: Int) -> CodepointClass {
        p >= lo && p < hi ? CodepointClass.of(cps[p]) : .outside
    }
    @inline(__always) func cpt(_ p: Int) -> UInt32 { p >= lo && p < hi ? cps[p] : 0xFFFF_FFFF }
    /// ASCII lower case: no other code point lowers to the letters of the contractions.
    @inline(__always) func lower(_ c: UInt32) -> UInt32 { (0x41...0x5A).contains(c) ? c + 0x20 : c }
    let (cr, lf): (UInt32, UInt32) = (0x0D, 0x0A)
    var pos = lo
    while pos < hi {
        let c = cps[pos]
        let flags = cls(pos)
        // (?i:'s|'t|'re|'ve|'m|'ll|'d)
        if c == 0x27 && pos + 1 < hi {
            let n1 = lower(cps[pos + 1])
            if n1 == 0x73 || n1 == 0x74 || n1 == 0x6D || n1 == 0x64 {  // s t m d
                pos += 2
                ends.append(pos)
                continue
            }
            if pos + 2 < hi {
                let n2 = lower(cps[pos + 2])
                if (n1 == 0x72 && n2 == 0x65) || (n1 == 0x76 && n2 == 0x65) || (n1 == 0x6C && n2 == 0x6C) {  // re ve ll
                    pos += 3
                    ends.append(pos)
                    continue
                }
            }
        }
        // [^\r\n\p{L}\p{N}]?\p{L}+
        if !(c == cr || c == lf || flags.isNumber) && (flags.isLetter || cls(pos + 1).isLetter) {
            pos += 1
            while cls(pos).isLetter { pos += 1 }
            ends.append(pos)
            continue
        }
        // \p{N}{1,3} (\p{N})
        if flags.isNumber {
            var first = pos
            while cls(pos).isNumber {
                pos += 1
                if pos - first >= digits {
                    ends.append(pos)
                    first = pos
                }
            }
            if pos > first { ends.append(pos) }
            continue
        }
        // <space>?[^\s\p{L}\p{N}]+[\r\n]*
        var next = c == 0x20 ? cls(pos + 1) : flags
        if !(next.isWhitespace || next.isLetter || next.isNumber) && flags.exists {
            if c == 0x20 { pos += 1 }
            while !(next.isWhitespace || next.isLetter || next.isNumber) && next.exists {
                pos += 1
                next = cls(pos)
            }
            while cpt(pos) == cr || cpt(pos) == lf { pos += 1 }
            ends.append(pos)
            continue
        }
        var spaces = 0
        var lastLineEnd = 0
        while cls(pos + spaces).isWhitespace {
            let c2 = cps[pos + spaces]
            if c2 == cr || c2 == lf { lastLineEnd = pos + spaces + 1 }
            spaces += 1
        }
        if lastLineEnd > 0 {
            pos = lastLineEnd  // \s*[\r\n]+
        } else if spaces > 1 && pos + spaces < hi {
            pos += spaces - 1  // \s+(?!\S)
        } else if spaces > 0 {
            pos += spaces  // \s+
        } else {
            pos += 1  // nothing matched: one code point alone
        }
        ends.append(pos)
    }
}

/// GPT-2's reversible byte ↔ code point mapping: printable Latin-1 bytes stand for themselves, the other 68 bytes
/// map to U+0100 and up, in byte order.
enum ByteLevelMapping {
    /// UTF-8 of the code point that stands for each byte.
    static let encoded: [[UInt8]] = {
        var table = [[UInt8]](repeating: [], count: 256)
        var next: UInt32 = 256
        for b in 0..<256 {
            let keeps = (0x21...0x7E).contains(b) || (0xA1...0xAC).contains(b) || (0xAE...0xFF).contains(b)
            let cp: UInt32
            if keeps {
                cp = UInt32(b)
            } else {
                cp = next
                next += 1
            }
            var utf8: [UInt8] = []
            appendUTF8(cp, to: &utf8)
            table[b] = utf8
        }
        return table
    }()

    /// The byte a code point stands for, or nil when it stands for none (indexed by code point, U+0000…U+0143).
    static let decoded: [Int16] = {
        var table = [Int16](repeating: -1, count: 0x144)
        for b in 0..<256 {
            let cps = encoded[b].withUnsafeBufferPointer { llamaCodepoints($0) }
            table[Int(cps[0])] = Int16(b)
        }
        return table
    }()

    /// Appends the mapped form of `bytes`.
    @inline(__always)
    static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        for b in bytes { out.append(contentsOf: encoded[Int(b)]) }
    }
}
