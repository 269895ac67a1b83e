/// Finds a machine-readable zone in OCR text and decodes it.
///
/// The text may hold anything around the zone. Lines are upper-cased, `«`-like marks become `<` and spaces are
/// dropped; consecutive MRZ-like lines are joined (so wrong line breaks do not matter) and every window of every
/// format's length is decoded. The best decode wins: one whose block has exactly the format's length, then a valid
/// one, then the one with the most checks holding.
public enum MRZReader {
    /// Characters OCR engines return for the `<` filler.
    static let fillerLookalikes: Set<Character> = ["«", "‹", "〈", "＜", "≪", "⟨"]

    /// Reads the zone in `text`. Two-digit years resolve against `reference` (today, normally).
    ///
    /// Throws when no MRZ-like text is found or none fits a format. A zone that fits a format but fails checks is
    /// returned with `isValid == false` and the failing checks named.
    public static func read(_ text: String, reference: CalendarDate) throws -> MRZResult {
        let blocks = candidateBlocks(text)
        guard !blocks.isEmpty else {
            throw OCRIngestError.noMRZFound("no line of the text looks like an MRZ line (A–Z, 0–9, '<')")
        }
        var best: (result: MRZResult, score: [Int])?
        for block in blocks {
            for format in MRZFormat.allCases {
                let (count, length) = format.shape
                let total = count * length
                guard block.count >= total else { continue }
                for start in 0...(block.count - total) where startsDocument(block[start], format: format) {
                    let lines = (0..<count).map { Array(block[(start + $0 * length)..<(start + ($0 + 1) * length)]) }
                    let result = MRZDecoder.decode(lines: lines, format: format, reference: reference)
                    // A block of exactly one format's length is read as that format first: a valid shorter window
                    // inside it (an MRV-B window in a damaged TD3 block) is another document's shape, not a repair.
                    let score = [
                        block.count == total ? 1 : 0, result.isValid ? 1 : 0,
                        result.checks.filter(\.passed).count - result.checks.count, -result.problems.count,
                        -result.repairs.count,
                    ]
                    if let current = best, !current.score.lexicographicallyPrecedes(score) { continue }
                    best = (result, score)
                }
            }
        }
        guard let best else {
            let lengths = blocks.map { String($0.count) }.joined(separator: ", ")
            throw OCRIngestError.mrzLayout(
                "found MRZ-like text of \(lengths) characters but no window of it starts a TD1 (90), TD2/MRV-B (72) "
                    + "or TD3/MRV-A (88) zone")
        }
        if !best.result.isValid, best.score[0] == 0 {
            // Nothing fits exactly and nothing valid was found: the zone lost or gained characters.
            let lengths = blocks.map { String($0.count) }.joined(separator: ", ")
            throw OCRIngestError.mrzLayout(
                "found MRZ-like text of \(lengths) characters; no window of it is a valid zone and none has a "
                    + "format's exact length (TD1 90, TD2/MRV-B 72, TD3/MRV-A 88): characters were dropped or added")
        }
        return best.result
    }

    /// Reads a zone whose lines are already separated (e.g. a document's stored MRZ).
    public static func read(lines: [String], reference: CalendarDate) throws -> MRZResult {
        try read(lines.joined(separator: "\n"), reference: reference)
    }

    private static func startsDocument(_ c: UInt8, format: MRZFormat) -> Bool {
        switch format {
        case .td3: return c == UInt8(ascii: "P")
        case .mrvA, .mrvB: return c == UInt8(ascii: "V")
        case .td1, .td2:
            return [UInt8(ascii: "I"), UInt8(ascii: "A"), UInt8(ascii: "C")].contains(
                MRZAlphabet.letterForDigit[c] ?? c)
        }
    }

    /// Runs of consecutive MRZ-like lines, each joined into one character stream. Blank lines do not break a run;
    /// short all-MRZ lines (a line broken in the wrong place) join the run they sit in or next to.
    static func candidateBlocks(_ text: String) -> [[UInt8]] {
        var blocks: [[UInt8]] = []
        var current: [UInt8] = []
        var pending: [UInt8] = []
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0.isNewline }) {
            if rawLine.allSatisfy(\.isWhitespace) { continue }
            switch classify(rawLine) {
            case .strong(let chars):
                current += pending + chars
                pending = []
            case .weak(let chars):
                pending += chars
            case .none:
                if !current.isEmpty {
                    blocks.append(current + pending)
                    current = []
                }
                pending = []
            }
        }
        if !current.isEmpty { blocks.append(current + pending) }
        return blocks
    }

    enum LineKind: Equatable {
        /// Clearly MRZ text: has a `<`, a `KKK` filler run, or is long and barely spaced.
        case strong([UInt8])
        /// Only MRZ characters, but nothing proves it is MRZ text.
        case weak([UInt8])
        case none
    }

    /// Whether a line looks like (part of) an MRZ line, and its MRZ characters.
    static func classify(_ line: Substring) -> LineKind {
        var runs: [[UInt8]] = [[]]
        var tokens = 0
        var inToken = false
        for ch in line {
            if ch.isWhitespace {
                inToken = false
                continue
            }
            if !inToken {
                tokens += 1
                inToken = true
            }
            let mapped: Character = fillerLookalikes.contains(ch) ? "<" : Character(ch.uppercased())
            if let ascii = mapped.asciiValue, MRZAlphabet.isMRZ(ascii) {
                runs[runs.count - 1].append(ascii)
            } else if !(runs.last?.isEmpty ?? true) {
                runs.append([])
            }
        }
        if runs.count == 1, let whole = runs.first, !whole.isEmpty {
            let hasFiller = whole.contains(MRZAlphabet.filler)
            let kRun = String(decoding: whole, as: UTF8.self).contains("KKK")
            if hasFiller || kRun || (whole.count >= 28 && tokens * 8 <= whole.count) { return .strong(whole) }
            return tokens <= 2 ? .weak(whole) : .none
        }
        // Text mixed in: keep the longest run if it clearly is MRZ text.
        guard let longest = runs.max(by: { $0.count < $1.count }), longest.count >= 10,
            longest.contains(MRZAlphabet.filler)
        else { return .none }
        return .strong(longest)
    }
}
