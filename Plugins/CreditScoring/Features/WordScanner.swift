/// FNV-1a (64-bit) over the normalised Unicode scalars of a word: how words are looked up in the lexicon without
/// building a String per word.
enum WordHash {
    static let offset: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    static func of(_ scalars: ArraySlice<UInt32>) -> UInt64 {
        var h = offset
        for s in scalars {
            h = (h ^ UInt64(s)) &* prime
        }
        return h
    }

    static func of(_ word: String) -> UInt64 {
        var scalars: [UInt32] = []
        for s in word.unicodeScalars {
            if let n = normalised(s.value) { scalars.append(n) }
        }
        return of(scalars[...])
    }

    /// The scalar as the lexicon stores it, or nil when it is not part of a word (diacritics and tatweel are
    /// dropped by returning 0, which callers skip).
    @inline(__always)
    static func normalised(_ s: UInt32) -> UInt32? {
        switch s {
        case 0x41...0x5A: return s + 32
        case 0x61...0x7A, 0x30...0x39, 0x27: return s
        case 0x2019: return 0x27
        case 0x0622, 0x0623, 0x0625: return 0x0627
        case 0x0629: return 0x0647
        case 0x0649: return 0x064A
        case 0x0621...0x064A: return s
        case 0x064B...0x0652, 0x0640: return 0
        default: return nil
        }
    }
}

/// Splits UTF-8 text into words and looks each up in the lexicon; Arabic words not listed as a whole are tried
/// once more without one common prefix (و، ف، ب، ل، ال، وال، بال، لل).
struct WordScanner {
    private var scalars: [UInt32] = []
    static let arabicPrefixes: [[UInt32]] = [
        [0x0648, 0x0627, 0x0644], [0x0628, 0x0627, 0x0644], [0x0644, 0x0644], [0x0627, 0x0644], [0x0648], [0x0641],
        [0x0628], [0x0644],
    ]

    init() { scalars.reserveCapacity(32) }

    /// Calls `body(categories, hash of the matched form)` for every word; returns the number of words.
    mutating func scan(_ text: String, _ body: (WordCategory, UInt64) -> Void) -> Int {
        var text = text
        return text.withUTF8 { scan(bytes: $0, body) }
    }

    mutating func scan(bytes: UnsafeBufferPointer<UInt8>, _ body: (WordCategory, UInt64) -> Void) -> Int {
        var words = 0
        var i = 0
        let n = bytes.count
        scalars.removeAll(keepingCapacity: true)
        while i <= n {
            var value: UInt32 = 0x20
            if i < n {
                let b0 = UInt32(bytes[i])
                if b0 < 0x80 {
                    value = b0
                    i += 1
                } else if b0 & 0xE0 == 0xC0, i + 1 < n {
                    value = (b0 & 0x1F) << 6 | UInt32(bytes[i + 1] & 0x3F)
                    i += 2
                } else if b0 & 0xF0 == 0xE0, i + 2 < n {
                    value = (b0 & 0x0F) << 12 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F)
                    i += 3
                } else {
                    i += b0 & 0xF8 == 0xF0 ? 4 : 1
                }
            } else {
                i += 1
            }
            if let normal = WordHash.normalised(value) {
                if normal != 0, scalars.count < 32 { scalars.append(normal) }
                continue
            }
            guard !scalars.isEmpty else { continue }
            words += 1
            lookUp(body)
            scalars.removeAll(keepingCapacity: true)
        }
        return words
    }

    private func lookUp(_ body: (WordCategory, UInt64) -> Void) {
        // A leading or trailing apostrophe is quoting, not part of the word.
        var word = scalars[...]
        while word.first == 0x27 { word = word.dropFirst() }
        while word.last == 0x27 { word = word.dropLast() }
        guard !word.isEmpty else { return }
        let hash = WordHash.of(word)
        if let categories = Lexicon.table[hash] {
            body(categories, hash)
            return
        }
        guard let first = word.first, first >= 0x0621 else { return }
        for prefix in Self.arabicPrefixes where word.count > prefix.count + 1 && word.starts(with: prefix) {
            let rest = WordHash.of(word.dropFirst(prefix.count))
            if let categories = Lexicon.table[rest] {
                body(categories, rest)
                return
            }
        }
    }
}
