import SanadCore

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
    public static func read(_ text: String, reference: CivilDate) throws -> MRZResult {
        let blocks = candidateBlocks(text)
        guard !blocks.isEmpty else {
            throw OCRIngestError.noMRZFound("no line of the text looks like an MRZ line (A–Z, 0–9, '<')")
        }
        var best: (result: MRZResult, score: [Int])?
        var budget = Budget()
        for block in blocks where budget.decodes < Budget.maxDecodes {
            for variant in variants(block) {
                consider(variant, reference: reference, budget: &budget, best: &best)
            }
        }
        guard let best else {
            throw OCRIngestError.mrzLayout(
                "found MRZ-like text of \(describeLengths(blocks)) characters but no window of it starts a TD1 (90), "
                    + "TD2/MRV-B (72) or TD3/MRV-A (88) zone")
        }
        if !best.result.isValid, best.score[0] == 0 {
            // Nothing fits exactly and nothing valid was found: the zone lost or gained characters.
            throw OCRIngestError.mrzLayout(
                "found MRZ-like text of \(describeLengths(blocks)) characters; no window of it is a valid zone and "
                    + "none has a format's exact length (TD1 90, TD2/MRV-B 72, TD3/MRV-A 88): characters were "
                    + "dropped or added")
        }
        var result = best.result
        if budget.capped {
            result.notes.append(
                "the text holds more MRZ-like windows than are read (\(Budget.maxWindowsPerBlock) per block, "
                    + "\(Budget.maxDecodes) in all); the zone was chosen among those read")
        }
        return result
    }

    /// How much work one text may cost: windows decoded per block and in all, and the repair search per block.
    /// Without caps, megabytes of MRZ-like lines would decode (and repair-search) every window.
    struct Budget {
        static let maxWindowsPerBlock = 256
        static let maxDecodes = 4096
        /// Repair combinations one block may try in all (each decode spends what its search tried).
        static let maxRepairCombinationsPerBlock = 16_384
        var decodes = 0
        var capped = false
    }

    /// Decodes the windows of `block` that start a document, each format, and keeps the best in `best`: first the
    /// windows where the text's lines start (a zone's first line starts a line), then every other position (a zone
    /// whose line breaks OCR moved), until a cap is reached.
    private static func consider(
        _ block: Variant, reference: CivilDate, budget: inout Budget, best: inout (result: MRZResult, score: [Int])?
    ) {
        var windows = 0
        var repairBudget = Budget.maxRepairCombinationsPerBlock
        let characters = block.characters
        /// Decodes the windows at `start`; false once a cap is reached.
        func tryWindows(at start: Int) -> Bool {
            for format in MRZFormat.allCases where startsDocument(characters[start], format: format) {
                let (count, length) = format.shape
                guard characters.endIndex - start >= count * length else { continue }
                guard windows < Budget.maxWindowsPerBlock, budget.decodes < Budget.maxDecodes else {
                    budget.capped = true
                    return false
                }
                windows += 1
                budget.decodes += 1
                let lines = (0..<count).map {
                    Array(characters[(start + $0 * length)..<(start + ($0 + 1) * length)])
                }
                let result = MRZDecoder.decode(
                    lines: lines, format: format, reference: reference, repairBudget: &repairBudget)
                // A block of exactly one format's length is read as that format first: a valid shorter window
                // inside it (an MRV-B window in a damaged TD3 block) is another document's shape, not a repair.
                let score = [
                    characters.count == count * length ? 1 : 0, result.isValid ? 1 : 0,
                    result.checks.filter(\.passed).count - result.checks.count, -result.problems.count,
                    -result.repairs.count,
                ]
                if let current = best, !current.score.lexicographicallyPrecedes(score) { continue }
                best = (result, score)
            }
            return true
        }
        for start in block.lineStarts where !tryWindows(at: start) { return }
        let lineStarts = Set(block.lineStarts.prefix(Budget.maxWindowsPerBlock))
        for start in characters.indices where !lineStarts.contains(start) && !tryWindows(at: start) { return }
    }

    /// A block or its core: the characters and where the text's lines start in them.
    struct Variant {
        let characters: ArraySlice<UInt8>
        let lineStarts: [Int]
    }

    /// The block, and the block without the short unproven lines (`weak`: a heading such as `PASSPORT`) that
    /// joined it at its start or end: a heading directly above or below the zone must not change its length.
    private static func variants(_ block: CandidateBlock) -> [Variant] {
        let whole = Variant(characters: block.characters[...], lineStarts: block.lineStarts)
        guard block.core.count != block.characters.count else { return [whole] }
        let core = Variant(
            characters: block.characters[block.core], lineStarts: block.lineStarts.filter { block.core.contains($0) })
        return [whole, core]
    }

    /// The blocks' lengths for a message: the first eight, then how many more.
    private static func describeLengths(_ blocks: [CandidateBlock]) -> String {
        let shown = blocks.prefix(8).map { String($0.characters.count) }.joined(separator: ", ")
        return blocks.count > 8 ? "\(shown) and \(blocks.count - 8) more blocks of" : shown
    }

    /// Reads a zone whose lines are already separated (e.g. a document's stored MRZ).
    public static func read(lines: [String], reference: CivilDate) throws -> MRZResult {
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

    /// A run of MRZ-like lines joined into one character stream, and the part of it between the first and the
    /// last strong line (without the weak lines that joined it at either end).
    struct CandidateBlock: Equatable {
        var characters: [UInt8] = []
        var core: Range<Int> = 0..<0
        /// Where each joined line starts in `characters`.
        var lineStarts: [Int] = []
    }

    /// Runs of consecutive MRZ-like lines, each joined into one character stream. Blank lines do not break a run;
    /// short all-MRZ lines (a line broken in the wrong place) join the run they sit in or next to.
    static func candidateBlocks(_ text: String) -> [CandidateBlock] {
        var blocks: [CandidateBlock] = []
        var current = CandidateBlock()
        var coreStart: Int?
        var pending: [UInt8] = []
        func finish() {
            if coreStart != nil {
                if !pending.isEmpty { current.lineStarts.append(current.characters.count) }
                current.characters += pending
                blocks.append(current)
            }
            current = CandidateBlock()
            coreStart = nil
            pending = []
        }
        func add(_ kind: LineKind) {
            switch kind {
            case .strong(let chars):
                if !pending.isEmpty { current.lineStarts.append(current.characters.count) }
                current.characters += pending
                if coreStart == nil { coreStart = current.characters.count }
                current.lineStarts.append(current.characters.count)
                current.characters += chars
                current.core = (coreStart ?? 0)..<current.characters.count
                pending = []
            case .weak(let chars):
                pending += chars
            case .none:
                finish()
            }
        }
        // What a one-scalar character is, remembered for the characters a text repeats (Arabic letters).
        var known: [UInt32: LineUnit] = [:]
        func unit(_ ch: Character) -> LineUnit {
            let scalars = ch.unicodeScalars
            guard let scalar = scalars.first, scalars.index(after: scalars.startIndex) == scalars.endIndex else {
                return LineUnit(ch)
            }
            if let hit = known[scalar.value] { return hit }
            let made = LineUnit(ch)
            if known.count < 4096 { known[scalar.value] = made }
            return made
        }
        // Lines end at LF, VT, FF and CR (CR LF makes an empty line, which is skipped like any blank line). An ASCII
        // line is read as bytes; a line with other characters as characters, split at NEL, LS and PS too.
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for end in 0...bytes.count where end == bytes.count || (0x0A...0x0D).contains(bytes[end]) {
                let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
                start = end + 1
                if !line.contains(where: { $0 >= 0x80 }) {
                    let units = line.lazy.map(LineUnit.init(ascii:))
                    if !isNoise(units) { add(classify(units)) }
                    continue
                }
                let decoded = String(decoding: line, as: UTF8.self)
                for part in decoded.split(omittingEmptySubsequences: false, whereSeparator: { $0.isNewline }) {
                    let units = part.map(unit)
                    if !isNoise(units) { add(classify(units)) }
                }
            }
        }
        finish()
        return blocks
    }

    /// What line classification asks of a character: white space, a letter or digit, and its MRZ byte.
    struct LineUnit: Equatable {
        var isSpace: Bool
        var isLetterOrNumber: Bool
        /// The character upper-cased as one ASCII byte (`«`-like marks as `<`); nil for anything else.
        var upper: UInt8?

        init(_ ch: Character) {
            isSpace = ch.isWhitespace
            isLetterOrNumber = ch.isLetter || ch.isNumber
            upper = upperASCII(ch)
        }

        /// An ASCII byte of a line (no line break): the same as its character, without making one.
        init(ascii byte: UInt8) {
            isSpace = byte == 0x20 || (0x09...0x0D).contains(byte)
            let upper = byte >= 97 && byte <= 122 ? byte - 32 : byte
            isLetterOrNumber = (65...90).contains(upper) || (48...57).contains(upper)
            self.upper = upper
        }
    }

    /// Blank lines and OCR specks between the zone's lines (`.`, `,`, `~ -`: at most 4 marks, none a letter,
    /// digit or filler) do not break a run.
    static func isNoise(_ line: Substring) -> Bool { isNoise(line.lazy.map(LineUnit.init)) }

    private static func isNoise(_ line: some Sequence<LineUnit>) -> Bool {
        var marks = 0
        for unit in line where !unit.isSpace {
            if unit.isLetterOrNumber || unit.upper.map(MRZAlphabet.isMRZ) == true { return false }
            marks += 1
            if marks > 4 { return false }
        }
        return true
    }

    enum LineKind: Equatable {
        /// Clearly MRZ text: has a `<`, a `KKK` filler run, or is long and barely spaced.
        case strong([UInt8])
        /// Only MRZ characters, but nothing proves it is MRZ text.
        case weak([UInt8])
        case none
    }

    /// The character upper-cased as one ASCII byte (`«`-like marks as `<`); nil for anything else. ASCII takes no
    /// string allocation: megabytes of text go through here.
    private static func upperASCII(_ ch: Character) -> UInt8? {
        if let a = ch.asciiValue { return a >= 97 && a <= 122 ? a - 32 : a }
        if fillerLookalikes.contains(ch) { return MRZAlphabet.filler }
        // `ß` upper-cases to `SS`: more than one character is no MRZ byte (and no Character to make).
        let upper = ch.uppercased().utf8
        return upper.count == 1 ? upper.first : nil
    }

    /// Whether a line looks like (part of) an MRZ line, and its MRZ characters.
    static func classify(_ line: Substring) -> LineKind { classify(line.lazy.map(LineUnit.init)) }

    private static func classify(_ line: some Sequence<LineUnit>) -> LineKind {
        var runs: [[UInt8]] = [[]]
        var tokens = 0
        var inToken = false
        for unit in line {
            if unit.isSpace {
                inToken = false
                continue
            }
            if !inToken {
                tokens += 1
                inToken = true
            }
            if let ascii = unit.upper, MRZAlphabet.isMRZ(ascii) {
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
