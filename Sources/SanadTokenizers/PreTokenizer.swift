/// Byte-level BPE pre-tokenizers: split text into words before merges, as llama.cpp's `unicode_regex_split` does for
/// a vocabulary's `tokenizer.ggml.pre`. Each regex is a hand-written scanner with the same result as llama.cpp on
/// every input (llama.cpp itself uses hand-written scanners for the common regexes and `std::regex` over a
/// "collapsed" text for the rest).
enum PreTokenizer: Sendable, Equatable {
    /// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)` (GPT-2).
    case gpt2
    /// `\p{N}` (every digit its own word) and then the GPT-2 regex: smollm, starcoder, refact, codeshell, …
    case digitsThenGPT2

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
